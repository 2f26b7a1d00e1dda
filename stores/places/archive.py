"""The archive's user tables as UserDataPlaces: every DuckDB table with a ``user_id`` column.

Tables are found in the database's catalogue, not listed here, so a table another capability adds to
the archive (the derivation outbox, lifecycle state, ...) is erased, backed up and scanned with the rest.
The audit table is the one exception: it is append-only and has its own place (stores.audit).
Exports are uncompressed Parquet, so a backup's text is readable to the residue scan.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import duckdb

from ..duckdb_connection import GuardedConnection
from ..ids import AUDIT_TABLE, validate_id

USER_COLUMN = "user_id"
_PARQUET = "(FORMAT parquet, COMPRESSION uncompressed)"


class FileRewriter:
    """Rewrites one DuckDB file once after any number of erasures in it (several places share a file)."""

    def __init__(self, db: GuardedConnection):
        self.db = db
        self.dirty = False

    def scrub(self) -> None:
        if self.dirty:
            self.db.rewrite()
            self.dirty = False


def user_tables(db: GuardedConnection) -> list[str]:
    with db.read() as con:
        rows = con.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = ? "
            "AND table_schema = 'main' ORDER BY table_name",
            [USER_COLUMN],
        ).fetchall()
    return [r[0] for r in rows if r[0] != AUDIT_TABLE]


def _ident(name: str) -> str:
    # Table names come from the catalogue; quoting keeps any of them a single identifier.
    return '"' + name.replace('"', '""') + '"'


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


def _literal(path: Path) -> str:
    # COPY ... TO takes a literal, not a parameter; our own temp paths only, quotes doubled anyway.
    return str(path).replace("'", "''")


class DuckDBTablePlace:
    """One table of a DuckDB file (the archive's turns, segments, outbox...)."""

    def __init__(self, prefix: str, db: GuardedConnection, table: str, rewriter: FileRewriter):
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
        if n:
            self.rewriter.dirty = True
        return int(n)

    def scrub(self) -> None:
        self.rewriter.scrub()

    def raw_paths(self) -> list[Path]:
        if self.db.database == ":memory:":
            return []
        return [Path(self.db.database), Path(self.db.database + ".wal")]

    def _file(self, folder: Path) -> Path:
        return folder / f"{self.table}.parquet"

    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        out = self._file(dest)
        with self.db.read() as con:
            con.execute(f"COPY (SELECT * FROM {_ident(self.table)}) TO '{_literal(out)}' {_PARQUET}")
            (n,) = con.execute(f"SELECT count(*) FROM {_ident(self.table)}").fetchone()
        os.chmod(out, 0o600)
        return int(n)

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        path = self._file(src)
        if not path.exists():
            return 0
        with self.db.read() as con:
            users = [r[0] for r in con.execute(f"SELECT DISTINCT {USER_COLUMN} FROM read_parquet(?)", [str(path)]).fetchall()]
        kept = [u for u in users if not is_erased(u)]
        if not kept:
            return 0
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


def archive_places(db: GuardedConnection, on_restore: Callable[[], None]) -> list[DuckDBTablePlace]:
    """A place per user table of the archive and the audit log's (``DuckDBArchive.user_data_places``): ``db`` is
    the archive's one connection, whose lock serialises us with it; ``on_restore`` runs after rows are restored
    (the archive forgets the turns it found missing, which restored rows must not be answered from)."""
    rewriter = FileRewriter(db)
    from ..audit import AuditPlace

    places: list = [DuckDBTablePlace("archive", db, t, rewriter) for t in user_tables(db)]
    for place in places:
        place.on_restore = on_restore
    return [*places, AuditPlace(db, rewriter)]
