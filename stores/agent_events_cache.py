"""This process's copy of agents' short-term events on an embedded DuckDB file, so STM reads skip the scan.

Why: the events table interleaves agents (each writes about one event per 10 s), so one agent's 300 events lie in
~150 different column vectors of DuckDB's storage, and reading them decompresses every one of them for every
column: 30-60 ms for ``events(agent, 300)`` and 20 ms for ten ids among 300,000 rows (measured on 2 loaded
cores), where retrieval reads STM at every call. The file has one writer, this process, so a copy kept per agent
and updated by this process's own commits is exact; it is keyed by the agent's write stamp
(``key_generation``), so a write that does not update it (a rollback, a write inside a caller's transaction,
another table's erasure) makes the next read load the agent again. Bounded by rows held (least recently read
agents go first). Not used on PostgreSQL: another process may write, and the (agent_id, time) index already
serves the read there.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Iterator

MAX_ROWS = 300_000
"""Rows kept at most: a 1,000-agent run at the notes' largest STM capacity (300), about 200 MB of row tuples."""

Row = tuple[Any, ...]


def _order(row: Row) -> tuple[float, str]:
    """(time, event_id): the order of every read."""
    return row[2], row[0]



class EventsCache:
    """Agent -> (stamp, its event rows in time order) for ``SqlAgentTables`` on a connection with one writer."""

    def __init__(self, db, max_rows: int = MAX_ROWS):
        self._db = db
        self._entries: OrderedDict[str, tuple[int, list[Row]]] = OrderedDict()
        self._held = 0
        self.max_rows = max_rows
        self.loads = 0  # reads that went to the table (tests look at it)

    def rows(self, agent: str, load: Callable[[], list[Row]]) -> list[Row]:
        """The agent's rows in time order (the list is the cache's: callers do not change it)."""
        with self._db.lock:
            stamp = self._db.key_generation.get(agent, 0)
            entry = self._entries.get(agent)
            if entry is not None and entry[0] == stamp:
                self._entries.move_to_end(agent)
                return entry[1]
            rows = load()
            self.loads += 1
            self._put(agent, stamp, rows)
            return rows

    def current(self, agent: str) -> list[Row] | None:
        """The agent's rows when the copy kept is current (None: not kept, or its stamp moved)."""
        with self._db.lock:
            entry = self._entries.get(agent)
            if entry is None or entry[0] != self._db.key_generation.get(agent, 0):
                return None
            return entry[1]

    @contextmanager
    def writing(self, agents: Iterable[str]) -> Iterator[Callable[[Mapping[str, Sequence[Row]],
                                                                    Mapping[str, Iterable[str]]], None]]:
        """Around one write of these agents' events: the block calls the function it gets, after its transaction
        committed, with the rows it added and the ids it deleted per agent; the copies of the agents then follow
        the write, when the write was a transaction of its own (not part of a caller's, which may yet roll back)."""
        with self._db.lock:
            outermost = not self._db.in_transaction
            before = {a: self._db.key_generation.get(a, 0) for a in set(agents)}
            if not outermost:
                # Inside a caller's transaction the stamps move only when it ends: a copy read before this write
                # would still match them, so it goes now (a read later in the transaction loads the table).
                for agent in before:
                    self.forget(agent)

            def committed(added: Mapping[str, Sequence[Row]], deleted: Mapping[str, Iterable[str]]) -> None:
                for agent, stamp in before.items():
                    entry = self._entries.get(agent)
                    if entry is None or entry[0] != stamp:
                        continue  # absent, or its stamp moved: the next read loads the agent
                    gone = set(deleted.get(agent, ()))
                    rows = [r for r in entry[1] if r[0] not in gone] if gone else list(entry[1])
                    new = sorted(added.get(agent, ()), key=_order)
                    if new and rows and _order(new[0]) < _order(rows[-1]):
                        rows = sorted(rows + new, key=_order)
                    else:  # the usual case: newer events than any kept
                        rows.extend(new)
                    self._put(agent, self._db.key_generation.get(agent, 0), rows)

            yield committed

    def forget(self, agent: str) -> None:
        with self._db.lock:
            entry = self._entries.pop(agent, None)
            if entry is not None:
                self._held -= len(entry[1])

    def count(self, agent: str) -> int:
        """Rows held for the agent (what erasure must leave at zero)."""
        entry = self._entries.get(agent)
        return 0 if entry is None else len(entry[1])

    def _put(self, agent: str, stamp: int, rows: list[Row]) -> None:
        old = self._entries.pop(agent, None)
        self._held -= 0 if old is None else len(old[1])
        self._entries[agent] = (stamp, rows)
        self._held += len(rows)
        while self._held > self.max_rows and len(self._entries) > 1:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._held -= len(dropped)
