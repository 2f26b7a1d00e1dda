"""Relation repair and direction (F6, batch steps 5 and 6) over edge arrays.

Direction (the notes): a relation points from the higher- to the lower-retention memory; when the two are closer
than ``score_proximity_threshold`` it points from the newer to the older one. Equal ``created`` times within the
proximity, or equal retentions with a proximity of 0, leave an edge as it is, so no edge flips back and forth.

Choices:
- Repair (step 5) removes every relation whose target is archived, whatever its source (the notes: "when a
  memory is archived, references to it are removed"), and self-references. Relations *from* an archived memory
  to an active one are kept, frozen with it, and are judged again if it is revived. Relations touching a deleted
  memory go with the row (``columns.drop_rows``).
- Re-pointing (step 6) judges relations between two active memories only and keeps the kind; if the flipped
  edge already exists (same kind), the two collapse into one.
"""

from __future__ import annotations

import numpy as np

from .columns import ARCHIVED, MemoryColumns, Relations
from .params import LifecycleParams


def points_right(
    src: np.ndarray, dst: np.ndarray, columns: MemoryColumns, params: LifecycleParams
) -> np.ndarray:
    """True where ``src → dst`` is the direction the notes ask for (or either direction is); ``src`` and ``dst``
    are arrays of rows of the same shape."""
    src_score, dst_score = columns.retention[src], columns.retention[dst]
    right = src_score >= dst_score
    # creation times only for the pairs whose scores are close (a minority): two gathers fewer over every edge
    close = np.flatnonzero(np.abs(src_score - dst_score) < params.score_proximity_threshold)
    right[close] = columns.created[src[close]] >= columns.created[dst[close]]
    return right


def repair_relations(relations: Relations, columns: MemoryColumns) -> tuple[Relations, int]:
    """Step 5: drop relations to archived memories and self-references. Returns them and how many went."""
    keep = (columns.level[relations.dst] != ARCHIVED) & (relations.src != relations.dst)
    return relations.take(keep), int((~keep).sum())


def unique_edges(relations: Relations, rows: int) -> Relations:
    """Relations without repeated (src, dst, kind), first occurrence kept, order kept."""
    key = (relations.src * max(rows, 1) + relations.dst) * 8 + relations.kind
    # Stable, as np.unique(return_index=True) sorts: the first of equal keys is the first occurrence. Relations
    # mostly arrive in runs by source, which a stable sort (timsort) takes in far fewer comparisons.
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    repeated = ordered[1:] == ordered[:-1]
    if not repeated.any():
        return relations
    keep = np.zeros(len(key), bool)
    keep[order[np.flatnonzero(np.r_[True, ~repeated])]] = True
    return relations.take(keep)


def reorient_relations(
    relations: Relations, columns: MemoryColumns, params: LifecycleParams
) -> tuple[Relations, int]:
    """Step 6: flip relations between active memories that point the wrong way. Returns them and the count."""
    level = columns.level
    judged = np.flatnonzero((level[relations.src] != ARCHIVED) & (level[relations.dst] != ARCHIVED))
    flip = judged[~points_right(relations.src[judged], relations.dst[judged], columns, params)]
    flipped = relations
    if len(flip):
        src, dst = relations.src.copy(), relations.dst.copy()
        src[flip], dst[flip] = relations.dst[flip], relations.src[flip]
        flipped = Relations(src, dst, relations.kind)
    return unique_edges(flipped, len(columns)), len(flip)


def referencing(relations: Relations, target: int) -> np.ndarray:
    """Rows whose relations point at ``target`` (the notes' reverse look-up, low → high)."""
    return relations.src[relations.dst == target]
