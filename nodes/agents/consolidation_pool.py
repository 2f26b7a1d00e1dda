"""The worker pool that consolidates agents in the background (P4: "consolidation never blocks store or retrieve").

``request(agent, reason)`` queues an agent (at most once while it waits: a second request for a queued agent is
merged into the first) and returns at once; ``settings.agents.consolidation_workers`` threads take agents off the
queue in request order and run the job (``AgentMemory._consolidate_queued``). One job per agent at a time:
``AgentLocks`` keeps a lock per agent that the pool's workers, an on-demand ``consolidate`` and ``maintenance``
all take (the lease across processes is taken by the job itself); an agent whose lock is taken by a caller waits
in its worker, other agents go on in the other workers. Stores and retrievals take no agent lock, so they run
while the agent is being consolidated. The threads start on the first request and are daemons; ``close`` stops
them after the jobs running finish. ``wait_idle`` lets a caller (a benchmark, a test) wait until the queue is
empty and no job runs.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator

from lumina_memory.stores.leases import LeaseBusy

log = logging.getLogger("lumina.agents.pool")


class AgentLocks:
    """A lock per agent, made on first use and dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Condition()
        self._locks: dict[str, tuple[threading.RLock, int]] = {}

    @contextlib.contextmanager
    def hold(self, agent: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(agent, (threading.RLock(), 0))
            self._locks[agent] = (lock, users + 1)
            self._guard.notify_all()
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[agent]
                if users == 1:
                    del self._locks[agent]
                else:
                    self._locks[agent] = (lock, users - 1)
                self._guard.notify_all()

    def users(self, agent: str) -> int:
        """Callers holding or waiting for the agent's lock."""
        with self._guard:
            return self._locks.get(agent, (None, 0))[1]

    def wait_users(self, agent: str, n: int, timeout: float | None = None) -> bool:
        """Wait until ``n`` callers hold or wait for the agent's lock; False if ``timeout`` seconds passed first."""
        with self._guard:
            return self._guard.wait_for(lambda: self._locks.get(agent, (None, 0))[1] == n, timeout)


class ConsolidationPool:
    def __init__(self, job: Callable[[str], int], workers: int):
        self.job = job
        self.workers = max(1, int(workers))
        self.locks = AgentLocks()
        self._cond = threading.Condition()
        self._queue: OrderedDict[str, str] = OrderedDict()
        self._running: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self.done: dict[str, int] = {}
        """Jobs finished per reason (capacity, cycle, demand), for reports."""
        self.skipped = 0
        """Jobs skipped because another process held the agent's lease (it was consolidating the agent)."""
        self.failed: list[tuple[str, str]] = []
        """(agent, error) of jobs that raised, newest last (the agent stays in STM and is queued again later)."""

    def request(self, agent: str, reason: str = "demand") -> bool:
        """Queue ``agent``; False when it was already waiting (or the pool is closed)."""
        with self._cond:
            if self._closed or agent in self._queue:
                return False
            self._queue[agent] = reason
            self._start()
            self._cond.notify()
            return True

    def pending(self) -> list[str]:
        with self._cond:
            return list(self._queue)

    def busy(self) -> bool:
        with self._cond:
            return bool(self._queue or self._running)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running; False if ``timeout`` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._running, timeout)

    def _start(self) -> None:
        while len(self._threads) < self.workers:
            t = threading.Thread(target=self._work, name=f"agents-consolidation-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()

    def _next(self) -> tuple[str, str] | None:
        """The oldest queued agent no worker is consolidating (None when closed)."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                for agent in self._queue:
                    if agent not in self._running:
                        reason = self._queue.pop(agent)
                        self._running.add(agent)
                        return agent, reason
                self._cond.wait()

    def _work(self) -> None:
        while (taken := self._next()) is not None:
            agent, reason = taken
            try:
                made = self.job(agent)
                log.info("agent %s consolidated (%s): %d records", agent, reason, made)
            except LeaseBusy:
                log.info("agent %s (%s): another process is consolidating it; skipped", agent, reason)
                with self._cond:
                    self.skipped += 1
            except Exception as exc:  # noqa: BLE001 - a worker never dies; the failure is kept and logged
                log.warning("consolidation of %s (%s) failed: %s: %s", agent, reason, type(exc).__name__, exc)
                with self._cond:
                    self.failed.append((agent, f"{type(exc).__name__}: {exc}"))
                    del self.failed[:-100]
            finally:
                with self._cond:
                    self._running.discard(agent)
                    self.done[reason] = self.done.get(reason, 0) + 1
                    self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join()
        self._threads.clear()
