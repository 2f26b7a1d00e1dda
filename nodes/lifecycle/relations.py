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
    """True where ``src → dst`` is the direction the notes ask for (or either direction is)."""
    src_score, dst_score = columns.retention[src], columns.retention[dst]
    close = np.abs(src_score - dst_score) < params.score_proximity_threshold
    return np.where(close, columns.created[src] >= columns.created[dst], src_score >= dst_score)


def repair_relations(relations: Relations, columns: MemoryColumns) -> tuple[Relations, int]:
    """Step 5: drop relations to archived memories and self-references. Returns them and how many went."""
    keep = (columns.level[relations.dst] != ARCHIVED) & (relations.src != relations.dst)
    return relations.take(keep), int((~keep).sum())


def unique_edges(relations: Relations, rows: int) -> Relations:
    """Relations without repeated (src, dst, kind), first occurrence kept, order kept."""
    key = (relations.src * max(rows, 1) + relations.dst) * 8 + relations.kind
    _, first = np.unique(key, return_index=True)
    return relations.take(np.sort(first))


def reorient_relations(
    relations: Relations, columns: MemoryColumns, params: LifecycleParams
) -> tuple[Relations, int]:
    """Step 6: flip relations between active memories that point the wrong way. Returns them and the count."""
    level = columns.level
    judged = (level[relations.src] != ARCHIVED) & (level[relations.dst] != ARCHIVED)
    flip = judged & ~points_right(relations.src, relations.dst, columns, params)
    flipped = Relations(
        np.where(flip, relations.dst, relations.src), np.where(flip, relations.src, relations.dst), relations.kind
    )
    return unique_edges(flipped, len(columns)), int(flip.sum())


def referencing(relations: Relations, target: int) -> np.ndarray:
    """Rows whose relations point at ``target`` (the notes' reverse look-up, low → high)."""
    return relations.src[relations.dst == target]
