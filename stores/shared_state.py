"""Small named JSON documents that every process of one memory shares (maintenance state, erasures in progress,
known backup locations and owed erasures) and one-time claims (used erase tokens).

Two adapters, chosen by ``open_shared_state(settings)``:
- ``DataDirState``: files in the data dir, exactly as they always were (``<name>`` holds the JSON document,
  ``<kind>/<key>`` is an empty file per claim). One process owns a data dir (its lock), so a lock per folder
  within the process makes ``update`` atomic; a document is replaced by rename, never left half-written.
- ``PostgresState``: two tables on the server mode's PostgreSQL. ``update`` reads the row ``FOR UPDATE`` and
  writes it in the same transaction, so of two processes changing one document the second waits and then
  sees the first's change: neither is lost. A claim is a primary-key insert: exactly one process wins.

A document that ``update``'s function turns into ``None`` is gone (its file deleted; its row's value NULL, the
row kept so the next update has a row to lock).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import InvalidInput

# File-name safe: letters, digits and single separators; no leading dot, no '..', no '/', nothing a file system
# or SQL could read as syntax.
_NAME = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
_NAME_MAX = 100

STATE_TABLE = "lumina_state"
CLAIMS_TABLE = "lumina_claims"
STEPS = [[
    f"""CREATE TABLE IF NOT EXISTS {STATE_TABLE} (
        name VARCHAR PRIMARY KEY, value VARCHAR, updated_at DOUBLE PRECISION NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {CLAIMS_TABLE} (
        kind VARCHAR NOT NULL, key VARCHAR NOT NULL, claimed_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (kind, key))""",
]]


def check_name(name: object, field: str = "name") -> str:
    """``name`` if it is a safe document, kind or claim name; InvalidInput(field) otherwise."""
    if not isinstance(name, str) or len(name) > _NAME_MAX or not _NAME.fullmatch(name):
        raise InvalidInput(field, f"{name!r} is not a state name: letters, digits and single '.', '_' or '-' "
                           f"between them, at most {_NAME_MAX} characters")
    return name


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, indent=1, sort_keys=True, allow_nan=False) + "\n"
    except (TypeError, ValueError) as exc:
        raise InvalidInput("value", f"cannot be kept as JSON: {exc}") from None


@runtime_checkable
class SharedState(Protocol):
    shared: bool
    """Whether other processes read and write the same documents (PostgreSQL)."""

    def read(self, name: str) -> Any | None:
        """The document ``name``, or None if there is none."""
        ...

    def update(self, name: str, fn: Callable[[Any | None], Any | None]) -> Any | None:
        """Atomically replace the document by ``fn(current)`` (None: delete it); the new value. An exception
        raised by ``fn`` leaves the document as it was."""
        ...

    def write(self, name: str, value: Any | None) -> None: ...

    def claim(self, kind: str, key: str) -> bool:
        """Record ``key`` under ``kind`` durably; False if it was recorded before (by any process)."""
        ...

    def claims(self, kind: str) -> list[str]: ...

    def drop_claims(self, kind: str, keys: list[str]) -> None: ...

    def scrub(self) -> None:
        """Make replaced and dropped values leave the storage (an erasure's ids in the erasure mark)."""
        ...


_DIR_LOCKS: dict[Path, threading.RLock] = {}
_DIR_LOCKS_GUARD = threading.Lock()


class DataDirState:
    """``SharedState`` in the data dir's files (see the module docstring)."""

    shared = False

    def __init__(self, data_dir: str | os.PathLike[str]):
        from .backup_location import LocalLocation

        self.root = Path(data_dir)
        self._files = LocalLocation(self.root)
        with _DIR_LOCKS_GUARD:
            self._lock = _DIR_LOCKS.setdefault(self.root.expanduser().resolve(), threading.RLock())

    def read(self, name: str) -> Any | None:
        text = self._files.read_text(check_name(name))
        return json.loads(text) if text else None

    def update(self, name: str, fn: Callable[[Any | None], Any | None]) -> Any | None:
        check_name(name)
        with self._lock:
            new = fn(self.read(name))
            if new is None:
                (self.root / name).unlink(missing_ok=True)
            else:
                self._files.write_text(name, _dumps(new))
        return new

    def write(self, name: str, value: Any | None) -> None:
        self.update(name, lambda _current: value)

    def claim(self, kind: str, key: str) -> bool:
        folder, key = self.root / check_name(kind, "kind"), check_name(key, "key")
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(folder / key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        os.fsync(fd)
        os.close(fd)
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # the claim survives a crash that follows it
        finally:
            os.close(dir_fd)
        return True

    def claims(self, kind: str) -> list[str]:
        folder = self.root / check_name(kind, "kind")
        return sorted(os.listdir(folder)) if folder.is_dir() else []

    def drop_claims(self, kind: str, keys: list[str]) -> None:
        folder = self.root / check_name(kind, "kind")
        for key in keys:
            (folder / check_name(key, "key")).unlink(missing_ok=True)

    def scrub(self) -> None:
        """Nothing to rewrite: a document is replaced whole by rename, a dropped one is deleted."""


class PostgresState:
    """``SharedState`` in PostgreSQL tables (see the module docstring); ``db`` a ``PostgresConnection``."""

    shared = True

    def __init__(self, db):
        self.db = db
        db.migrate("state", STEPS)

    def read(self, name: str) -> Any | None:
        with self.db.read() as con:
            row = con.execute(f"SELECT value FROM {STATE_TABLE} WHERE name = ?", [check_name(name)]).fetchone()
        return json.loads(row[0]) if row and row[0] is not None else None

    def update(self, name: str, fn: Callable[[Any | None], Any | None]) -> Any | None:
        check_name(name)
        with self.db.tx() as con:
            # The row exists before it is locked: two first writers queue on it instead of both seeing none.
            con.execute(f"INSERT INTO {STATE_TABLE} (name, value, updated_at) VALUES (?, NULL, ?) "
                        "ON CONFLICT (name) DO NOTHING", [name, time.time()])
            row = con.execute(f"SELECT value FROM {STATE_TABLE} WHERE name = ? FOR UPDATE", [name]).fetchone()
            new = fn(json.loads(row[0]) if row and row[0] is not None else None)
            con.execute(f"UPDATE {STATE_TABLE} SET value = ?, updated_at = ? WHERE name = ?",
                        [None if new is None else _dumps(new), time.time(), name])
        return new

    def write(self, name: str, value: Any | None) -> None:
        self.update(name, lambda _current: value)

    def claim(self, kind: str, key: str) -> bool:
        with self.db.tx() as con:
            row = con.execute(
                f"INSERT INTO {CLAIMS_TABLE} (kind, key, claimed_at) VALUES (?, ?, ?) "
                "ON CONFLICT (kind, key) DO NOTHING RETURNING key",
                [check_name(kind, "kind"), check_name(key, "key"), time.time()]).fetchone()
        return row is not None

    def claims(self, kind: str) -> list[str]:
        with self.db.read() as con:
            rows = con.execute(f"SELECT key FROM {CLAIMS_TABLE} WHERE kind = ? ORDER BY key",
                               [check_name(kind, "kind")]).fetchall()
        return [r[0] for r in rows]

    def drop_claims(self, kind: str, keys: list[str]) -> None:
        if keys:
            with self.db.tx() as con:
                con.execute(f"DELETE FROM {CLAIMS_TABLE} WHERE kind = ? AND key = ANY(?::VARCHAR[])",
                            [check_name(kind, "kind"), [check_name(k, "key") for k in keys]])

    def scrub(self) -> None:
        """An UPDATE leaves the old row version in the table's pages until vacuumed: VACUUM FULL rewrites the
        (small) state tables so a replaced value's bytes go (see PostgresConnection.rewrite for what it does not
        reach)."""
        self.db.rewrite([STATE_TABLE, CLAIMS_TABLE])

    def close(self) -> None:
        self.db.close()


_OPEN: dict[str, PostgresState] = {}
_OPEN_GUARD = threading.Lock()


def open_shared_state(settings) -> SharedState:
    """The memory's shared state: PostgreSQL when ``settings.database_url`` is set (one per URI and process,
    kept open), else the data dir's files."""
    uri = getattr(settings, "database_url", None)
    if not uri:
        return DataDirState(settings.resolved_data_dir())
    with _OPEN_GUARD:
        state = _OPEN.get(uri)
        if state is None or not state.db.is_open:
            from .pg_connection import PostgresConnection

            state = _OPEN[uri] = PostgresState(PostgresConnection(
                uri, "state", timeout=getattr(settings, "database_timeout_seconds", 10.0), pool_size=2))
        return state


def close_shared_states(uri: str | None = None) -> None:
    """Close every PostgreSQL state this process opened (tests whose databases go; shutdown), or only those on
    ``uri`` (a memory closed); ``open_shared_state`` opens one again."""
    with _OPEN_GUARD:
        states = [state for key, state in _OPEN.items() if uri is None or key == uri]
        for key in [key for key in _OPEN if uri is None or key == uri]:
            del _OPEN[key]
    for state in states:
        state.close()


def as_shared_state(where) -> SharedState:
    """``where`` if it is a SharedState; a data dir's path otherwise (callers that name the folder)."""
    return where if isinstance(where, SharedState) else DataDirState(where)


def shared_state_of(services) -> SharedState:
    """The shared state of an opened memory (``open_shared_state`` of its settings)."""
    return open_shared_state(services.settings)
