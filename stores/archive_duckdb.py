"""The archive tier on an embedded DuckDB file (the default: one process, one data dir).

Durability: each write is one explicit transaction; DuckDB appends it to ``archive.duckdb.wal`` and
fdatasyncs that file on COMMIT, so a write that returned survives a crash. CHECKPOINT (folding the
WAL into the main file) is left to DuckDB's automatic threshold and ``close()``, except after
``delete_user``: erasure checkpoints at once so the erased rows leave the WAL promptly.

The statements are stores.archive_sql's, shared with the PostgreSQL archive (stores.archive_postgres).
"""

from __future__ import annotations

import os

from .archive_schema import ARCHIVE_FILENAME, MEMORY, _resolve  # noqa: F401 - tests read ARCHIVE_FILENAME here
from .archive_sql import SqlArchive
from .duckdb_connection import GuardedConnection


class DuckDBArchive(SqlArchive):
    """``ArchiveStore`` on DuckDB. One connection, serialised by a lock (DuckDB connections are
    not safe for concurrent use, and LangGraph may run nodes in a thread pool)."""

    backend = "duckdb"

    def __init__(self, location: str | os.PathLike[str] = MEMORY):
        self.database, self.data_dir = _resolve(location)
        self._open_tables(GuardedConnection(self.database, self.data_dir, "archive", ()))
