"""Leases: work that must happen once (the daily batch, consolidation, backups, an erasure, outbox recovery)
runs in one worker at a time, across threads and processes.

    leases = open_leases(settings)
    with leases.hold("lifecycle", wait=60) as got:
        if not got:
            return skipped("lifecycle", 60)   # someone else is doing it: the step says so
        ...                                   # re-read "what is already done" here, then do the rest

Two adapters, chosen by the settings (``open_leases``):

- ``LocalLeases`` (embedded mode): one process owns the data dir (its ``DataDirLock`` keeps others out), so a
  lock per name in this process is enough. Re-entrant per thread; another thread contends.
- ``PostgresLeases`` (server mode, ``database_url`` set): the same per-thread lock first, then PostgreSQL's
  session-level advisory lock ``pg_try_advisory_lock(key)`` on a connection of the leases' own. The server
  releases a session's advisory locks when the session ends, however its process ends (kill -9 included), so a
  dead holder never keeps a lease and there is nothing to clean up.
  ``key`` = blake2b(name as UTF-8, digest_size=8, person=b"lumina-lease") read as a signed big-endian 64-bit
  integer (PostgreSQL's bigint): the same in every process, version and machine (Python's ``hash()`` is not).
  Each held lock takes a slot of the server's shared lock table (``max_locks_per_transaction`` ×
  ``max_connections``): hold a few at a time, never one per user for every user at once.

Every wait is bounded: ``wait=False`` tries once, a number waits at most that many seconds, ``True`` waits at
most ``DEFAULT_WAIT``. Not obtaining a lease means another worker is doing the work: the caller records the
step as skipped (``skipped``), never a silent no-op.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import InvalidInput, LuminaError, StoreUnavailable

log = logging.getLogger("lumina.leases")

TIER = "leases"
DEFAULT_WAIT = 60.0
"""Seconds ``wait=True`` waits at most."""
MAX_NAME_CHARS = 512
_PERSON = b"lumina-lease"
_POLL_FIRST, _POLL_MAX = 0.02, 0.5  # seconds between tries on the server, doubling up to the max


class LeaseBusy(LuminaError, RuntimeError):
    """A lease another worker holds, for a call that cannot just skip its work (e.g. an erasure asked for)."""

    def __init__(self, name: str, waited: float, doing: str):
        self.name, self.waited = name, waited
        super().__init__(f"{doing}: another worker holds the lease {name!r} (waited {waited:g} s); try again later")


def lease_name(name: object) -> str:
    """``name`` checked: a non-empty string of at most ``MAX_NAME_CHARS`` that is valid Unicode (a lone
    surrogate cannot be hashed as UTF-8). Any other content is fine: names are hashed, never spliced."""
    if not isinstance(name, str) or not name:
        raise InvalidInput("lease name", "must be a non-empty string")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidInput("lease name", f"is {len(name)} characters; at most {MAX_NAME_CHARS}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("lease name", f"{name[:40]!r} is not valid Unicode (a lone surrogate)") from None
    return name


def lease_key(name: str) -> int:
    """The advisory-lock key of ``name``: a stable signed 64-bit integer (see the module's docstring)."""
    digest = hashlib.blake2b(lease_name(name).encode("utf-8"), digest_size=8, person=_PERSON).digest()
    return int.from_bytes(digest, "big", signed=True)


def wait_seconds(wait: bool | float) -> float:
    """The bound of a wait: False → 0 (one try), True → ``DEFAULT_WAIT``, a number → itself."""
    if isinstance(wait, bool):
        return DEFAULT_WAIT if wait else 0.0
    if not isinstance(wait, (int, float)) or wait != wait or wait < 0:  # NaN, negative
        raise InvalidInput("lease wait", f"{wait!r}: a bool or a number of seconds ≥ 0")
    return float(wait)


def skipped(name: str, wait: bool | float) -> dict[str, Any]:
    """A step's report when its lease was held elsewhere: what was skipped and why."""
    return {"skipped": True, "lease": name,
            "reason": f"another worker holds the lease {name!r} (waited {wait_seconds(wait):g} s) and is doing this work"}


@runtime_checkable
class Leases(Protocol):
    def hold(self, name: str, *, wait: bool | float = False) -> AbstractContextManager[bool]:
        """Lease ``name`` for a ``with`` block: tries (within ``wait``) when called, yields whether it was
        obtained, and releases it after the block, however the block ends."""
        ...

    def held(self, name: str) -> bool:
        """Whether a thread of this process holds ``name`` now."""
        ...

    def close(self) -> None: ...


class LocalLeases:
    """Leases of one process: a lock per name, re-entrant per thread."""

    backend = "local"

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._held: dict[str, list[int]] = {}  # name -> [owning thread, depth]

    def acquire(self, name: str, deadline: float) -> tuple[bool, bool]:
        """(obtained, first: this thread did not hold it already), trying until the monotonic ``deadline``."""
        me = threading.get_ident()
        with self._changed:
            while True:
                entry = self._held.get(name)
                if entry is None:
                    self._held[name] = [me, 1]
                    return True, True
                if entry[0] == me:
                    entry[1] += 1
                    return True, False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False, False
                self._changed.wait(left)

    def release(self, name: str) -> None:
        with self._changed:
            entry = self._held[name]
            entry[1] -= 1
            if entry[1] == 0:
                del self._held[name]
                self._changed.notify_all()

    def hold(self, name: str, *, wait: bool | float = False) -> AbstractContextManager[bool]:
        name = lease_name(name)
        got, _first = self.acquire(name, time.monotonic() + wait_seconds(wait))
        return _block(got, lambda: self.release(name))

    def held(self, name: str) -> bool:
        with self._changed:
            return lease_name(name) in self._held

    def close(self) -> None:
        """Nothing to release: a lease lives as long as its ``with`` block."""


class PostgresLeases:
    """Leases shared by every process on one PostgreSQL: session-level advisory locks on a connection of their
    own, behind this process's per-thread locks (the session is one for all the process's threads, and
    PostgreSQL would grant its lock again to any of them)."""

    backend = "postgres"

    def __init__(self, uri: str, *, timeout: float = 10.0):
        from .pg_connection import describe

        self._uri, self._timeout, self.where = uri, timeout, describe(uri)
        self._session = threading.Lock()  # one statement at a time on the shared connection
        self._con: Any = None
        self._pid = 0
        self._local = LocalLeases()
        self._on_server: set[str] = set()
        self._closing = False  # close() was called while leases were held: the last release ends the session
        with self._session:
            self._connection()  # a server that is down fails here, named

    def _connection(self) -> Any:
        import psycopg

        from .pg_watchdog import bounded_connection, grace

        if self._pid and self._pid != os.getpid():  # a forked child: the parent's session is not ours
            self._con, self._local, self._on_server = None, LocalLeases(), set()
        if self._con is not None and not self._con.closed:
            return self._con
        if self._on_server:
            log.error("the leases' PostgreSQL session ended while holding %s: another worker may take them now",
                      sorted(self._on_server))
            self._on_server.clear()
        statement_ms = max(1, int(self._timeout * 1000))
        try:
            # Bounded on the client too (stores.pg_watchdog): a paused server never fires its statement_timeout.
            self._con = bounded_connection(grace(self._timeout)).connect(
                self._uri, autocommit=True, connect_timeout=max(1, int(self._timeout)),
                options=f"-c statement_timeout={statement_ms}", application_name="lumina-leases")
        except psycopg.Error as exc:
            raise StoreUnavailable(TIER, f"PostgreSQL at {self.where}: {_first_line(exc)}") from None
        self._pid = os.getpid()
        return self._con

    def _ask(self, sql: str, key: int) -> bool:
        """One statement on the session (the caller holds ``_session``)."""
        import psycopg

        con = self._connection()
        try:
            row = con.execute(sql, [key]).fetchone()
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            con.close()
            raise StoreUnavailable(TIER, f"PostgreSQL at {self.where}: {_first_line(exc)}") from None
        return bool(row and row[0])

    def _lock_on_server(self, name: str, deadline: float) -> bool:
        key, pause = lease_key(name), _POLL_FIRST
        while True:
            with self._session:  # the lock and its bookkeeping together (see _unlock_on_server)
                if self._ask("SELECT pg_try_advisory_lock(%s)", key):
                    self._on_server.add(name)
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(pause * 2, _POLL_MAX)

    def _unlock_on_server(self, name: str) -> None:
        # One critical section from the bookkeeping to the unlock: a close() between them would end the session
        # and the unlock would open a new one that nothing closes.
        with self._session:
            if name not in self._on_server:
                return  # the session ended while held: already logged, and the server let it go
            self._on_server.discard(name)
            try:
                if not self._ask("SELECT pg_advisory_unlock(%s)", lease_key(name)):
                    log.error("lease %r was no longer held on the server when released", name)
            except StoreUnavailable as exc:  # the session is gone, and with it the lock
                log.warning("lease %r released by the session's end: %s", name, exc)
            if self._closing and not self._on_server:  # closed while held: the last release ends the session
                self._end_session()

    def hold(self, name: str, *, wait: bool | float = False) -> AbstractContextManager[bool]:
        name = lease_name(name)
        deadline = time.monotonic() + wait_seconds(wait)
        if self._pid != os.getpid():  # a forked child starts with no leases and a session of its own
            with self._session:
                self._connection()
        got, first = self._local.acquire(name, deadline)
        if got and first:
            on_server = False
            try:
                on_server = self._lock_on_server(name, deadline)
            finally:
                if not on_server:  # refused, or the server failed the try: this thread holds nothing either
                    self._local.release(name)
            got = on_server

        def release() -> None:
            try:
                if first:
                    self._unlock_on_server(name)
            finally:
                self._local.release(name)

        return _block(got, release)

    def held(self, name: str) -> bool:
        return self._local.held(name)

    def close(self) -> None:
        """End the session, so a closed memory keeps no backend on the server; a later ``hold`` opens a new one.
        While a thread of this process still holds a lease (another Services of the same memory), the session
        ends when the last one is released instead: ending it now would let another worker take that lease."""
        with self._session:
            if self._on_server:
                self._closing = True
                return
            self._end_session()

    def _end_session(self) -> None:
        """Close the session (the caller holds ``_session``)."""
        con, self._con, self._closing = self._con, None, False
        if con is not None and self._pid == os.getpid():
            con.close()


@contextmanager
def _block(got: bool, release: Callable[[], None]) -> Iterator[bool]:
    """Yields ``got``; a lease obtained is released after the block, however the block ends."""
    if not got:
        yield False
        return
    try:
        yield True
    finally:
        release()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_opened: dict[tuple[str, str], Leases] = {}
_opened_lock = threading.Lock()


def open_leases(settings) -> Leases:
    """This process's leases for ``settings``' memory: on its PostgreSQL (``database_url``), else local to the
    data dir. One object per memory and process, so two Services of one memory in a process share it."""
    if settings.database_url:
        where = ("postgres", str(settings.database_url))
    else:
        where = ("local", str(Path(settings.resolved_data_dir()).resolve()))
    with _opened_lock:
        leases = _opened.get(where)
        if leases is None:
            leases = (PostgresLeases(where[1], timeout=getattr(settings, "database_timeout_seconds", 10.0))
                      if where[0] == "postgres" else LocalLeases())
            _opened[where] = leases
        return leases


def leases_of(services) -> Leases:
    """The leases a Services uses: its ``leases`` when it has them, else ``open_leases(services.settings)``."""
    leases = getattr(services, "leases", None)
    return leases if leases is not None else open_leases(services.settings)
