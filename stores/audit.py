"""The audit log: append-only and hash-chained, in the archive's ``session_log`` table (L11).

Each row holds the hash of the row before it, so editing or deleting a row breaks the chain from there
on (``verify`` finds it). A row records what was done (erasure, restore, backup, settings change), when
and by whom, never content; users appear only as keyed hashes (``user_ref``), so an erased user's id is
not kept in clear here either.

The table predates the chain: ``session_log`` rows written by ``DuckDBArchive.append_audit`` (a clear
``user_id``, no hash) are sealed into the chain on the next append or verify: their user becomes a keyed
hash in ``user_ref`` and they get their link. Erasure blanks the clear ``user_id`` of such rows; the chain
covers ``user_ref``, not ``user_id``, so that redaction leaves it intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import duckdb

from .duckdb_connection import GuardedConnection
from .errors import InvalidInput
from .ids import AUDIT_TABLE
from .secret import keyed_hash

GENESIS = "0" * 64
_ADDED = ("actor", "user_ref", "prev_hash", "hash")
_CHAINED = ("seq", "at", "event", "actor", "user_ref", "detail")
_PARQUET = "(FORMAT parquet, COMPRESSION uncompressed)"


def row_hash(prev: str, row: dict[str, Any]) -> str:
    body = json.dumps([prev, *[row[c] for c in _CHAINED]], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _migrate(db: GuardedConnection) -> None:
    with db.tx() as con:
        for column in _ADDED:
            con.execute(f"ALTER TABLE {AUDIT_TABLE} ADD COLUMN IF NOT EXISTS {column} VARCHAR DEFAULT ''")


class AuditLog:
    def __init__(self, archive, key: bytes):
        """``archive``: a DuckDBArchive (the log lives in its file); ``key``: the data dir's secret."""
        self.db: GuardedConnection = archive._db  # the archive's one connection and lock
        self.key = key
        _migrate(self.db)

    def _seal(self, con: duckdb.DuckDBPyConnection) -> str:
        """Chain rows that have no hash yet (written before the chain, or by append_audit); the last hash."""
        last = con.execute(f"SELECT hash FROM {AUDIT_TABLE} WHERE hash <> '' ORDER BY seq DESC LIMIT 1").fetchone()
        prev = last[0] if last else GENESIS
        rows = con.execute(
            f'SELECT seq, "at", event, actor, user_ref, detail, user_id FROM {AUDIT_TABLE} WHERE hash = \'\' ORDER BY seq'
        ).fetchall()
        for seq, at, event, actor, user_ref, detail, user_id in rows:
            if not user_ref and user_id:
                user_ref = keyed_hash(self.key, user_id)
            row = {"seq": seq, "at": at, "event": event, "actor": actor or "", "user_ref": user_ref, "detail": detail}
            digest = row_hash(prev, row)
            con.execute(
                f"UPDATE {AUDIT_TABLE} SET user_ref = ?, actor = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                [user_ref, row["actor"], prev, digest, seq],
            )
            prev = digest
        return prev

    def append(self, event: str, actor: str, user_id: str | None = None, detail: str = "") -> dict[str, Any]:
        """Record an event; ``detail`` must carry no content (counts, names of places, locations)."""
        if not event:
            raise InvalidInput("event", "must be a non-empty string")
        if not actor:
            raise InvalidInput("actor", "must say who did it (a user name, 'cli', 'maintenance')")
        user_ref = keyed_hash(self.key, user_id) if user_id else ""
        with self.db.tx() as con:
            prev = self._seal(con)
            (seq,) = con.execute(f"SELECT nextval('{AUDIT_TABLE}_seq')").fetchone()
            row = {"seq": int(seq), "at": time.time(), "event": event, "actor": actor, "user_ref": user_ref,
                   "detail": detail}
            digest = row_hash(prev, row)
            con.execute(
                f'INSERT INTO {AUDIT_TABLE} (seq, "at", event, user_id, detail, actor, user_ref, prev_hash, hash) '
                "VALUES (?, ?, ?, '', ?, ?, ?, ?, ?)",
                [row["seq"], row["at"], event, detail, actor, user_ref, prev, digest],
            )
        return {**row, "prev_hash": prev, "hash": digest}

    def rows(self) -> list[dict[str, Any]]:
        with self.db.tx() as con:
            self._seal(con)
            rows = con.execute(
                f'SELECT seq, "at", event, actor, user_ref, detail, prev_hash, hash FROM {AUDIT_TABLE} ORDER BY seq'
            ).fetchall()
        names = ("seq", "at", "event", "actor", "user_ref", "detail", "prev_hash", "hash")
        return [dict(zip(names, r)) for r in rows]

    def verify(self) -> dict[str, Any]:
        """{'ok', 'rows', 'broken_at' (first seq whose link or hash does not match), 'problem'}."""
        rows = self.rows()
        prev = GENESIS
        for row in rows:
            if row["prev_hash"] != prev:
                return {"ok": False, "rows": len(rows), "broken_at": row["seq"], "problem": "link to the previous row changed (a row was removed or edited)"}
            if row_hash(prev, row) != row["hash"]:
                return {"ok": False, "rows": len(rows), "broken_at": row["seq"], "problem": "row content changed"}
            prev = row["hash"]
        return {"ok": True, "rows": len(rows), "broken_at": None, "problem": ""}

    def ref(self, user_id: str) -> str:
        return keyed_hash(self.key, user_id)


class AuditPlace:
    """The audit table's clear user ids (rows appended by DuckDBArchive.append_audit) as a place: erasure
    blanks them (rows stay: the log is append-only); a backup carries the whole log."""

    name = "archive.session_log"

    def __init__(self, archive, rewriter):
        self.db: GuardedConnection = archive._db
        self.rewriter = rewriter
        _migrate(self.db)

    def count(self, user_id: str) -> int:
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {AUDIT_TABLE} WHERE user_id = ?", [user_id]).fetchone()
        return int(n)

    def erase(self, user_id: str) -> int:
        n = self.count(user_id)
        if n:
            with self.db.tx() as con:
                con.execute(f"UPDATE {AUDIT_TABLE} SET user_id = '' WHERE user_id = ?", [user_id])
            self.rewriter.dirty = True
        return n

    def scrub(self) -> None:
        self.rewriter.scrub()

    def raw_paths(self) -> list[Path]:
        return [] if self.db.database == ":memory:" else [Path(self.db.database), Path(self.db.database + ".wal")]

    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / f"{AUDIT_TABLE}.parquet"
        with self.db.read() as con:
            con.execute(f"COPY (SELECT * FROM {AUDIT_TABLE} ORDER BY seq) TO '{_quote(out)}' {_PARQUET}")
            (n,) = con.execute(f"SELECT count(*) FROM {AUDIT_TABLE}").fetchone()
        os.chmod(out, 0o600)
        return int(n)

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        """Into an empty log only (a log with rows of its own keeps its chain; the restore is recorded in it)."""
        path = src / f"{AUDIT_TABLE}.parquet"
        if not path.exists():
            return 0
        with self.db.tx() as con:
            (existing,) = con.execute(f"SELECT count(*) FROM {AUDIT_TABLE}").fetchone()
            if existing:
                return 0
            users = [r[0] for r in con.execute("SELECT DISTINCT user_id FROM read_parquet(?) WHERE user_id <> ''", [str(path)]).fetchall()]
            erased = [u for u in users if is_erased(u)]
            con.execute(
                f"INSERT INTO {AUDIT_TABLE} BY NAME SELECT * REPLACE (CASE WHEN list_contains(?::VARCHAR[], user_id) "
                "THEN '' ELSE user_id END AS user_id) FROM read_parquet(?)",
                [erased, str(path)],
            )
            (n, top) = con.execute(f"SELECT count(*), coalesce(max(seq), 0) FROM {AUDIT_TABLE}").fetchone()
            # The sequence must continue after the restored rows, or the next append would reuse a seq.
            con.execute(f"SELECT nextval('{AUDIT_TABLE}_seq') FROM range(?)", [int(top)]).fetchall()
        return int(n)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        path = src / f"{AUDIT_TABLE}.parquet"
        if not path.exists():
            return 0
        con = duckdb.connect()
        try:
            (n,) = con.execute("SELECT count(*) FROM read_parquet(?) WHERE user_id = ?", [str(path), user_id]).fetchone()
            if n:
                tmp = path.with_name(path.name + ".tmp")
                con.execute(
                    "COPY (SELECT * REPLACE (CASE WHEN user_id = ? THEN '' ELSE user_id END AS user_id) "
                    f"FROM read_parquet(?)) TO '{_quote(tmp)}' {_PARQUET}",
                    [user_id, str(path)],
                )
                os.chmod(tmp, 0o600)
                os.replace(tmp, path)
        finally:
            con.close()
        return int(n)


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")
