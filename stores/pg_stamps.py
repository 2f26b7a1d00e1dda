"""Write stamps read from PostgreSQL, kept for a short validity and shared by this process's connections.

A recall checks one user's stamp about five times (its keyword and turn indexes, its facts, procedures and
memory levels, each a ``StampedCache`` or an index compared with ``key_generation``). On PostgreSQL each check
was a round trip to ``lumina_versions``. Here a stamp read from the server is reused for ``STAMP_SECONDS``:

- Another process's write reaches this process's caches at most ``STAMP_SECONDS`` after its commit, well inside
  the server mode's promise (a turn written by one process is recalled in any other within one second).
- A write by this process (any ``PostgresConnection`` on the same database) drops the stamps it moved when it
  commits or rolls back, so this process reads its own writes at once, as before. A write naming no key (a raw
  delete of stamp rows, an erasure's) drops every stamp of the database.
- A read that began before such a drop does not store its value (an epoch counts the drops): it may have read
  the row before the commit, and must not keep that older stamp for a full validity after it.
- Inside a transaction stamps are read from the transaction itself, never kept (they may roll back).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

STAMP_SECONDS = 0.25
"""How long a stamp read from the server is reused: the most another process's write waits to reach this one."""
_MAX_KEYS = 4096  # stamps kept per database; past it the oldest reads go first


class SharedStamps:
    """The stamps of one database, for every connection of this process that opens it."""

    def __init__(self, seconds: float = STAMP_SECONDS) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._values: dict[str, tuple[int, float]] = {}
        self._epoch = 0
        self.server_reads = 0  # stamp reads that went to the server (tests and the profile read it)

    def get(self, key: str, default: int, read: Callable[[str], int | None]) -> int:
        """``key``'s stamp: a value read less than ``seconds`` ago, else ``read(key)`` (None: no row)."""
        now = time.monotonic()
        with self._lock:
            held = self._values.get(key)
            if held is not None and now - held[1] < self.seconds:
                return held[0]
            epoch = self._epoch
        value = read(key)
        self.server_reads += 1
        stamp = default if value is None else value
        with self._lock:
            if self._epoch == epoch:
                self._values.pop(key, None)
                self._values[key] = (stamp, now)
                if len(self._values) > _MAX_KEYS:
                    del self._values[next(iter(self._values))]
        return stamp

    def moved(self, keys: Iterable[str] | None) -> None:
        """A write of this process ended (committed or rolled back): its keys' stamps are read anew; ``None``:
        every stamp is."""
        with self._lock:
            self._epoch += 1
            if keys is None:
                self._values.clear()
            else:
                for key in keys:
                    self._values.pop(key, None)


_registry: dict[str, SharedStamps] = {}
_registry_lock = threading.Lock()


def stamps_of(database: str) -> SharedStamps:
    """The process's stamps of ``database`` (its URI): every connection opened on it shares them."""
    with _registry_lock:
        return _registry.setdefault(database, SharedStamps())
