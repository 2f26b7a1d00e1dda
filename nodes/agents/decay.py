"""Forgetting of long-term records (P5, the note's section 4.3): decay, and the plan of what goes.

decay = importance · exp(−λ·hours since creation) · log(1 + access) / log(1 + max_access), with max_access the
agent's largest access count. When no record of the agent was ever accessed (max_access = 0) the access term is
0 for all; and for any record never accessed log(1 + 0) = 0, so its decay is 0 whatever its importance or age.

Read literally, the note's deletion rule (decay < 0.05 and access_count == 0) is therefore "every never-accessed
record", one consolidated a minute ago included: the access condition already implies the decay one. The rule's
intent is "forget what has faded and was never used", so the deletion test measures fading without the access
term, which says nothing of a record never used: a record goes when it was never accessed and
importance · exp(−λ·hours) < ``delete_below_decay``. With the defaults an unused record of importance 0.5 goes
after about 4.6 hours of the run, one of 0.2 after about 2.8 hours; an accessed record is never deleted here.

Compression (merging records into summaries, which keeps their content) follows the note as written: when the
agent holds at least ``compress_at`` · ``ltm_cap`` records (after the deletions), the records whose decay (with
the access term) is below ``compress_below_decay`` are candidates, least decayed last; records never accessed
have decay 0 and so come first, the least important and oldest of them first.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lumina_memory.stores.agent_records import LtmRecord
from lumina_memory.stores.errors import InvalidInput

SECONDS_PER_HOUR = 3600.0


class Plan(BaseModel):
    """What maintenance does to one agent's LTM: ``delete`` and ``compress`` hold memory ids (disjoint; compress
    in the order to merge, lowest decay first); ``decay`` is every record's decay factor, to store."""

    model_config = ConfigDict(frozen=True)

    delete: list[str] = Field(default_factory=list)
    compress: list[str] = Field(default_factory=list)
    decay: dict[str, float] = Field(default_factory=dict)


def _hours(created_at, now: float) -> np.ndarray:
    created = np.asarray(created_at, dtype=np.float64)
    return np.maximum(float(now) - created, 0.0) / SECONDS_PER_HOUR


def fading(importance, created_at, now: float, lam: float) -> np.ndarray:
    """importance · exp(−λ·hours): the decay without its access term (a record created after ``now`` is 0 h old)."""
    return np.asarray(importance, dtype=np.float64) * np.exp(-float(lam) * _hours(created_at, now))


def access_weight(access_count, max_access: int | None = None) -> np.ndarray:
    """log(1 + access) / log(1 + max_access), 0 for all when max_access is 0 (``max_access`` defaults to the
    largest of ``access_count``)."""
    access = np.asarray(access_count, dtype=np.float64)
    if access.size and access.min() < 0:
        raise InvalidInput("access_count", "must not be negative")
    top = float(access.max(initial=0.0)) if max_access is None else float(max_access)
    if top < 0:
        raise InvalidInput("max_access", "must not be negative")
    return np.log1p(access) / np.log1p(top) if top > 0 else np.zeros_like(access)


def decay_factors(importance, created_at, access_count, now: float, lam: float, max_access: int | None = None
                  ) -> np.ndarray:
    """The note's decay for arrays of records (``max_access`` defaults to the largest of ``access_count``)."""
    return fading(importance, created_at, now, lam) * access_weight(access_count, max_access)


def forgetting_plan(records: Sequence[LtmRecord], now: float, params) -> Plan:
    """Deletions and compression candidates among one agent's records (every record of the agent)."""
    if not records:
        return Plan()
    if len({r.agent_id for r in records}) > 1:
        raise InvalidInput("records", "a forgetting plan is for one agent's records")
    importance = np.array([r.importance for r in records])
    created = np.array([r.created_at for r in records])
    access = np.array([r.access_count for r in records])
    decay = decay_factors(importance, created, access, now, params.decay_lambda)
    faded = fading(importance, created, now, params.decay_lambda)
    gone = (access == 0) & (faded < params.delete_below_decay)
    delete = [r.memory_id for r, g in zip(records, gone) if g]
    compress: list[str] = []
    if len(records) - len(delete) >= params.compress_at * params.ltm_cap:
        candidates = [i for i in range(len(records)) if not gone[i] and decay[i] < params.compress_below_decay]
        candidates.sort(key=lambda i: (decay[i], faded[i], records[i].created_at, records[i].memory_id))
        compress = [records[i].memory_id for i in candidates]
    return Plan(delete=delete, compress=compress,
                decay={r.memory_id: round(float(d), 6) for r, d in zip(records, decay)})
