"""Which forgetting step each row of a batch day took, for the undo log (stores.memory_undo): pure, over columns."""

from __future__ import annotations

import numpy as np

from .columns import ARCHIVED


def undo_steps(seqs: np.ndarray, level_before: np.ndarray, level_after: np.ndarray,
               deleted: np.ndarray) -> dict[int, str]:
    """seq -> ``delete`` (auto-deleted), ``archive`` (reached level 4 from an active level) or ``compress`` (level
    1→2, 2→3, 1→3). Revival (4→3) forgets nothing and is not logged; neither is a day's ageing alone."""
    before, after = np.asarray(level_before), np.asarray(level_after)
    deleted = np.asarray(deleted, bool)
    archived = ~deleted & (before != ARCHIVED) & (after == ARCHIVED)
    compressed = ~deleted & (after > before) & (after != ARCHIVED)
    steps: dict[int, str] = {}
    for mask, step in ((compressed, "compress"), (archived, "archive"), (deleted, "delete")):
        steps.update((int(s), step) for s in np.asarray(seqs)[mask])
    return steps
