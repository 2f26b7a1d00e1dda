"""The archive tier on a PostgreSQL server: the server mode's archive, which any number of processes share.

The statements are stores.archive_sql's, the same the embedded DuckDB archive runs. What the server changes is
in the connection (stores.pg_connection: write stamps as rows, migrations under an advisory lock, bounded
waits named as ``StoreUnavailable``) and in the few places that assumed one writer (``_db.shared``).
"""

from __future__ import annotations

from .archive_sql import SqlArchive
from .pg_connection import PostgresConnection

TIER = "archive"


class PostgresArchive(SqlArchive):
    """``ArchiveStore`` on the PostgreSQL database ``uri`` (``settings.database_url``); ``timeout`` bounds
    taking a connection and each statement (seconds)."""

    backend = "postgres"

    def __init__(self, uri: str, *, timeout: float = 10.0, pool_size: int = 4):
        db = PostgresConnection(uri, TIER, timeout=timeout, pool_size=pool_size)
        self.database, self.data_dir = uri, db.data_dir
        try:
            self._open_tables(db)
        except BaseException:
            db.close()
            raise
