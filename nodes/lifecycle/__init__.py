"""The forgetting lifecycle's pure core (F1, F3–F8, F11, A9): parameters, columnar state and batch steps.

No I/O: stores load ``MemoryColumns``/``Relations`` arrays, the steps return new arrays and masks, the stores
write back what changed. ``reference`` is the notes' per-memory pseudocode, kept as the tests' oracle and the
benchmark's baseline. Module by module:

- ``params``: ``LifecycleParams`` (every parameter, validated) and ``params_table_markdown``.
- ``columns``: the arrays, their codes (categories, valences, tags, relation kinds) and ``drop_rows``.
- ``formulas``: decay, retention, levels, steps 1–3, revival score, auto-delete, resonance and priority.
- ``ratios``: step 4 (ratio enforcement) and 4.5 (revival). ``relations``: steps 5–6. ``autolink``: step 7.
- ``batch``: ``daily_batch`` runs the steps in the notes' order. ``clock``: batch days and first memory_days.
"""

from .autolink import auto_link, top_similar
from .batch import BatchOutcome, daily_batch, level_transitions
from .clock import batch_day, initial_memory_days, next_batch_time
from .columns import (
    ARCHIVED, CATEGORIES, NOT_ARCHIVED, RELATION_KINDS, SAME_TOPIC, TAGS, UNKNOWN_CATEGORY, VALENCES,
    ArchiveReason, MemoryColumns, Relations, drop_rows, tags_mask,
)
from .formulas import (
    age_and_reinforce, auto_delete_mask, compress_by_threshold, compression_work, decay_coefficient,
    level_from_retention, priority, resonance, retention, revival_score, score,
)
from .params import LifecycleParams, params_table_markdown
from .ratios import enforce_ratios, revive
from .relations import points_right, referencing, reorient_relations, repair_relations

__all__ = [
    "ARCHIVED", "CATEGORIES", "NOT_ARCHIVED", "RELATION_KINDS", "SAME_TOPIC", "TAGS", "UNKNOWN_CATEGORY",
    "VALENCES", "ArchiveReason", "BatchOutcome", "LifecycleParams", "MemoryColumns", "Relations",
    "age_and_reinforce", "auto_delete_mask", "auto_link", "batch_day", "compress_by_threshold",
    "compression_work", "daily_batch", "decay_coefficient", "drop_rows", "enforce_ratios", "initial_memory_days",
    "level_from_retention", "level_transitions", "next_batch_time", "params_table_markdown", "points_right",
    "priority", "referencing", "reorient_relations", "repair_relations", "resonance", "retention", "revival_score",
    "revive", "score", "tags_mask", "top_similar",
]
