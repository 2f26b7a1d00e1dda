"""The archive's user tables as UserDataPlaces: every table with a ``user_id`` column, in a DuckDB file or on
PostgreSQL.

Tables are found in the database's catalogue, not listed here, so a table another capability adds to
the archive (the derivation outbox, lifecycle state, ...) is erased, backed up and scanned with the rest. A
server's database also holds other tiers' tables (vectors, graph, journal, LangGraph items), which have places of
their own: there the archive's are those an embedded archive's catalogue has (``archive_sql.archive_table_names``).
The audit table is the one exception: it is append-only and has its own place (stores.audit).
Exports are uncompressed Parquet, so a backup's text is readable to the residue scan, and one format for
both engines (stores.places.parquet_rows): a snapshot of either restores into either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import duckdb

from ..ids import AUDIT_TABLE, validate_id
from ..sql_connection import SqlConnection
from .parquet_rows import PARQUET as _PARQUET, export_table, ident as _ident, insert_rows, literal as _literal, parquet_rows

USER_COLUMN = "user_id"


class FileRewriter:
    """Rewrites the archive's storage once after any number of erasures in it (several places share it): a DuckDB
    file is copied whole into a fresh one; on PostgreSQL the tables erased from are rewritten (VACUUM FULL; see
    ``PostgresConnection.rewrite`` for what that does not reach: WAL segments, replicas, the server's backups)."""

    def __init__(self, db: SqlConnection):
        self.db = db
        self.tables: set[str] = set()
        self.users: set[str] = set()

    @property
    def dirty(self) -> bool:
        return bool(self.tables)

    def mark(self, table: str, user_id: str | None = None) -> None:
        """Rows of ``table`` (of ``user_id``) were deleted or blanked: their bytes must leave the storage at the
        next scrub."""
        self.tables.add(table)
        if user_id is not None:
            self.users.add(user_id)

    def scrub(self) -> None:
        if not self.tables:
            return
        if self.db.dialect == "postgres":
            tables = set(self.tables)
            if self.users:
                # The connection's write stamps are rows keyed by user id (pg_connection.VERSIONS_TABLE): an
                # erased user's row goes too, once every place has erased (a stamp comes from a sequence, so a
                # later row for the id never repeats a value a cache holds).
                from ..pg_connection import VERSIONS_TABLE

                with self.db.tx() as con:
                    con.execute(f"DELETE FROM {VERSIONS_TABLE} WHERE key IN (SELECT unnest(?::VARCHAR[]))",
                                [sorted(self.users)])
                tables.add(VERSIONS_TABLE)
            self.db.rewrite(sorted(tables))
        else:
            self.db.rewrite()
        self.tables.clear()
        self.users.clear()


def user_tables(db: SqlConnection, mine: frozenset[str] | None = None) -> list[str]:
    """The tables of ``db`` with a user column, the audit log's aside; ``mine``: only these (in a server
    database other tiers keep user tables of their own)."""
    with db.read() as con:
        rows = con.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = ? "
            "AND table_schema = current_schema() ORDER BY table_name",
            [USER_COLUMN],
        ).fetchall()
    return [r[0] for r in rows if r[0] != AUDIT_TABLE and (mine is None or r[0] in mine)]


def filter_parquet(path: Path, user_id: str) -> int:
    """Rewrite a Parquet export without the user's rows; returns the rows removed."""
    if not path.exists():
        return 0
    con = duckdb.connect()
    try:
        (n,) = con.execute(f"SELECT count(*) FROM read_parquet(?) WHERE {USER_COLUMN} = ?", [str(path), user_id]).fetchone()
        if n:
            tmp = path.with_name(path.name + ".tmp")
            con.execute(
                f"COPY (SELECT * FROM read_parquet(?) WHERE {USER_COLUMN} <> ?) TO '{_literal(tmp)}' {_PARQUET}",
                [str(path), user_id],
            )
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
    finally:
        con.close()
    return int(n)


class DuckDBTablePlace:
    """One table of the archive (turns, segments, outbox...), in its DuckDB file or on PostgreSQL."""

    def __init__(self, prefix: str, db: SqlConnection, table: str, rewriter: FileRewriter):
        self.name = f"{prefix}.{table}"
        self.db, self.table, self.rewriter = db, table, rewriter
        self.on_restore: Callable[[], None] | None = None

    def count(self, user_id: str) -> int:
        validate_id(user_id, "user_id")
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {_ident(self.table)} WHERE {USER_COLUMN} = ?", [user_id]).fetchone()
        return int(n)

    def erase(self, user_id: str) -> int:
        validate_id(user_id, "user_id")
        with self.db.tx(touches=(user_id,)) as con:
            (n,) = con.execute(f"SELECT count(*) FROM {_ident(self.table)} WHERE {USER_COLUMN} = ?", [user_id]).fetchone()
            con.execute(f"DELETE FROM {_ident(self.table)} WHERE {USER_COLUMN} = ?", [user_id])
        # On PostgreSQL a table also keeps the dead tuples of this user's rows that the pipeline deleted before
        # (finished outbox entries, replaced rows) until it is rewritten: every table is rewritten, not only
        # those holding rows now. A DuckDB file is copied whole anyway.
        if n or self.db.dialect == "postgres":
            self.rewriter.mark(self.table, user_id)
        return int(n)

    def scrub(self) -> None:
        self.rewriter.scrub()

    def raw_paths(self) -> list[Path]:
        """The DuckDB file and its WAL; none on a server (its files are the server's, not this host's)."""
        if self.db.database == ":memory:" or self.db.dialect != "duckdb":
            return []
        return [Path(self.db.database), Path(self.db.database + ".wal")]

    def _file(self, folder: Path) -> Path:
        return folder / f"{self.table}.parquet"

    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        return export_table(self.db, self.table, self._file(dest))

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        path = self._file(src)
        if not path.exists():
            return 0
        _, users = parquet_rows(path, columns=f"DISTINCT {USER_COLUMN}")
        kept = [u for (u,) in users if not is_erased(u)]
        if not kept:
            return 0
        if self.db.dialect != "duckdb":
            names, rows = parquet_rows(path, f"WHERE {USER_COLUMN} IN (SELECT unnest(?::VARCHAR[]))", [kept])
            with self.db.tx(touches=kept) as con:
                n = insert_rows(con, self.table, names, rows)
            if self.on_restore is not None:
                self.on_restore()
            return n
        with self.db.tx(touches=kept) as con:
            select = f"SELECT * FROM read_parquet(?) WHERE {USER_COLUMN} IN (SELECT unnest(?::VARCHAR[]))"
            (n,) = con.execute(f"SELECT count(*) FROM ({select})", [str(path), kept]).fetchone()
            # BY NAME: a backup taken before a column was added (knowledge_items.tiers_synced) restores with the
            # column's default instead of failing on the column count.
            # OR REPLACE needs a key: tables without one (an outbox) take the rows as they are.
            (keyed,) = con.execute(
                "SELECT count(*) FROM duckdb_constraints() WHERE table_name = ? "
                "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')", [self.table]).fetchone()
            verb = "INSERT OR REPLACE" if keyed else "INSERT"
            con.execute(f"{verb} INTO {_ident(self.table)} BY NAME {select}", [str(path), kept])
        if self.on_restore is not None:
            self.on_restore()
        return int(n)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return filter_parquet(self._file(src), user_id)


def archive_places(db: SqlConnection, on_restore: Callable[[], None],
                   mine: frozenset[str] | None = None) -> list[DuckDBTablePlace]:
    """A place per user table of the archive and the audit log's (``SqlArchive.user_data_places``): ``db`` is
    the archive's one connection, whose lock serialises us with it; ``on_restore`` runs after rows are restored
    (the archive forgets the turns it found missing, which restored rows must not be answered from); ``mine``:
    the archive's own tables where the database holds other tiers' too (see ``user_tables``)."""
    rewriter = FileRewriter(db)
    from ..audit import AuditPlace

    places: list = [DuckDBTablePlace("archive", db, t, rewriter) for t in user_tables(db, mine)]
    for place in places:
        place.on_restore = on_restore
    return [*places, AuditPlace(db, rewriter)]
