"""A client-side bound on every PostgreSQL call: past its deadline, the connection's socket is shut down.

``statement_timeout`` is enforced by the server, so a server that is paused (SIGSTOP, a frozen VM, a saturated
host) never fires it; libpq has no client-side query timeout, and TCP keepalives do not apply on a unix socket or
while the host's kernel still answers. One daemon thread per process keeps the deadlines of the calls in flight
and, when one passes, shuts the socket down: the waiting call then fails at once as a broken connection (which
the callers turn into ``StoreUnavailable``), and the pool discards that connection.

``bounded_connection(seconds)`` is a psycopg connection class whose every wait on the server (statements,
fetches, COMMIT and ROLLBACK, a transaction's BEGIN) is watched so: for pools (``connection_class=``) and
sessions of their own (``.connect``), whatever code runs on them. ``longer(con, seconds)`` widens one
connection's bound for a call meant to run long (a VACUUM FULL).
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg


IDLE_LOOK_SECONDS = 1.0  # the longest the watchdog sleeps between looks at the deadlines (each >= 1 s away: grace)


def grace(timeout: float) -> float:
    """How long past the server's own ``statement_timeout`` the client waits before breaking the connection."""
    return timeout * 1.5 + 1.0


class Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, Any]] = {}
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None
        # When the thread next looks at the deadlines. A call whose deadline comes later does not wake it (a wake
        # per call cost a recall ~10% of its time in GIL hand-overs): it is seen at that look, before it is due.
        self._looks_at = 0.0
        self.broken = 0
        """Connections broken because a call outlived its deadline (for stats and tests)."""

    @contextmanager
    def watching(self, con: Any, seconds: float) -> Iterator[None]:
        """Bound what runs inside to ``seconds`` on ``con`` (a psycopg connection)."""
        token = next(self._tokens)
        deadline = time.monotonic() + seconds
        with self._cond:
            self._armed[token] = (deadline, con)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="lumina-pg-watchdog", daemon=True)
                self._thread.start()
            elif deadline < self._looks_at:
                self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._armed.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                if not self._armed:
                    self._looks_at = now + IDLE_LOOK_SECONDS
                    self._cond.wait(IDLE_LOOK_SECONDS)
                    continue
                token, (deadline, con) = min(self._armed.items(), key=lambda item: item[1][0])
                left = deadline - now
                if left > 0:
                    self._looks_at = deadline
                    self._cond.wait(left)
                    continue
                del self._armed[token]
            _break(con)
            self.broken += 1


def _break(con: Any) -> None:
    """Shut the connection's socket down (on a duplicate of its descriptor, so the connection's own stays valid
    for psycopg to close): the call blocked on it sees the connection end."""
    try:
        fd = con.pgconn.socket
        dup = socket.socket(fileno=os.dup(fd))
    except (OSError, ValueError, AttributeError):
        return  # already closed
    try:
        dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        dup.close()


WATCHDOG = Watchdog()


class _BoundedConnection(psycopg.Connection):
    """A psycopg connection whose waits on the server are watched (see ``bounded_connection``)."""

    bound: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        # A wait given its own timeout (LISTEN's notifies) is already bounded by the caller.
        if self.bound is None or timeout is not None:
            return super().wait(gen, interval=interval, timeout=timeout)
        with WATCHDOG.watching(self, self.bound):
            return super().wait(gen, interval=interval, timeout=timeout)


@lru_cache(maxsize=None)
def bounded_connection(seconds: float) -> type[psycopg.Connection]:
    """A psycopg connection class every wait of which breaks the connection after ``seconds`` (``grace`` of the
    statement timeout): one class per bound, so pools take it as ``connection_class``."""
    return type("BoundedConnection", (_BoundedConnection,), {"bound": float(seconds)})


@contextmanager
def longer(con: Any, seconds: float) -> Iterator[None]:
    """``con``'s waits bounded by ``seconds`` inside the block (a call meant to outlast the usual bound)."""
    if not isinstance(con, _BoundedConnection):
        yield
        return
    before = con.__dict__.get("bound")
    con.bound = float(seconds)
    try:
        yield
    finally:
        if before is None:
            del con.bound
        else:
            con.bound = before
