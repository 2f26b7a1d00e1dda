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

import numpy as np

from .columns import ARCHIVED, ArchiveReason, MemoryColumns
from .formulas import revival_score, unarchive
from .params import LifecycleParams

_RATIO_SLACK = 1e-9  # 0.29 × 100 is 28.999999999999996


def _allowed(ratio: float, total: np.ndarray, params: LifecycleParams) -> np.ndarray:
    capped = np.floor(ratio * total + _RATIO_SLACK).astype(np.int64)
    return np.where(total < params.ratio_min_memories, total, capped)


def _groups(columns: MemoryColumns) -> tuple[np.ndarray, int]:
    _, codes = np.unique(columns.group, return_inverse=True)
    return codes.reshape(-1), int(codes.max(initial=-1)) + 1


def _rank_in_group(sorted_groups: np.ndarray) -> np.ndarray:
    """0, 1, 2 … within each run of equal values of an already sorted array."""
    firsts = np.searchsorted(sorted_groups, sorted_groups, side="left")
    return np.arange(len(sorted_groups)) - firsts


def enforce_ratios(columns: MemoryColumns, params: LifecycleParams, today: int) -> MemoryColumns:
    """Step 4: push each level's excess one level down, archiving level 3's."""
    groups, count = _groups(columns)
    counted = ~columns.protected
    total = np.bincount(groups[counted], minlength=count)
    # Only rows that can move are sorted (a stable sort restricted to them keeps the same order): the
    # archive and protected memories are most rows after a while, and the sort was most of a batch's time.
    movable = np.flatnonzero(counted & (columns.level != ARCHIVED))
    order = movable[np.lexsort((columns.recall_count[movable], columns.created[movable], columns.retention[movable],
                                groups[movable]))]
    level = columns.level.copy()
    archived_now = np.zeros(len(columns), bool)
    for from_level, ratio in ((1, params.level1_ratio), (2, params.level2_ratio), (3, params.level3_ratio)):
        at_level = counted & (level == from_level)
        excess = np.bincount(groups[at_level], minlength=count) - _allowed(ratio, total, params)
        if not (excess > 0).any():
            continue
        queue = order[at_level[order]]
        moved = queue[_rank_in_group(groups[queue]) < excess[groups[queue]]]
        level[moved] = from_level + 1
        if from_level == 3:
            archived_now[moved] = True
    return columns.with_(
        level=level,
        archived_on=np.where(archived_now, today, columns.archived_on),
        archive_reason=np.where(archived_now, ArchiveReason.RATIO, columns.archive_reason).astype(np.int8),
    )


def revive(
    columns: MemoryColumns, params: LifecycleParams, today: int
) -> tuple[MemoryColumns, np.ndarray, np.ndarray]:
    """Step 4.5: revive flagged archived memories to level 3 while level 3 has room.
    Returns the columns, the revived rows and the refused requests."""
    requested = (columns.level == ARCHIVED) & columns.revival_requested
    none = np.zeros(len(columns), bool)
    if not requested.any():
        return columns, none, none
    groups, count = _groups(columns)
    counted = ~columns.protected
    total = np.bincount(groups[counted], minlength=count)
    at_level3 = np.bincount(groups[counted & (columns.level == 3)], minlength=count)
    room = np.maximum(_allowed(params.level3_ratio, total, params) - at_level3, 0)

    asked_at = np.where(np.isnan(columns.revival_requested_at), np.inf, columns.revival_requested_at)
    asking = np.flatnonzero(requested & counted)
    queue = asking[np.lexsort((columns.created[asking], asked_at[asking], groups[asking]))]
    fits = _rank_in_group(groups[queue]) < room[groups[queue]]
    revived = none.copy()
    revived[queue[fits]] = True
    revived |= requested & columns.protected
    refused = requested & ~revived

    archived_days = today - columns.archived_on
    revived_score = revival_score(columns.intensity, archived_days, params)
    cleared = unarchive(columns, revived | refused)  # a refused request is cleared; its archive fields stay
    return columns.with_(
        archived_on=np.where(revived, cleared["archived_on"], columns.archived_on),
        archive_reason=np.where(revived, cleared["archive_reason"], columns.archive_reason).astype(np.int8),
        revival_requested=cleared["revival_requested"],
        revival_requested_at=cleared["revival_requested_at"],
        level=np.where(revived, 3, columns.level).astype(np.int8),
        recalled=columns.recalled | revived,
        recall_count=columns.recall_count + revived,
        retention=np.where(revived, revived_score, columns.retention),
        idle_days=np.where(revived, 0.0, columns.idle_days),
    ), revived, refused
