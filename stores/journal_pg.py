"""A11 in server mode: the streaming journal as rows on PostgreSQL, so the reply a killed replica was writing is
recovered by any process of the memory, on any machine.

One row per reply in flight (keyed like the file journal: a hash of the user and of the reply id): the start
fields, the text flushed so far and how many chunks; a reply that completes deletes its row.

Which rows are orphans: each process that journals holds, on a connection of its own, a session-level advisory
lock keyed by its identity (host, pid and a random id, written on each of its rows). PostgreSQL releases it
when that process dies or its connection drops (kill -9, OOM, a lost machine). A row whose owner's lock can be
taken is an orphan; a row of a live process, wherever it runs, is left alone. No pid is compared: another
machine's pids mean nothing here. Recovery deletes each orphan with ``DELETE .. RETURNING``, so of two
processes recovering at once exactly one reports it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import uuid
from typing import Any, Callable

import psycopg

from .errors import StoreUnavailable
from .ids import NAMESPACE, user_file_stem
from .journal import JournalEntry
from .pg_connection import PostgresConnection, describe
from .pg_user_rows import UserRowsPlace
from .pg_watchdog import bounded_connection, grace

TABLE = "lumina_journal"
STEPS = [[
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        entry VARCHAR PRIMARY KEY, user_id VARCHAR NOT NULL, owner VARCHAR NOT NULL, start VARCHAR NOT NULL,
        text VARCHAR NOT NULL, chunks INTEGER NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_user ON {TABLE} (user_id)",
]]

OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
"""This process's identity on the journal's rows."""


def owner_lock_key(owner: str) -> int:
    """The advisory lock key a process holds while it lives: 64 bits of blake2b of its identity, signed."""
    digest = hashlib.blake2b(f"lumina-journal-owner|{owner}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class _Liveness:
    """The connection on which this process holds its owner lock, (re)made before each reply is journalled."""

    def __init__(self, uri: str, timeout: float):
        self.uri, self.timeout = uri, timeout
        self._con: psycopg.Connection | None = None
        self._lock = threading.Lock()
        self.in_flight = 0
        """Replies of this process journalled and not finished: while any is, the lock must stay held."""

    def begin(self) -> None:
        """A reply starts: the owner lock held (``ensure``) and the reply counted until ``end``."""
        with self._lock:
            self._ensure()
            self.in_flight += 1

    def end(self) -> None:
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)

    def ensure(self) -> None:
        with self._lock:
            self._ensure()

    def _ensure(self) -> None:
        if self._con is not None and not self._con.closed and not self._con.broken:
            return
        try:
            # Bounded on the client too (stores.pg_watchdog): a paused server never fires its own timeouts.
            self._con = bounded_connection(grace(self.timeout)).connect(
                self.uri, autocommit=True, connect_timeout=max(1, int(self.timeout)),
                options=f"-c statement_timeout={max(1, int(self.timeout * 1000))}")
            self._con.execute("SELECT pg_advisory_lock(%s)", [owner_lock_key(OWNER)])
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            if self._con is not None:
                self._con.close()
            self._con = None
            raise StoreUnavailable("journal", f"PostgreSQL at {describe(self.uri)}: {exc}") from exc

    def close(self) -> None:
        """End the session unless a reply is in flight (its row would look orphaned to other processes)."""
        with self._lock:
            if self._con is not None and not self.in_flight:
                self._con.close()
                self._con = None


class PostgresJournalEntry(JournalEntry):
    """One reply journalled as a row: ``write`` as it streams, ``finish`` when complete."""

    def __init__(self, db: PostgresConnection, entry: str, flush_seconds: float, flush_chars: int,
                 redact: Callable[[str], str] | None, liveness: _Liveness | None = None):
        super().__init__(None, flush_seconds, flush_chars, redact)
        self._db, self.entry, self._liveness = db, entry, liveness
        self.path = entry  # what the journal's ``read`` takes, as for the file journal

    def _append(self, text: str) -> None:
        with self._db.tx() as con:
            con.execute(f"UPDATE {TABLE} SET text = text || ?, chunks = chunks + 1 WHERE entry = ?", [text, self.entry])

    def _remove(self) -> None:
        try:
            with self._db.tx() as con:
                con.execute(f"DELETE FROM {TABLE} WHERE entry = ?", [self.entry])
        finally:
            liveness, self._liveness = self._liveness, None
            if liveness is not None:  # counted out once, however often finish is called
                liveness.end()


_LIVENESS: dict[str, _Liveness] = {}
_OPEN: dict[tuple, "PostgresJournal"] = {}
_GUARD = threading.RLock()  # for_settings holds it while __init__ takes it too


class PostgresJournal(UserRowsPlace):
    """The streaming journal of a memory in server mode (see the module docstring); a ``ReplyJournal``."""

    table = TABLE
    name = "journal"

    def __init__(self, db: PostgresConnection, flush_seconds: float = 1.0, flush_chars: int = 500, *,
                 timeout: float = 10.0):
        self.db = db
        self.flush_seconds, self.flush_chars = flush_seconds, flush_chars
        db.migrate("journal", STEPS)
        with _GUARD:  # one owner lock per database and process, whatever journals it opens
            self._liveness = _LIVENESS.setdefault(db.database, _Liveness(db.database, timeout))

    @classmethod
    def for_settings(cls, settings) -> "PostgresJournal":
        """The journal of ``settings.database_url``: one per URI and flush settings in a process, kept open."""
        key = (settings.database_url, settings.journal_flush_seconds, settings.journal_flush_chars)
        with _GUARD:
            journal = _OPEN.get(key)
            if journal is None or not journal.db.is_open:
                timeout = getattr(settings, "database_timeout_seconds", 10.0)
                db = PostgresConnection(settings.database_url, "journal", timeout=timeout, pool_size=2)
                journal = _OPEN[key] = cls(db, settings.journal_flush_seconds, settings.journal_flush_chars,
                                           timeout=timeout)
        return journal

    @staticmethod
    def _entry(user_id: str, reply_id: str) -> str:
        return f"{user_file_stem(user_id)}.{uuid.uuid5(NAMESPACE, f'reply|{reply_id}').hex[:24]}"

    def open(self, user_id: str, reply_id: str, redact: Callable[[str], str] | None = None,
             **meta: Any) -> PostgresJournalEntry:
        """Start journalling a reply: its row is committed (and this process's owner lock held) before the
        first chunk; a retried reply starts over."""
        entry = self._entry(user_id, reply_id)
        start = {"user": user_id, "reply_id": reply_id, "owner": OWNER, "at": round(time.time(), 3), **meta}
        self._liveness.begin()
        try:
            with self.db.tx() as con:
                con.execute(
                    f"INSERT INTO {TABLE} (entry, user_id, owner, start, text, chunks) VALUES (?, ?, ?, ?, '', 0) "
                    "ON CONFLICT (entry) DO UPDATE SET user_id = excluded.user_id, owner = excluded.owner, "
                    "start = excluded.start, text = '', chunks = 0",
                    [entry, user_id, OWNER, json.dumps(start, ensure_ascii=False, default=str)])
        except BaseException:
            self._liveness.end()
            raise
        return PostgresJournalEntry(self.db, entry, self.flush_seconds, self.flush_chars, redact, self._liveness)

    def read(self, path: str) -> dict[str, Any] | None:
        """What a reply's row holds (``path``: the entry's id, the row's handle): its start fields, the text so far
        and how many chunks."""
        with self.db.read() as con:
            row = con.execute(f"SELECT start, text, chunks FROM {TABLE} WHERE entry = ?", [path]).fetchone()
        return None if row is None else {**json.loads(row[0]), "text": row[1], "chunks": int(row[2])}

    def _owner_gone(self, con, owner: str) -> bool:
        key = owner_lock_key(owner)
        if not con.execute("SELECT pg_try_advisory_lock(?)", [key]).fetchone()[0]:
            return False
        con.execute("SELECT pg_advisory_unlock(?)", [key])
        return True

    def orphans(self) -> list[str]:
        """Rows of replies whose process is gone."""
        with self.db.read() as con:  # one session: the lock tried is released on it
            rows = con.execute(f"SELECT entry, owner FROM {TABLE} WHERE owner <> ? ORDER BY entry", [OWNER]).fetchall()
            gone = {owner: self._owner_gone(con, owner) for owner in {r[1] for r in rows}}
        return [entry for entry, owner in rows if gone[owner]]

    def recover_orphans(self) -> list[dict[str, Any]]:
        """The interrupted replies (user, reply_id, character, text so far, chunks, at), their rows removed."""
        recovered = []
        for entry in self.orphans():
            with self.db.tx() as con:
                row = con.execute(f"DELETE FROM {TABLE} WHERE entry = ? RETURNING start, text, chunks",
                                  [entry]).fetchone()
            if row is not None:  # None: another process recovered it first
                recovered.append({**json.loads(row[0]), "text": row[1], "chunks": int(row[2])})
        return recovered

    # --- UserDataPlace (count, erase, scrub: UserRowsPlace) ---------------------------------------
    def export(self, dest) -> int:
        from pathlib import Path

        Path(dest).mkdir(parents=True, exist_ok=True, mode=0o700)
        return 0  # a reply in flight is not memory yet; an orphan becomes an activity-log event

    def restore(self, src, is_erased: Callable[[str], bool]) -> int:
        return 0

    def forget_in_export(self, src, user_id: str) -> int:
        return 0

    def close(self) -> None:
        self.db.close()


def close_sessions(uri: str) -> None:
    """Close this process's journal sessions on ``uri`` (a memory closed keeps no backend); each opens again on
    its next use. While a reply of this process is in flight they stay: its row must not look orphaned."""
    with _GUARD:
        liveness = _LIVENESS.get(uri)
        if liveness is not None and liveness.in_flight:
            return
        journals = [journal for key, journal in _OPEN.items() if key[0] == uri]
        for key in [key for key in _OPEN if key[0] == uri]:
            del _OPEN[key]
    for journal in journals:
        journal.close()
    if liveness is not None:
        liveness.close()


def user_data_places(settings) -> list:
    """For stores.places (the registry, in server mode): the memory's streaming journal table."""
    return [PostgresJournal.for_settings(settings)]
