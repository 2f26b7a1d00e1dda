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
from .formulas import age_and_reinforce, auto_delete_mask, compress_by_threshold, score
from .params import LifecycleParams
from .ratios import enforce_ratios, revive
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


def daily_batch(
    columns: MemoryColumns, relations: Relations, today: int, params: LifecycleParams,
    embeddings: np.ndarray | None = None, **link_options,
) -> BatchOutcome:
    """Run one batch day. ``today`` is the batch day number (archived_on uses it); ``embeddings`` (one row per
    memory) enables step 7 here; without them the caller runs ``auto_link`` after re-embedding."""
    level_before = columns.level
    new = columns.unbatched & (columns.level != ARCHIVED)
    columns, reinforced = age_and_reinforce(columns, params)
    columns = score(columns)
    columns = compress_by_threshold(columns, params, today)
    columns = enforce_ratios(columns, params, today)
    columns, revived, refused = revive(columns, params, today)
    relations, removed = repair_relations(relations, columns)
    relations, flipped = reorient_relations(relations, columns, params)
    recompressed = (columns.level > level_before) & (columns.level != ARCHIVED)
    link_candidates = (new | recompressed) & (columns.level != ARCHIVED)
    links = Relations.empty()
    if embeddings is not None and params.enable_auto_linking:
        links, _ = auto_link(embeddings, link_candidates, columns, relations, params, **link_options)
        relations = relations.concat(links)
    return BatchOutcome(
        columns=columns, relations=relations, level_before=level_before, reinforced=reinforced,
        revived=revived, revival_refused=refused, deleted=auto_delete_mask(columns, params, today),
        link_candidates=link_candidates, links_added=links, relations_removed=removed,
        relations_flipped=flipped,
    )


def level_transitions(level_before: np.ndarray, level_after: np.ndarray, deleted: np.ndarray) -> np.ndarray:
    """Counts [from level 1–4, to level 1–4 or 5 = deleted] for the batch's summary table."""
    after = np.where(deleted, 5, level_after).astype(np.int64)
    cells = (np.asarray(level_before, np.int64) - 1) * 5 + (after - 1)
    return np.bincount(cells, minlength=20).reshape(4, 5)
