"""Per-user reads kept until the user's write stamp moves (issue 19: no DuckDB round trip inside a recall).

Recall reads the same few things of a user on every query — their facts, their procedures, their memories'
levels — and each read is a DuckDB query of ~1–4 ms, most of it the round trip. The archive's connection
stamps every user a write transaction touches (``GuardedConnection.key_generation``), so a read taken at
stamp *s* is still exact while the stamp is *s*. Writes that touch no user (use counts and recall flags,
which no recall reads) leave the stamp alone: a cached row may show an older use count, never an older fact.
The last flush stage refreshes the entries (nodes.retrieval.warm), so the recall after a write finds them current.
On PostgreSQL the stamps are rows every process's writes move (``PostgresConnection.key_generation``), so an entry
follows other processes' writes too: within stores.pg_stamps.STAMP_SECONDS, the time a stamp read from the server
is reused (this process's own writes are seen at once).
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable


class StampedCache:
    def __init__(self, db, max_users: int = 128) -> None:
        self._db = db
        self._entries: OrderedDict[tuple[str, Hashable], tuple[int, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_users * 4
        self.loads = 0  # reads that went to the database (tests and the bench look at it)

    def get(self, user_id: str, key: Hashable, load: Callable[[], Any]) -> Any:
        """``load()``'s value for this user and key, read again only when the user's stamp moved. A copy: callers
        may change what they get."""
        # The stamp is read before loading: a write landing meanwhile leaves the older stamp, so the next call reloads.
        stamp = self._db.key_generation.get(user_id, 0)
        with self._lock:
            entry = self._entries.get((user_id, key))
            if entry is not None and entry[0] == stamp:
                self._entries.move_to_end((user_id, key))
                return copy.copy(entry[1]) if not isinstance(entry[1], list) else [copy.copy(r) for r in entry[1]]
        value = load()
        self.loads += 1
        with self._lock:
            self._entries[(user_id, key)] = (stamp, value)
            self._entries.move_to_end((user_id, key))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return copy.copy(value) if not isinstance(value, list) else [copy.copy(r) for r in value]

    def forget(self, user_id: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == user_id]:
                del self._entries[key]

    def count(self, user_id: str) -> int:
        """Entries held for the user (the registry's in-process place counts them; erasure forgets them)."""
        with self._lock:
            return sum(1 for k in self._entries if k[0] == user_id)
