"""Long-term records' accesses (a retrieval's hits, P5's ``access_count``), counted in memory and written together.

Why: a retrieval wrote its hits' accesses in a transaction of its own, about half of an LTM retrieval's time on
an embedded file. Accesses only feed forgetting (``maintenance`` reads them), so they are summed here and written
in one statement inside the next write of the agent tables (a store, a consolidation, a maintenance), or on their
own when ``max_pending`` records are waiting or the oldest has waited ``max_age_seconds``, and when the tables
close. Reads of records in this process add the pending accesses to what the table holds, so every reader here
sees exact counts. A crash loses the accesses not yet written (at most ``max_pending`` records' worth, none older
than ``max_age_seconds`` when the next access came); another process sees them once written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
Columns = tuple[list[str], list[str], list[int], list[float]]
"""Agents, record ids, accesses, last access: one entry per record, the parameters of the one UPDATE."""


class PendingAccesses:
    """(agent, record) -> [accesses, last access] not yet in the table."""

    def __init__(self, max_pending: int = 512, max_age_seconds: float = 30.0) -> None:
        self.max_pending, self.max_age_seconds = max_pending, max_age_seconds
        self._pending: dict[tuple[str, str], list[float]] = {}
        self._since: float | None = None
        self._started = self._ended = 0  # writes begun and ended: a read that saw either move is done again
        self._lock = threading.Lock()  # the dicts and counters
        self._write_lock = threading.Lock()  # one write at a time

    def add(self, agent: str, ids: Sequence[str], at: float) -> bool:
        """One access of each id; True when the pending accesses are due to be written."""
        with self._lock:
            for item in ids:
                use = self._pending.setdefault((agent, item), [0, at])
                use[0] += 1
                use[1] = max(use[1], at)
            if self._since is None:
                self._since = time.monotonic()
            return len(self._pending) >= self.max_pending or time.monotonic() - self._since >= self.max_age_seconds

    def __len__(self) -> int:
        return len(self._pending)

    @contextmanager
    def writing(self) -> Iterator[Callable[[], Columns]]:
        """Around a transaction that writes the pending accesses: the block calls the function it gets (before
        or inside the transaction) for the columns to write. Until the block ends they count as being written; if it
        raises they are pending again, so a failed write loses none."""
        with self._write_lock:
            taken: dict[tuple[str, str], list[float]] = {}

            def take() -> Columns:
                nonlocal taken
                with self._lock:
                    taken, self._pending, self._since = self._pending, {}, None
                    self._started += 1
                keys = list(taken)
                return ([k[0] for k in keys], [k[1] for k in keys], [int(taken[k][0]) for k in keys],
                        [float(taken[k][1]) for k in keys])

            try:
                yield take
            except BaseException:
                with self._lock:
                    for key, (n, last) in taken.items():
                        use = self._pending.setdefault(key, [0, last])
                        use[0] += n
                        use[1] = max(use[1], last)
                    if taken and self._since is None:
                        self._since = time.monotonic()
                raise
            finally:
                with self._lock:
                    self._ended = self._started

    def read(self, agent: str, load: Callable[[], T]) -> tuple[T, dict[str, tuple[int, float]]]:
        """``load()`` (a read of the table) and the agent's accesses it does not hold yet, per record id. A
        read that overlaps a write of accesses cannot tell whether it saw them: it waits for that write to end
        and reads again."""
        while True:
            with self._lock:
                busy, seen = self._started != self._ended, self._started
            if busy:
                with self._write_lock:
                    pass
                continue
            loaded = load()
            with self._lock:
                if self._started == seen and self._ended == seen:
                    return loaded, {item: (int(n), float(last)) for (a, item), (n, last) in self._pending.items()
                                    if a == agent}

    def forget(self, agent: str) -> None:
        """Drop the agent's pending accesses (erasure: its records are gone)."""
        with self._lock:
            for key in [k for k in self._pending if k[0] == agent]:
                del self._pending[key]
