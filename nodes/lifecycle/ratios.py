"""Ratio enforcement (F4, batch step 4) and revival (F5), per user (``group``), vectorised with sorts.

What the ratios bound — the notes' reading chosen here:

- The denominator is a user's non-protected memories **including the archive** (the notes' targets are
  15/30/35 % plus 20 % "消去" = 100 %, and their year-one distribution counts the archive). Excluding the archive
  would make the three caps sum to 80 % of what remains and push 20 % of the active memories out at every batch.
- A level is over its ratio when ``count / total > ratio``; the excess goes down one level, so at most
  ``floor(ratio × total)`` stay (``_allowed``). Levels 1, 2, 3 are handled in that order, each after the one
  above has pushed memories into it; level 3's excess is archived (reason RATIO).
- Who goes first: retention ascending, then ``created`` ascending, then ``recall_count`` ascending, then row
  order (the notes' priority table; a memory compressed by threshold earlier in the same batch may be compressed
  again — the notes accept double compression).
- Protected and archived memories are never moved; protected ones are not counted.

Revival runs after ratio enforcement (step 4.5, our placement: the notes give no step number; before step 1 the
reinforcement would overwrite the revival score at once, and before step 4 the level-3 check would be made on
counts the enforcement is about to change). A flagged archived memory is revived while the user's level 3 has
room — ``(level-3 count + 1) / total <= level3_ratio`` (the notes write "現在比率 + 1 > level3_ratio", read as a
count) — earliest request first (``revival_requested_at``, then ``created``, then row). A protected archived memory
is outside the ratios and revives without room. A request that finds no room is cleared (the notes: "見送り").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .columns import ARCHIVED, NOT_ARCHIVED, ArchiveReason, MemoryColumns
from .formulas import revival_score
from .params import LifecycleParams

_RATIO_SLACK = 1e-9  # 0.29 × 100 is 28.999999999999996
_HISTOGRAM_CELLS = 1 << 20  # groups × buckets in ``_could_be_first``'s histogram: 8 MB of counts at most
_BUCKETS = 1024


def _allowed(ratio: float, total: np.ndarray, params: LifecycleParams) -> np.ndarray:
    capped = np.floor(ratio * total + _RATIO_SLACK).astype(np.int64)
    return np.where(total < params.ratio_min_memories, total, capped)


class GroupCounts(NamedTuple):
    """Per group (user): each row's group code, how many groups, and the ratios' denominator."""

    codes: np.ndarray  # int64, each row's group as a code in range(count), in the order of the group values
    count: int
    total: np.ndarray  # int64 per code: non-protected memories, the archive included


def group_counts(columns: MemoryColumns) -> GroupCounts:
    """Users numbered densely (a store's load) are their own codes, shifted: ``np.unique`` would sort every
    row for them. Protection does not change in a batch, so ratios and revival share these."""
    group = columns.group
    if not len(group):
        return GroupCounts(group, 0, np.zeros(0, np.int64))
    low, high = int(group.min()), int(group.max())
    if high - low <= 2 * len(group) + 1024:
        codes, count = (group - low if low else group), high - low + 1
    else:
        _, codes = np.unique(group, return_inverse=True)
        codes, count = codes.reshape(-1), int(codes.max()) + 1
    total = np.bincount(codes, minlength=count)
    protected = np.flatnonzero(columns.protected)
    if len(protected):
        total -= np.bincount(codes[protected], minlength=count)
    return GroupCounts(codes, count, total)


def _rank_in_group(sorted_groups: np.ndarray) -> np.ndarray:
    """0, 1, 2 … within each run of equal values of an already sorted array."""
    firsts = np.searchsorted(sorted_groups, sorted_groups, side="left")
    return np.arange(len(sorted_groups)) - firsts


def _could_be_first(values: np.ndarray, codes: np.ndarray, need: np.ndarray, count: int) -> np.ndarray:
    """Mask of the rows that may be among their group's ``need[code]`` lowest ``values``: every row in a bucket
    of the group's value histogram at or below the bucket holding its need-th lowest value. A superset of the
    rows a full sort would pick first, holding every row that sorts before them: sorting only these gives the
    same first rows in the same order. (Buckets are monotone in the value; NaN or equal values: everything.)"""
    everything = np.ones(len(values), bool)
    buckets = min(_BUCKETS, _HISTOGRAM_CELLS // max(count, 1))
    if buckets < 2 or not len(values):
        return everything
    low, high = values.min(), values.max()
    if not (np.isfinite(low) and np.isfinite(high) and high > low):
        return everything
    with np.errstate(over="ignore"):  # values a subnormal apart: no usable scale, checked just below
        scale = buckets / (high - low)
    if not np.isfinite(scale):
        return everything
    bucket = ((values - low) * scale).astype(np.int64)
    np.minimum(bucket, buckets - 1, out=bucket)
    histogram = np.bincount(codes * buckets + bucket, minlength=count * buckets).reshape(count, buckets)
    before = (histogram.cumsum(axis=1) < need[:, None]).sum(axis=1)  # buckets wholly before the need-th value
    return bucket <= before[codes]


RATIO_WRITES = ("level", "archived_on", "archive_reason")
REVIVE_WRITES = ("archived_on", "archive_reason", "revival_requested", "revival_requested_at", "level", "recalled",
                 "recall_count", "retention", "idle_days")


def enforce_ratios(columns: MemoryColumns, params: LifecycleParams, today: int) -> MemoryColumns:
    """Step 4: push each level's excess one level down, archiving level 3's."""
    work = columns.copied(RATIO_WRITES)
    enforce_ratios_into(work, params, today, group_counts(columns))
    return work


def enforce_ratios_into(work: MemoryColumns, params: LifecycleParams, today: int, groups: GroupCounts,
                        active: np.ndarray | None = None) -> None:
    """Step 4 on ``work``'s own ``RATIO_WRITES`` arrays. ``active``: rows known to hold every non-archived one."""
    # Only rows that can move are looked at (archive and protected memories are most rows after a while), and
    # of those only the ones a level's excess could reach are sorted: a typical day pushes a few dozen of a
    # user's thousands, and sorting all of them on four keys was most of a 1M-memory batch.
    if active is None:
        active = np.flatnonzero(work.level != ARCHIVED)
    movable = active[(work.level[active] != ARCHIVED) & ~work.protected[active]]
    codes, count = groups.codes[movable], groups.count
    level = work.level[movable]
    for from_level, ratio in ((1, params.level1_ratio), (2, params.level2_ratio), (3, params.level3_ratio)):
        at = np.flatnonzero(level == from_level)
        excess = np.bincount(codes[at], minlength=count) - _allowed(ratio, groups.total, params)
        at = at[excess[codes[at]] > 0]
        if not len(at):
            continue
        at = at[_could_be_first(work.retention[movable[at]], codes[at], excess, count)]
        rows = movable[at]  # ascending: ties beyond the three keys go by row, as in a sort of every row
        queue = at[np.lexsort((work.recall_count[rows], work.created[rows], work.retention[rows], codes[at]))]
        level[queue[_rank_in_group(codes[queue]) < excess[codes[queue]]]] = from_level + 1
    work.level[movable] = level
    archived_now = movable[level == ARCHIVED]
    work.archived_on[archived_now] = today
    work.archive_reason[archived_now] = ArchiveReason.RATIO


def revive(
    columns: MemoryColumns, params: LifecycleParams, today: int
) -> tuple[MemoryColumns, np.ndarray, np.ndarray]:
    """Step 4.5: revive flagged archived memories to level 3 while level 3 has room.
    Returns the columns, the revived rows and the refused requests."""
    if not _requested(columns).size:
        none = np.zeros(len(columns), bool)
        return columns, none, none
    work = columns.copied(REVIVE_WRITES)
    revived, refused = revive_into(work, params, today, group_counts(columns))
    return work, revived, refused


def _requested(columns: MemoryColumns) -> np.ndarray:
    flagged = np.flatnonzero(columns.revival_requested)
    return flagged[columns.level[flagged] == ARCHIVED]


def revive_into(work: MemoryColumns, params: LifecycleParams, today: int,
                groups: GroupCounts) -> tuple[np.ndarray, np.ndarray]:
    """Step 4.5 on ``work``'s own ``REVIVE_WRITES`` arrays. Returns the revived rows and the refused requests."""
    requested = _requested(work)
    revived, refused = np.zeros(len(work), bool), np.zeros(len(work), bool)
    if not len(requested):
        return revived, refused
    codes = groups.codes
    level3 = np.flatnonzero(work.level == 3)
    level3 = level3[~work.protected[level3]]
    at_level3 = np.bincount(codes[level3], minlength=groups.count)
    room = np.maximum(_allowed(params.level3_ratio, groups.total, params) - at_level3, 0)

    asking = requested[~work.protected[requested]]
    asked_at = work.revival_requested_at[asking]
    asked_at = np.where(np.isnan(asked_at), np.inf, asked_at)
    queue = asking[np.lexsort((work.created[asking], asked_at, codes[asking]))]
    revived[queue[_rank_in_group(codes[queue]) < room[codes[queue]]]] = True
    revived[requested[work.protected[requested]]] = True  # outside the ratios: no room needed
    refused[requested] = True
    refused &= ~revived

    # A refused request is cleared too (its archive fields stay); the revived rows get the notes' fields.
    back = np.flatnonzero(revived)
    work.retention[back] = revival_score(work.intensity[back], today - work.archived_on[back], params)
    work.archived_on[back] = NOT_ARCHIVED
    work.archive_reason[back] = ArchiveReason.ACTIVE
    work.revival_requested[requested] = False
    work.revival_requested_at[requested] = np.nan
    work.level[back] = 3
    work.recalled[back] = True
    work.recall_count[back] += 1
    work.idle_days[back] = 0.0
    return revived, refused
