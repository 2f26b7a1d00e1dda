"""A10 in server mode: the activity log as rows on PostgreSQL, so every process of the memory appends to and
reads one log per user.

One row per event, in the order the server committed them (an identity column): the user id, the time, the
event's kind and the event as the JSON line the file log writes. Retention (``prune``) drops old rows; erasure
deletes the user's rows and rewrites the table (VACUUM FULL). Backups carry the same files as the file log's
export (one JSON-lines file per user, named by the user's hash), so a backup restores into either mode.
The file log's size rotation has no counterpart here: retention by age bounds the table.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable

from .activity_log import append_line, forget_in_export, read_jsonl
from .ids import user_file_stem
from .pg_connection import PostgresConnection
from .pg_user_rows import UserRowsPlace

TABLE = "lumina_activity"
STEPS = [[
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id VARCHAR NOT NULL,
        at DOUBLE PRECISION NOT NULL, event VARCHAR NOT NULL, line VARCHAR NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_user ON {TABLE} (user_id, seq)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_at ON {TABLE} (at)",
]]

_OPEN: dict[str, "PostgresActivityLog"] = {}
_GUARD = threading.Lock()


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, default=str)


class PostgresActivityLog(UserRowsPlace):
    """The activity log of a memory in server mode (see the module docstring); an ``ActivityLogStore``."""

    table = TABLE
    name = "activity_log"

    def __init__(self, db: PostgresConnection, *, timeout: float = 10.0):
        self._db, self._timeout = db, timeout
        self._reopen = threading.Lock()
        db.migrate("activity", STEPS)

    @property
    def db(self) -> PostgresConnection:
        """The log's connection, opened again after ``close``: a process keeps one log per memory (nodes.activity)
        beyond the Services that closed its sessions."""
        with self._reopen:
            if not self._db.is_open:
                self._db = PostgresConnection(self._db.database, self._db.tier, timeout=self._timeout, pool_size=2)
            return self._db

    @classmethod
    def for_settings(cls, settings) -> "PostgresActivityLog":
        """The log of ``settings.database_url``: one per URI in a process, kept open."""
        with _GUARD:
            log = _OPEN.get(settings.database_url)
            if log is None:
                timeout = getattr(settings, "database_timeout_seconds", 10.0)
                log = _OPEN[settings.database_url] = cls(
                    PostgresConnection(settings.database_url, "activity", timeout=timeout, pool_size=2), timeout=timeout)
        return log

    def _insert(self, con, events: list[dict[str, Any]]) -> None:
        con.execute(
            f"INSERT INTO {TABLE} (user_id, at, event, line) SELECT u, a, e, l FROM "
            "unnest(?::VARCHAR[], ?::DOUBLE PRECISION[], ?::VARCHAR[], ?::VARCHAR[]) AS t(u, a, e, l)",
            [[e["user"] for e in events], [float(e.get("at", 0)) for e in events],
             [str(e.get("event", "")) for e in events], [_line(e) for e in events]])

    def append(self, user_id: str, event: str, *, at: float | None = None, **fields: Any) -> dict[str, Any]:
        line = {"at": round(time.time() if at is None else at, 3), "event": event, "user": user_id, **fields}
        with self.db.tx() as con:
            self._insert(con, [line])
        return line

    def events(self, user_id: str) -> list[dict[str, Any]]:
        """Every event of the user still kept, oldest first."""
        with self.db.read() as con:
            rows = con.execute(f"SELECT line FROM {TABLE} WHERE user_id = ? ORDER BY seq", [user_id]).fetchall()
        return [json.loads(r[0]) for r in rows]

    def recent(self, user_id: str, limit: int = 20, events: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """The user's last ``limit`` events (of the kinds ``events``, default all), oldest first."""
        if limit <= 0:
            return []
        kinds = "" if events is None else " AND event = ANY(?::VARCHAR[])"
        params: list[Any] = [user_id, *([] if events is None else [list(events)]), int(limit)]
        with self.db.read() as con:
            rows = con.execute(f"SELECT line FROM {TABLE} WHERE user_id = ?{kinds} ORDER BY seq DESC LIMIT ?",
                               params).fetchall()
        return [json.loads(r[0]) for r in reversed(rows)]

    def prune(self, older_than: float) -> int:
        """Retention: drop every event older than ``older_than`` (epoch seconds); returns how many went."""
        with self.db.tx() as con:
            return len(con.execute(f"DELETE FROM {TABLE} WHERE at < ? RETURNING seq", [float(older_than)]).fetchall())

    # --- UserDataPlace (count, erase, scrub: UserRowsPlace) ---------------------------------------
    def export(self, dest: Path) -> int:
        """One JSON-lines file per user, named as the file log names them."""
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        total = 0
        with self.db.read() as con:
            rows = con.execute(f"SELECT user_id, line FROM {TABLE} ORDER BY seq").fetchall()
        for user_id, line in rows:
            append_line(dest / f"{user_file_stem(user_id)}.jsonl", json.loads(line))
            total += 1
        return total

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        """The export's events of users not erased, in place of the users' rows (rotated files included)."""
        src = Path(src)
        events = [e for path in (sorted(src.glob("*.jsonl")) if src.exists() else []) for e in read_jsonl(path)
                  if isinstance(e.get("user"), str) and not is_erased(e["user"])]
        events.sort(key=lambda e: float(e.get("at", 0)))
        if events:
            with self.db.tx() as con:
                con.execute(f"DELETE FROM {TABLE} WHERE user_id = ANY(?::VARCHAR[])", [sorted({e["user"] for e in events})])
                self._insert(con, events)
        return len(events)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return forget_in_export(src, user_id)

    def close(self) -> None:
        """Close the connection's pool (nothing stays on the server); the next call opens it again."""
        with self._reopen:
            self._db.close()


def close_sessions(uri: str) -> None:
    """Close this process's activity log sessions on ``uri`` (a memory closed keeps no backend)."""
    with _GUARD:
        log = _OPEN.get(uri)
    if log is not None:
        log.close()


def user_data_places(settings) -> list:
    """For stores.places (the registry, in server mode): the memory's activity log table."""
    return [PostgresActivityLog.for_settings(settings)]
