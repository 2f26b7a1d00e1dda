"""Elementwise lifecycle formulas (F1, F3, F4, F5, F7) over columns: no I/O, no per-row Python.

Where the notes leave room, the choice made here (the reference implementation makes the same ones):

- One batch day: every active (not archived) memory ages, protected ones included — their retention keeps
  falling, which ranks them lower (F7) but never compresses or archives them (the notes' protection table skips
  compression, archiving and deletion, not decay). A protected memory keeps the level it has (the notes' "stays
  level 1": protection is normally set at encoding, when the memory is level 1).
- ``memory_days`` of a memory created since the last batch (``unbatched``) already holds its age at this batch
  (the notes' initial value is "the time from creation to the next batch"), so its first batch does not add 1.0;
  every later batch adds 1.0. (Read literally, the batch loop adds 1.0 at once and every memory would be a day
  older than it is.) A recalled memory is halved instead of aged, as in the notes' if/else.
- Levels only go down: a level is ``max(current, level by thresholds)``; a reinforced memory's retention may rise
  above its level's threshold, but a summary does not grow back into the full memory. A drop of several levels
  in one batch (1 → 3, 1 → 4) is allowed, as the notes allow double compression.
- Archived memories (level 4) are outside the batch: no ageing, no scoring, no reinforcement; their
  ``retention`` is the last one computed.
- Revival score: ``max(intensity × revival_decay_per_day ^ archived_days, level3_threshold + revival_min_margin)``
  with ``archived_days`` whole batch days. ``memory_days`` and ``decay`` are left as they were (the notes list
  the fields revival sets; memory_days is not one of them), so the next batch reinforces (revival sets the
  recalled flag) and re-scores from intensity × decay ^ memory_days.
- Auto-delete: conditions ``archived_days > archive_retention_days``, ``recall_count == 0`` (only when
  ``delete_require_zero_recall``) and ``intensity < delete_max_intensity``, joined by AND or OR; never a
  protected memory, never one whose revival is pending. A9 adds: archived for low activity more than
  ``low_activity_delete_after_days`` ago.
- Priority clamps the cosine at 0 (the notes' code does), and resonance is 0 when no query emotion is known.

Powers go through ``_power``: NumPy's array loop with two float64 arrays, never a broadcast scalar (on AVX-512
builds the SVML loop and libm's ``pow`` differ in the last bit for a few percent of inputs; the reference uses the
same loop on one-element arrays, and the two implementations are compared to the bit).
"""

from __future__ import annotations

import numpy as np

from .columns import ARCHIVED, CATEGORIES, ArchiveReason, MemoryColumns
from .params import LifecycleParams


def _power(base, exponent) -> np.ndarray:
    base, exponent = np.broadcast_arrays(np.asarray(base, np.float64), np.asarray(exponent, np.float64))
    return np.power(np.ascontiguousarray(base), np.ascontiguousarray(exponent))


# --- F1 decay and retention --------------------------------------------------------------------------
def decay_coefficient(category: np.ndarray, intensity: np.ndarray, params: LifecycleParams) -> np.ndarray:
    """min + (max − min) × intensity/100 in the category's range; unknown categories get the base coefficient."""
    ranges = params.category_ranges()
    base = params.base_decay_coefficient
    lows = np.array([low for low, _ in ranges] + [base])
    highs = np.array([high for _, high in ranges] + [base])
    category = np.asarray(category)
    slot = np.where((category >= 0) & (category < len(CATEGORIES)), category, len(CATEGORIES))
    low, high = lows[slot], highs[slot]
    return low + (high - low) * (np.asarray(intensity, np.float64) / 100)


def retention(intensity: np.ndarray, decay: np.ndarray, memory_days: np.ndarray) -> np.ndarray:
    """retention_score = emotional_intensity × decay_coefficient ^ memory_days."""
    return intensity * _power(decay, memory_days)


def level_from_retention(score: np.ndarray, params: LifecycleParams) -> np.ndarray:
    """1 above level1_threshold, 2 above level2_threshold, 3 above level3_threshold, else 4."""
    score = np.asarray(score)
    return (
        1
        + (score <= params.level1_threshold).astype(np.int8)
        + (score <= params.level2_threshold)
        + (score <= params.level3_threshold)
    ).astype(np.int8)


# --- batch steps 1–3 ---------------------------------------------------------------------------------
# Each public step copies the columns it writes (``*_WRITES``) and calls its ``*_into`` form, which writes those
# copies in place, only at the rows it concerns (active or movable ones, found once by ``flatnonzero``). A batch
# copies every column it writes once and runs the ``*_into`` forms in a row (``batch.daily_batch``): after a
# while most memories are archived and outside the batch, and fresh full-size arrays per step (``np.where``)
# cost more than the arithmetic. Same operations, elementwise, on the same values.
AGE_WRITES = ("memory_days", "decay", "idle_days", "recall_count", "recalled", "unbatched")
SCORE_WRITES = ("retention",)
THRESHOLD_WRITES = ("level", "archived_on", "archive_reason")


def active_rows(columns: MemoryColumns) -> np.ndarray:
    """Row indices of the memories outside the archive (the batch's steps 1–3 touch only these)."""
    return np.flatnonzero(columns.level != ARCHIVED)


def age_and_reinforce(columns: MemoryColumns, params: LifecycleParams) -> tuple[MemoryColumns, np.ndarray]:
    """Step 1. Recalled: memory_days × reduction, decay + boost (capped), recall_count + 1, flag cleared.
    Otherwise memory_days + 1 (not in a memory's first batch). Returns the columns and who was reinforced."""
    work = columns.copied(AGE_WRITES)
    return work, age_and_reinforce_into(work, params, active_rows(columns))


def age_and_reinforce_into(work: MemoryColumns, params: LifecycleParams, active: np.ndarray) -> np.ndarray:
    """Step 1 on ``work``'s own ``AGE_WRITES`` arrays, for the ``active`` rows. Returns who was reinforced."""
    recalled = work.recalled[active]
    hit = active[recalled]
    aged = active[~recalled & ~work.unbatched[active]]
    work.memory_days[hit] = work.memory_days[hit] * params.memory_days_reduction
    work.memory_days[aged] = work.memory_days[aged] + 1.0
    work.decay[hit] = np.minimum(params.max_decay_coefficient, work.decay[hit] + params.decay_coefficient_boost)
    work.idle_days[hit] = 0.0
    work.idle_days[aged] = work.idle_days[aged] + 1.0
    work.recall_count[hit] += 1
    work.recalled[active] = False
    work.unbatched[active] = False
    reinforced = np.zeros(len(work), bool)
    reinforced[hit] = True
    return reinforced


def score(columns: MemoryColumns) -> MemoryColumns:
    """Step 2. Retention of every active memory; archived ones keep theirs."""
    work = columns.copied(SCORE_WRITES)
    score_into(work, active_rows(columns))
    return work


def score_into(work: MemoryColumns, active: np.ndarray) -> None:
    """Step 2 on ``work``'s own ``retention``, for the ``active`` rows."""
    work.retention[active] = retention(work.intensity[active], work.decay[active], work.memory_days[active])


def compress_by_threshold(columns: MemoryColumns, params: LifecycleParams, today: int) -> MemoryColumns:
    """Step 3. Levels follow the thresholds downwards only; ≤ level3_threshold archives (A9 may archive too)."""
    work = columns.copied(THRESHOLD_WRITES)
    compress_by_threshold_into(work, params, today, active_rows(columns))
    return work


def compress_by_threshold_into(work: MemoryColumns, params: LifecycleParams, today: int, active: np.ndarray) -> None:
    """Step 3 on ``work``'s own ``THRESHOLD_WRITES`` arrays; ``active``: the rows outside the archive."""
    movable = active[~work.protected[active]]
    level = np.maximum(work.level[movable], level_from_retention(work.retention[movable], params))
    low_activity = np.zeros(len(movable), bool)
    if params.low_activity_enabled:
        low_activity = (
            (level != ARCHIVED)
            & (work.idle_days[movable] >= params.low_activity_unused_days)
            & (work.recall_count[movable] < params.low_activity_min_recalls)
        )
        level[low_activity] = ARCHIVED
    work.level[movable] = level
    now_archived = level == ARCHIVED
    work.archived_on[movable[now_archived]] = today
    work.archive_reason[movable[now_archived]] = np.where(
        low_activity[now_archived], ArchiveReason.LOW_ACTIVITY, ArchiveReason.THRESHOLD)


# --- F5 revival score and auto-delete ------------------------------------------------------------------
def revival_score(intensity: np.ndarray, archived_days: np.ndarray, params: LifecycleParams) -> np.ndarray:
    calculated = intensity * _power(params.revival_decay_per_day, archived_days)
    return np.maximum(calculated, params.level3_threshold + params.revival_min_margin)


def auto_delete_mask(columns: MemoryColumns, params: LifecycleParams, today: int) -> np.ndarray:
    """Step 8. Archived memories the conditions delete (all False when auto-delete and A9 are off)."""
    candidates = (columns.level == ARCHIVED) & ~columns.protected & ~columns.revival_requested
    archived_days = today - columns.archived_on
    deleted = np.zeros(len(columns), bool)
    if params.auto_delete_enabled:
        conditions = [archived_days > params.archive_retention_days, columns.intensity < params.delete_max_intensity]
        if params.delete_require_zero_recall:
            conditions.append(columns.recall_count == 0)
        joined = np.logical_and.reduce(conditions) if params.delete_condition_mode == "AND" else (
            np.logical_or.reduce(conditions)
        )
        deleted |= candidates & joined
    if params.low_activity_enabled:
        deleted |= (
            candidates & (columns.archive_reason == ArchiveReason.LOW_ACTIVITY)
            & (archived_days > params.low_activity_delete_after_days)
        )
    return deleted


def compression_work(level_before: np.ndarray, level_after: np.ndarray) -> dict[str, np.ndarray]:
    """What the store must do with the text: summarise (left level 1), extract keywords (reached level 3 or
    4 from above), archive, revive. A memory archived from level 1 needs both, as level-4 text is level 3's."""
    before, after = np.asarray(level_before), np.asarray(level_after)
    return {
        "summarise": (before == 1) & (after >= 2),
        "keywords": (before <= 2) & (after >= 3),
        "archive": (before != ARCHIVED) & (after == ARCHIVED),
        "revive": (before == ARCHIVED) & (after != ARCHIVED),
    }


# --- F7 resonance and priority --------------------------------------------------------------------------
def popcount(masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(masks, np.uint32)
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(masks).astype(np.int64)
    as_bytes = masks[..., None].view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1).astype(np.int64)


def resonance(
    query_valence: int | None, query_arousal: float, query_tags: int,
    valence: np.ndarray, arousal: np.ndarray, tags: np.ndarray, params: LifecycleParams,
) -> np.ndarray:
    """valence bonus + arousal proximity + tag overlap of the query emotion with each memory's (0 if unknown).
    Valence codes: ``columns.VALENCES``; tags: masks over ``columns.TAGS`` (uint32)."""
    size = len(valence)
    if query_valence is None:
        return np.zeros(size)
    valence_bonus = np.where(np.asarray(valence) == query_valence, params.valence_match_bonus, 0.0)
    arousal_gap = np.abs(np.asarray(arousal, np.float64) - query_arousal) / 100
    arousal_bonus = np.maximum(0.0, params.arousal_proximity_bonus * (1 - arousal_gap))
    query_count = int(popcount(np.uint32(query_tags)))
    memory_count = popcount(tags)
    shared = popcount(np.asarray(tags, np.uint32) & np.uint32(query_tags))
    both = (memory_count > 0) & (query_count > 0)
    overlap = np.where(both, shared / np.maximum(np.maximum(memory_count, query_count), 1), 0.0)
    tags_bonus = np.where(both, overlap * params.tags_overlap_weight, 0.0)
    return valence_bonus + arousal_bonus + tags_bonus


def priority(
    retention_score: np.ndarray, similarity: np.ndarray, recall_count: np.ndarray,
    resonance_score: np.ndarray, params: LifecycleParams,
) -> np.ndarray:
    """retention × max(0, cosine) × (1 + w·recalls) + alpha × resonance × retention (F7)."""
    match = np.maximum(0.0, similarity)
    base = retention_score * match * (1 + params.recall_count_weight * recall_count)
    return base + params.priority_weight_alpha * resonance_score * retention_score
