"""Uses that recall reports (a fact or a procedure was shown), summed in memory and written together.

Every recall that shows a fact used to write its use at once: a DuckDB transaction of ~4–7 ms on the query's
path (issue 19: the largest single cost left in a LoCoMo recall). Uses only feed forgetting, which reads them
once a day, so they are summed here and written in one statement when 512 are pending or the oldest is 30 s
old, before any reader of use counts (the forgetting steps, listings) and when the archive closes. A crash
loses at most those seconds of use counts — a fact may then be marked idle a little earlier, never lost.
"""

from __future__ import annotations

import threading
import time
from typing import Sequence

from .ids import validate_id
from .stamped_cache import StampedCache


class PendingUses:
    def __init__(self, max_pending: int = 512, max_age_seconds: float = 30.0) -> None:
        self._uses: dict[tuple[str, str], list[float]] = {}  # (user, id) -> [count, last use]
        self._since: float | None = None
        self._lock = threading.Lock()
        self.max_pending, self.max_age_seconds = max_pending, max_age_seconds

    def add(self, user_id: str, ids: Sequence[str], now: float) -> bool:
        """Count one use of each id; True when the pending uses are due to be written."""
        with self._lock:
            for item in ids:
                use = self._uses.setdefault((user_id, item), [0.0, now])
                use[0] += 1
                use[1] = max(use[1], now)
            if self._since is None:
                self._since = time.monotonic()
            return len(self._uses) >= self.max_pending or time.monotonic() - self._since >= self.max_age_seconds

    def drain(self) -> tuple[list[str], list[str], list[int], list[float]]:
        """The pending uses as columns (user ids, ids, counts, last uses), now no longer pending."""
        with self._lock:
            uses, self._uses, self._since = self._uses, {}, None
        keys = list(uses)
        return ([k[0] for k in keys], [k[1] for k in keys], [int(uses[k][0]) for k in keys],
                [float(uses[k][1]) for k in keys])

    def forget(self, user_id: str) -> None:
        """Drop the user's pending uses (erasure: their rows are gone, the uses would write nothing)."""
        with self._lock:
            for key in [k for k in self._uses if k[0] == user_id]:
                del self._uses[key]


class RecallReads:
    """What a table of the archive keeps for recall between queries: its per-user cached reads
    (stores.stamped_cache) and recall's pending use counts. The table writes the uses (``flush_uses``, its
    own SQL) and names the ids it counts (``use_ids``: the argument named in errors)."""

    use_ids = "ids"

    def _keep_recall_reads(self, db) -> None:
        self._recall_cache = StampedCache(db)
        self._uses = PendingUses()

    def flush_uses(self) -> int:  # pragma: no cover - every table defines its own
        raise NotImplementedError

    def mark_accessed(self, user_id: str, ids: Sequence[str], now: float) -> int:
        """Recall showed these: one use more each. Counted in memory and written with others (``PendingUses``):
        before forgetting or a listing reads them, or within 30 s. Returns how many were counted."""
        user_id = validate_id(user_id, "user_id")
        wanted = [validate_id(i, self.use_ids) for i in ids]
        if wanted and self._uses.add(user_id, wanted, float(now)):
            self.flush_uses()
        return len(wanted)

    # what recall keeps of the user in this process (graphs.registry's "cache.recall_reads")
    def cached_for(self, user_id: str) -> int:
        return self._recall_cache.count(user_id)

    def forget_cached(self, user_id: str) -> None:
        self._recall_cache.forget(user_id)
        self._uses.forget(user_id)
