"""The lifecycle's columnar state: one row per memory, one array per field, and relations as edge arrays.

The archive database is the source of truth; a store loads these arrays, the batch steps return new ones (never
mutating their inputs) and the store writes back the rows a mask says changed. Codes are small ints so a million
memories fit in a few tens of MB.

Field ↔ the notes' memory format: ``intensity`` emotional_intensity, ``decay`` decay_coefficient, ``memory_days``,
``retention`` retention_score, ``level`` current_level (4 = archived: the notes' ``archived_at IS NOT NULL``),
``recalled`` recalled_since_last_batch, ``recall_count``, ``protected``, ``archived_on`` archived_at as a batch-day
number, ``revival_requested``/``revival_requested_at``, ``created``. Ours: ``unbatched`` (created since the last
batch: its memory_days already holds its age at the coming batch), ``idle_days`` (A9: days since creation or the
last recall), ``archive_reason`` (why it was archived: threshold, ratio or low activity), ``group`` (the user).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import IntEnum

import numpy as np

CATEGORIES: tuple[str, ...] = ("casual", "work", "decision", "emotional")
UNKNOWN_CATEGORY = -1  # decays at base_decay_coefficient, as the notes' get_decay_coefficient falls back

VALENCES: dict[str, int] = {"negative": -1, "neutral": 0, "positive": 1}

# The notes' emotion tags (positive, negative, other); a memory's tags are a bit mask over this tuple.
TAGS: tuple[str, ...] = (
    "joy", "satisfaction", "relief", "excitement", "gratitude", "pride", "hope", "love", "curiosity",
    "sadness", "anger", "frustration", "anxiety", "fear", "disgust", "regret", "loneliness", "guilt", "resignation",
    "nostalgia", "surprise", "confusion", "determination",
)

RELATION_KINDS: tuple[str, ...] = ("continues", "references", "derived_from", "contradicts", "same_topic")
SAME_TOPIC = RELATION_KINDS.index("same_topic")

ARCHIVED = 4
NOT_ARCHIVED = -1  # archived_on of an active memory


class ArchiveReason(IntEnum):
    ACTIVE = 0
    THRESHOLD = 1  # retention fell to level3_threshold or below
    RATIO = 2  # pushed out of level 3 by level3_ratio
    LOW_ACTIVITY = 3  # A9: unused for low_activity_unused_days


_DTYPES: dict[str, np.dtype] = {
    "intensity": np.dtype(np.float64),
    "category": np.dtype(np.int8),
    "decay": np.dtype(np.float64),
    "memory_days": np.dtype(np.float64),
    "retention": np.dtype(np.float64),
    "level": np.dtype(np.int8),
    "protected": np.dtype(np.bool_),
    "recalled": np.dtype(np.bool_),
    "recall_count": np.dtype(np.int64),
    "unbatched": np.dtype(np.bool_),
    "idle_days": np.dtype(np.float64),
    "created": np.dtype(np.float64),
    "archived_on": np.dtype(np.int64),
    "archive_reason": np.dtype(np.int8),
    "revival_requested": np.dtype(np.bool_),
    "revival_requested_at": np.dtype(np.float64),
    "group": np.dtype(np.int64),
}


@dataclass(frozen=True)
class MemoryColumns:
    """One row per memory. Times: ``created``/``revival_requested_at`` epoch seconds (NaN: none);
    ``archived_on`` the batch day (any day count, e.g. ``date.toordinal()``) it was archived, -1 if active."""

    intensity: np.ndarray  # float64, 0–100, fixed at encoding
    category: np.ndarray  # int8, index into CATEGORIES or UNKNOWN_CATEGORY
    decay: np.ndarray  # float64, current decay coefficient (raised by recalls)
    memory_days: np.ndarray  # float64, +1 per batch, × memory_days_reduction on recall
    retention: np.ndarray  # float64, intensity × decay ** memory_days as of the last batch
    level: np.ndarray  # int8, 1 full · 2 summary · 3 keywords · 4 archived
    protected: np.ndarray  # bool
    recalled: np.ndarray  # bool, recalled since the last batch
    recall_count: np.ndarray  # int64
    unbatched: np.ndarray  # bool, created since the last batch
    idle_days: np.ndarray  # float64, A9: days since creation or the last recall
    created: np.ndarray  # float64, epoch seconds
    archived_on: np.ndarray  # int64, batch day archived, NOT_ARCHIVED if active
    archive_reason: np.ndarray  # int8, ArchiveReason
    revival_requested: np.ndarray  # bool
    revival_requested_at: np.ndarray  # float64, epoch seconds, NaN if none
    group: np.ndarray  # int64, the user (ratios and revival room are per group)

    def __post_init__(self) -> None:
        size = len(self.intensity)
        for name, dtype in _DTYPES.items():
            array = getattr(self, name)
            if not isinstance(array, np.ndarray) or array.dtype != dtype or array.shape != (size,):
                got = getattr(array, "dtype", type(array).__name__), getattr(array, "shape", None)
                raise ValueError(f"MemoryColumns.{name} must be a {dtype} array of shape ({size},), got {got}")

    def __len__(self) -> int:
        return len(self.intensity)

    @property
    def archived(self) -> np.ndarray:
        return self.level == ARCHIVED

    def with_(self, **changes: np.ndarray) -> MemoryColumns:
        return replace(self, **changes)

    def copied(self, names: tuple[str, ...]) -> MemoryColumns:
        """The same columns with private copies of ``names``: a batch step writes those in place, the others
        stay shared with ``self`` (never written)."""
        return replace(self, **{name: getattr(self, name).copy() for name in names})

    def take(self, rows: np.ndarray) -> MemoryColumns:
        return MemoryColumns(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})

    @classmethod
    def new(cls, **given: np.ndarray) -> MemoryColumns:
        """Columns from the given arrays (cast to their dtypes) and defaults for a fresh level-1 memory."""
        size = len(given["intensity"])
        defaults = {
            "category": np.full(size, UNKNOWN_CATEGORY), "memory_days": np.zeros(size),
            "level": np.ones(size), "protected": np.zeros(size, bool), "recalled": np.zeros(size, bool),
            "recall_count": np.zeros(size), "unbatched": np.zeros(size, bool), "idle_days": np.zeros(size),
            "created": np.zeros(size), "archived_on": np.full(size, NOT_ARCHIVED),
            "archive_reason": np.zeros(size), "revival_requested": np.zeros(size, bool),
            "revival_requested_at": np.full(size, np.nan), "group": np.zeros(size),
        }
        unknown = set(given) - set(_DTYPES)
        if unknown:
            raise ValueError(f"unknown MemoryColumns fields: {sorted(unknown)}")
        merged = {**defaults, **given}
        merged.setdefault("retention", np.asarray(merged["intensity"], dtype=np.float64).copy())
        if "decay" not in merged:
            raise ValueError("MemoryColumns.new needs decay (see formulas.decay_coefficient)")
        return cls(**{name: np.asarray(merged[name]).astype(dtype, copy=False) for name, dtype in _DTYPES.items()})


@dataclass(frozen=True)
class Relations:
    """Typed relations as edges between rows: ``src`` refers to ``dst`` (the notes' ``relations`` list of src)."""

    src: np.ndarray  # int64 row index
    dst: np.ndarray  # int64 row index
    kind: np.ndarray  # int8, index into RELATION_KINDS

    def __post_init__(self) -> None:
        size = len(self.src)
        for name, dtype in (("src", np.int64), ("dst", np.int64), ("kind", np.int8)):
            array = getattr(self, name)
            if not isinstance(array, np.ndarray) or array.dtype != dtype or array.shape != (size,):
                raise ValueError(f"Relations.{name} must be a {np.dtype(dtype)} array of shape ({size},)")

    def __len__(self) -> int:
        return len(self.src)

    @classmethod
    def empty(cls) -> Relations:
        return cls(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8))

    @classmethod
    def of(cls, src, dst, kind) -> Relations:
        return cls(np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(kind, np.int8))

    def take(self, keep: np.ndarray) -> Relations:
        return Relations(self.src[keep], self.dst[keep], self.kind[keep])

    def concat(self, other: Relations) -> Relations:
        return Relations(
            np.concatenate([self.src, other.src]), np.concatenate([self.dst, other.dst]),
            np.concatenate([self.kind, other.kind]),
        )


def drop_rows(columns: MemoryColumns, relations: Relations, keep: np.ndarray) -> tuple[MemoryColumns, Relations]:
    """Remove rows (deleted memories) and every relation touching them; remaining row indices are renumbered."""
    keep = np.asarray(keep, bool)
    new_index = np.cumsum(keep) - 1
    alive = keep[relations.src] & keep[relations.dst]
    edges = relations.take(alive)
    return columns.take(np.flatnonzero(keep)), Relations(new_index[edges.src], new_index[edges.dst], edges.kind)


def tags_mask(tags) -> int:
    """The bit mask of a memory's emotion tags; a tag outside the notes' list is refused (never dropped)."""
    mask = 0
    for tag in tags:
        try:
            mask |= 1 << TAGS.index(tag)
        except ValueError:
            raise ValueError(f"unknown emotion tag {tag!r}; the tags are {', '.join(TAGS)}") from None
    return mask
