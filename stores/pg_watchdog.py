"""A client-side bound on every PostgreSQL call: past its deadline, the connection's socket is shut down.

``statement_timeout`` is enforced by the server, so a server that is paused (SIGSTOP, a frozen VM, a saturated
host) never fires it; libpq has no client-side query timeout, and TCP keepalives do not apply on a unix socket or
while the host's kernel still answers. One daemon thread per process keeps the deadlines of the calls in flight
and, when one passes, shuts the socket down: the waiting call then fails at once as a broken connection (which
the callers turn into ``StoreUnavailable``), and the pool discards that connection.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def grace(timeout: float) -> float:
    """How long past the server's own ``statement_timeout`` the client waits before breaking the connection."""
    return timeout * 1.5 + 1.0


class Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, Any]] = {}
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None
        self.broken = 0
        """Connections broken because a call outlived its deadline (for stats and tests)."""

    @contextmanager
    def watching(self, con: Any, seconds: float) -> Iterator[None]:
        """Bound what runs inside to ``seconds`` on ``con`` (a psycopg connection)."""
        token = next(self._tokens)
        with self._cond:
            self._armed[token] = (time.monotonic() + seconds, con)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="lumina-pg-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._armed.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._armed:
                    self._cond.wait()
                token, (deadline, con) = min(self._armed.items(), key=lambda item: item[1][0])
                left = deadline - time.monotonic()
                if left > 0:
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
