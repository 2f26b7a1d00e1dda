"""One day of the lifecycle: the notes' batch steps, in their order, over columns.

1 age / reinforce → 2 score → 3 compress by threshold (and archive) → [3.5 re-embed: the store's, after text
compression] → 4 ratio enforcement → 4.5 revival → 5 relation repair → 6 re-pointing → 7 auto-link →
8 archive auto-delete.

Step 3.5 (and the text compression it follows) needs the model, so a maintenance graph runs ``daily_batch``
without embeddings, compresses and re-embeds the rows ``compression_work`` names, then calls ``autolink.auto_link``
with the new vectors and ``outcome.link_candidates``. Steps 7 and 8 touch disjoint rows (active vs archived), so
running 8 before 7 changes nothing. Deleted rows are reported, not removed: ``columns.drop_rows`` removes them and
their relations once the stores have.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .autolink import auto_link
from .columns import ARCHIVED, MemoryColumns, Relations
from .formulas import (
    AGE_WRITES, SCORE_WRITES, THRESHOLD_WRITES, active_rows, age_and_reinforce_into, auto_delete_mask,
    compress_by_threshold_into, score_into,
)
from .params import LifecycleParams
from .ratios import RATIO_WRITES, REVIVE_WRITES, enforce_ratios_into, group_counts, revive_into
from .relations import repair_relations, reorient_relations


@dataclass(frozen=True)
class BatchOutcome:
    """Rows are aligned with the batch's input (nothing is removed)."""

    columns: MemoryColumns
    relations: Relations
    level_before: np.ndarray  # int8, each row's level before the batch
    reinforced: np.ndarray  # bool, recall applied (step 1)
    revived: np.ndarray  # bool, back to level 3 (step 4.5)
    revival_refused: np.ndarray  # bool, request cleared for lack of room
    deleted: np.ndarray  # bool, to delete from every tier (step 8)
    link_candidates: np.ndarray  # bool, new and re-embedded active rows (step 7's "new")
    links_added: Relations  # included in ``relations`` when embeddings were given
    relations_removed: int
    relations_flipped: int

    @property
    def level_after(self) -> np.ndarray:
        return self.columns.level


# Every column a batch writes: copied once, then written in place by the steps (``formulas``, ``ratios``).
BATCH_WRITES = tuple(dict.fromkeys(AGE_WRITES + SCORE_WRITES + THRESHOLD_WRITES + RATIO_WRITES + REVIVE_WRITES))


def daily_batch(
    columns: MemoryColumns, relations: Relations, today: int, params: LifecycleParams,
    embeddings: np.ndarray | None = None, **link_options,
) -> BatchOutcome:
    """Run one batch day. ``today`` is the batch day number (archived_on uses it); ``embeddings`` (one row per
    memory) enables step 7 here; without them the caller runs ``auto_link`` after re-embedding."""
    level_before = columns.level
    work = columns.copied(BATCH_WRITES)  # the inputs are never written
    active = active_rows(columns)  # steps 1–4 and the link candidates concern only these rows
    reinforced = age_and_reinforce_into(work, params, active)
    score_into(work, active)
    compress_by_threshold_into(work, params, today, active)
    groups = group_counts(columns)
    enforce_ratios_into(work, params, today, groups, active)
    revived, refused = revive_into(work, params, today, groups)
    relations, removed = repair_relations(relations, work)
    relations, flipped = reorient_relations(relations, work, params)
    # new (unbatched when the batch began) or compressed further, and still active; an archived row is neither
    level_after = work.level[active]
    link_candidates = np.zeros(len(work), bool)
    link_candidates[active[(columns.unbatched[active] | (level_after > level_before[active]))
                           & (level_after != ARCHIVED)]] = True
    links = Relations.empty()
    if embeddings is not None and params.enable_auto_linking:
        links, _ = auto_link(embeddings, link_candidates, work, relations, params, **link_options)
        relations = relations.concat(links)
    return BatchOutcome(
        columns=work, relations=relations, level_before=level_before, reinforced=reinforced,
        revived=revived, revival_refused=refused, deleted=auto_delete_mask(work, params, today),
        link_candidates=link_candidates, links_added=links, relations_removed=removed,
        relations_flipped=flipped,
    )


def level_transitions(level_before: np.ndarray, level_after: np.ndarray, deleted: np.ndarray) -> np.ndarray:
    """Counts [from level 1–4, to level 1–4 or 5 = deleted] for the batch's summary table."""
    after = np.where(deleted, 5, level_after).astype(np.int64)
    cells = (np.asarray(level_before, np.int64) - 1) * 5 + (after - 1)
    return np.bincount(cells, minlength=20).reshape(4, 5)
