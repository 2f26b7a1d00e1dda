"""The audit log: append-only and chained under the data dir's key, in the archive's ``session_log`` table (L11).

Each row holds the keyed hash of the row before it, and a sealed head (row count and last hash) is kept
apart from the log, so editing, inserting or removing any row, the last ones included, shows in
``verify`` (stores.audit_chain has the chain, the head file and the checks). Verification only reads:
``audit --verify`` opens the archive read-only (``read_only_audit``) and needs nothing else but the
data dir's secret. A row records what was done (erasure, restore, backup, settings change), when and by
whom, never content; users appear only as keyed hashes (``user_ref``), so an erased user's id is not
kept in clear here either.

In server mode (PostgreSQL, ``db.shared``) there is no data dir: the sealed head is a row of
``lumina_audit_head`` (sealed with the same key), written in the append's own transaction, and appends from any
number of processes take one advisory lock in turn (``archive_schema.serialized``), so they keep one chain.

The table predates the chain: rows written by ``DuckDBArchive.append_audit`` have a clear ``user_id`` and
no hash. In a log of an earlier version (no head file) the first append adopts them, with the rest of the
old rows, into the keyed chain (their user becomes a keyed hash in ``user_ref``) and records in the log
what they were found to be; in a keyed log such a row is a break, as anything not written through
``AuditLog.append`` is. Erasure blanks the clear ``user_id`` of old rows; the chain covers ``user_ref``,
not ``user_id``, so that redaction leaves it intact.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import duckdb

from .archive_schema import serialized
from .audit_chain import (
    ADOPTED_EVENT, GENESIS, HEAD_FILE, head_is_sealed, head_text, legacy_status, read_head, row_hash, verify_rows,
    write_head,
)
from .duckdb_connection import LOCK_RE
from .errors import DataDirLocked, InvalidInput
from .ids import AUDIT_TABLE
from .places.parquet_rows import PARQUET as _PARQUET, export_table, insert_rows, literal as _quote, parquet_rows
from .sql_connection import SqlConnection
from .secret import existing_secret, keyed_hash

__all__ = ["AuditLog", "AuditPlace", "HEAD_FILE", "read_only_audit", "verify_data_dir"]

log = logging.getLogger("lumina.audit")

_ADDED = ("actor", "user_ref", "prev_hash", "hash")
_COLUMNS = ("seq", "at", "event", "actor", "user_ref", "detail", "prev_hash", "hash", "user_id")
# The head of an in-memory archive (tests, notebooks) lives as long as its connection does.
_MEMORY_HEADS: "weakref.WeakKeyDictionary[SqlConnection, str]" = weakref.WeakKeyDictionary()
# The sealed head where the log has no data dir (a server): one row, key 'head'.
HEAD_TABLE = "lumina_audit_head"


def _migrate(db: SqlConnection) -> None:
    db.migrate("audit", [
        [f"ALTER TABLE {AUDIT_TABLE} ADD COLUMN IF NOT EXISTS {column} VARCHAR DEFAULT ''" for column in _ADDED],
        [f"CREATE TABLE IF NOT EXISTS {HEAD_TABLE} (key VARCHAR PRIMARY KEY, head VARCHAR NOT NULL)"],
    ])


def _fetch_rows(con, from_seq: int | None = None) -> list[dict[str, Any]]:
    """Every row (from ``from_seq`` on) in seq order; columns an older table lacks read as ''."""
    present = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = current_schema()",
        [AUDIT_TABLE]).fetchall()}
    if not present:
        return []
    select = ", ".join(f'"{c}"' if c in present else f"'' AS {c}" for c in _COLUMNS)
    where = "" if from_seq is None else f"WHERE seq >= {int(from_seq)}"
    rows = con.execute(f"SELECT {select} FROM {AUDIT_TABLE} {where} ORDER BY seq").fetchall()
    return [{**dict(zip(_COLUMNS, r)), "actor": r[3] or "", "user_ref": r[4] or "", "prev_hash": r[6] or "",
             "hash": r[7] or "", "user_id": r[8] or ""} for r in rows]


def _shown(rows: list[dict[str, Any]], key: bytes | None) -> list[dict[str, Any]]:
    """Rows as shown: no clear user id (an old row not adopted yet shows its user as the keyed hash)."""
    out = []
    for row in rows:
        ref = row["user_ref"] or (keyed_hash(key, row["user_id"]) if row["user_id"] and key else "")
        out.append({**{c: row[c] for c in _COLUMNS if c != "user_id"}, "user_ref": ref})
    return out


def _table_head(con) -> dict[str, Any] | None:
    row = con.execute(f"SELECT head FROM {HEAD_TABLE} WHERE key = 'head'").fetchone()
    if row is None:
        return None
    try:
        value = json.loads(row[0])
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class AuditLog:
    def __init__(self, db: SqlConnection, key: bytes, head_path: Path | None = None):
        """``db``: the archive's connection (the log lives in its database; ``SqlArchive.audit_trail`` opens it);
        ``key``: the data dir's secret; ``head_path``: the sealed head (default: ``audit-head.json`` beside the
        archive's file; on a server, the ``lumina_audit_head`` row instead)."""
        self.db = db
        self.key = key
        if head_path is None and self.db.database != ":memory:" and not self.db.shared:
            head_path = Path(self.db.database).parent / HEAD_FILE
        self.head_path = head_path
        _migrate(self.db)

    def _head(self, con=None) -> dict[str, Any] | None:
        if self.db.shared:
            if con is not None:
                return _table_head(con)
            with self.db.read() as con:
                return _table_head(con)
        if self.head_path is not None:
            return read_head(self.head_path)
        text = _MEMORY_HEADS.get(self.db)
        return None if text is None else json.loads(text)

    def _seal_head(self, rows: int, last_seq: int, digest: str, con=None) -> None:
        if self.db.shared:
            con.execute(f"INSERT INTO {HEAD_TABLE} (key, head) VALUES ('head', ?) ON CONFLICT (key) DO UPDATE "
                        "SET head = excluded.head", [head_text(self.key, rows, last_seq, digest)])
        elif self.head_path is not None:
            write_head(self.head_path, self.key, rows, last_seq, digest)
        else:
            _MEMORY_HEADS[self.db] = head_text(self.key, rows, last_seq, digest)

    def _insert(self, con, prev: str, event: str, actor: str, user_ref: str, detail: str) -> dict[str, Any]:
        (seq,) = con.execute(f"SELECT nextval('{AUDIT_TABLE}_seq')").fetchone()
        row = {"seq": int(seq), "at": time.time(), "event": event, "actor": actor, "user_ref": user_ref,
               "detail": detail}
        digest = row_hash(self.key, prev, row)
        con.execute(
            f'INSERT INTO {AUDIT_TABLE} (seq, "at", event, user_id, detail, actor, user_ref, prev_hash, hash) '
            "VALUES (?, ?, ?, '', ?, ?, ?, ?, ?)",
            [row["seq"], row["at"], event, detail, actor, user_ref, prev, digest],
        )
        return {**row, "prev_hash": prev, "hash": digest}

    def _adopt(self, con) -> str:
        """Seal the rows of a log without a head (an earlier version's, or restored from a backup) under this
        key, and record what they were found to be; the new last hash. Only an append does this."""
        rows = _fetch_rows(con)
        found = legacy_status(self.key, rows)
        prev = GENESIS
        for row in rows:
            row = {**row, "user_ref": row["user_ref"] or (keyed_hash(self.key, row["user_id"]) if row["user_id"] else "")}
            digest = row_hash(self.key, prev, row)
            con.execute(f"UPDATE {AUDIT_TABLE} SET user_ref = ?, actor = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                        [row["user_ref"], row["actor"], prev, digest, row["seq"]])
            prev = digest
        detail = json.dumps({"rows": len(rows), "last_seq": rows[-1]["seq"], "before": found.text,
                             "broken_at": found.broken_at}, sort_keys=True)
        log.warning("audit log: %d rows without a sealed head were adopted into the data dir's keyed chain (%s)",
                    len(rows), found.text)
        return self._insert(con, prev, ADOPTED_EVENT, "audit", "", detail)["hash"]

    def _continue_from(self, con, head: dict[str, Any]) -> str:
        """The hash a new row links to: the log's last one when the log is its sealed head plus rows keyed
        after it (an append that died before updating the head); otherwise the head's own, so that rows
        removed from the end, or rows not written here, stay visible as a break after this append too."""
        rows = _fetch_rows(con, from_seq=int(head["last_seq"]))
        if not rows or rows[0]["seq"] != int(head["last_seq"]) or rows[0]["hash"] != head["hash"]:
            log.warning("audit log: it no longer ends at its sealed head; the new row links to the head")
            return str(head["hash"])
        prev = rows[0]["hash"]
        for row in rows[1:]:
            if row["prev_hash"] != prev or not row["hash"] or row_hash(self.key, prev, row) != row["hash"]:
                log.warning("audit log: rows after its sealed head were not written here; the new row links to the head")
                return str(head["hash"])
            prev = row["hash"]
        return prev

    def append(self, event: str, actor: str, user_id: str | None = None, detail: str = "") -> dict[str, Any]:
        """Record an event; ``detail`` must carry no content (counts, names of places, locations)."""
        if not event:
            raise InvalidInput("event", "must be a non-empty string")
        if not actor:
            raise InvalidInput("actor", "must say who did it (a user name, 'cli', 'maintenance')")
        user_ref = keyed_hash(self.key, user_id) if user_id else ""
        with self.db.lock:  # the head is written under the same lock, so heads are written in append order
            with self.db.tx() as con:
                serialized(con, self.db, AUDIT_TABLE)  # other processes' appends wait until this one commits
                (count,) = con.execute(f"SELECT count(*) FROM {AUDIT_TABLE}").fetchone()
                head = self._head(con)
                if head is not None and not head_is_sealed(self.key, head):
                    head = None  # not this key's head: adopted like a log without one, and said so
                if count and head is None:
                    prev, count = self._adopt(con), count + 1  # the adoption's own row
                else:
                    prev = self._continue_from(con, head) if head else GENESIS
                row = self._insert(con, prev, event, actor, user_ref, detail)
                count += 1
                if self.db.shared:  # a row of the same transaction: it commits (or rolls back) with the append
                    self._seal_head(int(count), row["seq"], row["hash"], con)
            # After the commit, so the head never names a row that is not there; inside an outer transaction
            # (which may still roll back) the head is left behind, which verify reports as a notice only.
            if not self.db.shared and not self.db.in_transaction:
                self._seal_head(int(count), row["seq"], row["hash"])
        return row

    def rows(self) -> list[dict[str, Any]]:
        with self.db.read() as con:
            return _shown(_fetch_rows(con), self.key)

    def verify(self) -> dict[str, Any]:
        """Reads only. {'ok', 'rows', 'broken_at', 'problem', 'notice'}: see audit_chain.verify_rows."""
        with self.db.read() as con:
            # The head first: an append committing in between then shows as a row past the head (a notice),
            # never as a head past the rows.
            head = self._head(con)
            rows = _fetch_rows(con)
        return verify_rows(self.key, rows, head)

    def ref(self, user_id: str) -> str:
        return keyed_hash(self.key, user_id)


class ReadOnlyAudit:
    """The audit log of a data dir whose archive is opened read-only: rows and verify, nothing else."""

    def __init__(self, con: duckdb.DuckDBPyConnection, key: bytes | None, head_path: Path):
        self.con, self.key, self.head_path = con, key, head_path

    def rows(self) -> list[dict[str, Any]]:
        return _shown(_fetch_rows(self.con), self.key)

    def verify(self) -> dict[str, Any]:
        return verify_rows(self.key, _fetch_rows(self.con), read_head(self.head_path))


@contextlib.contextmanager
def read_only_audit(data_dir: Path, key: bytes | None = None) -> Iterator[ReadOnlyAudit]:
    """The audit log of ``data_dir`` without starting or creating anything: the archive read-only, the
    secret only if it exists (``key`` overrides it), no other store."""
    from .archive_schema import ARCHIVE_FILENAME

    data_dir = Path(data_dir).expanduser().resolve()
    if not data_dir.is_dir():
        raise InvalidInput("data_dir", f"{data_dir} does not exist: there is no audit log to read there")
    path = data_dir / ARCHIVE_FILENAME
    if not path.is_file():
        raise InvalidInput("data_dir", f"{data_dir} holds no archive ({ARCHIVE_FILENAME}): there is no audit log")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.IOException as exc:
        match = LOCK_RE.search(str(exc))
        if match is None and "Could not set lock" not in str(exc):
            raise
        raise DataDirLocked(str(data_dir), f"pid={match['pid']} ({match['prog']})" if match else str(exc)) from None
    try:
        yield ReadOnlyAudit(con, key if key is not None else existing_secret(data_dir), data_dir / HEAD_FILE)
    finally:
        con.close()


def verify_data_dir(data_dir: Path, key: bytes | None = None) -> dict[str, Any]:
    with read_only_audit(data_dir, key) as audit:
        return audit.verify()


class AuditPlace:
    """The audit table's clear user ids (rows appended by DuckDBArchive.append_audit) as a place: erasure
    blanks them (rows stay: the log is append-only); a backup carries the whole log."""

    name = "archive.session_log"

    def __init__(self, db: SqlConnection, rewriter):
        """``db``: the archive's connection (stores.places.archive gives it, with the archive's file rewriter)."""
        self.db = db
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
            self.rewriter.mark(AUDIT_TABLE)
        return n

    def scrub(self) -> None:
        self.rewriter.scrub()

    def raw_paths(self) -> list[Path]:
        if self.db.database == ":memory:" or self.db.dialect != "duckdb":
            return []  # a server's files are the server's
        return [Path(self.db.database), Path(self.db.database + ".wal")]

    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        return export_table(self.db, AUDIT_TABLE, dest / f"{AUDIT_TABLE}.parquet", order_by="seq")

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        """Into an empty log only (a log with rows of its own keeps its chain; the restore is recorded in it)."""
        path = src / f"{AUDIT_TABLE}.parquet"
        if not path.exists():
            return 0
        with self.db.tx() as con:
            (existing,) = con.execute(f"SELECT count(*) FROM {AUDIT_TABLE}").fetchone()
            if existing:
                return 0
            _, users = parquet_rows(path, "WHERE user_id <> ''", columns="DISTINCT user_id")
            erased = [u for (u,) in users if is_erased(u)]
            if self.db.dialect == "duckdb":
                con.execute(
                    f"INSERT INTO {AUDIT_TABLE} BY NAME SELECT * REPLACE (CASE WHEN list_contains(?::VARCHAR[], user_id) "
                    "THEN '' ELSE user_id END AS user_id) FROM read_parquet(?)",
                    [erased, str(path)],
                )
            else:  # the server cannot read this host's file: the rows travel through an in-memory DuckDB
                names, rows = parquet_rows(path, "ORDER BY seq")
                blank = set(erased)
                at = names.index("user_id")
                insert_rows(con, AUDIT_TABLE, names, [
                    (*r[:at], "" if r[at] in blank else r[at], *r[at + 1:]) for r in rows])
            (n, top) = con.execute(f"SELECT count(*), coalesce(max(seq), 0) FROM {AUDIT_TABLE}").fetchone()
            if top:  # the sequence must continue after the restored rows, or the next append would reuse a seq
                con.execute(f"SELECT setval('{AUDIT_TABLE}_seq', ?)", [int(top)]).fetchall()
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


@contextlib.contextmanager
def server_audit(settings) -> Iterator["AuditLog"]:
    """The server mode's audit log for reading and verifying: the archive's database, sealed with
    LUMINA_SECRET_KEY, on one connection of its own (no replica's data dir holds it)."""
    from .pg_connection import PostgresConnection
    from .secret import memory_secret

    db = PostgresConnection(settings.database_url, "archive", timeout=settings.database_timeout_seconds, pool_size=1)
    try:
        yield AuditLog(db, memory_secret(settings))
    finally:
        db.close()
