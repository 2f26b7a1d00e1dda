"""Which closed segments go long-term (L4, S3): not low-value, in the top share by importance of the
user's recent segments, and not a near-copy of a memory already there.

flush_to_redis decides when it scores a segment and upsert_long_term carries the verdict out. A
transcript batch closes several segments before any reaches the vector store, so the decision for
each one also counts the batch's earlier segments: exactly what one run per turn would decide."""

from __future__ import annotations

import numpy as np

from lumina_memory.stores.models import SegmentRecord

HISTORY = 500  # recent segments the importance percentile is taken over
_MIN_HISTORY = 10  # below this there is no distribution to take a percentile of


def promotion_threshold(importances: list[float], top_fraction: float) -> float:
    if len(importances) < _MIN_HISTORY or top_fraction >= 1.0:
        return 0.0
    return float(np.quantile(importances, 1.0 - top_fraction))


def recent_importances(archive, user_id: str) -> list[float]:
    """Importance of the user's newest archived segments, newest first."""
    if hasattr(archive, "recent_importances"):  # one column, not 500 records with embeddings
        return archive.recent_importances(user_id, HISTORY)
    return [s.importance for s in archive.segments(user_id, limit=HISTORY)]


def verdict(
    record: SegmentRecord,
    low_value: str | None,
    history: list[float],
    nearest: tuple[str, float] | None,
    settings,
) -> str:
    """'promoted', or why not. ``history``: recent importances including this segment's own;
    ``nearest``: (segment_id, similarity) of the closest long-term memory."""
    if low_value:
        return f"not promoted (low value: {low_value})"
    threshold = promotion_threshold(history, settings.longterm_top_fraction)
    if record.importance < threshold:
        return f"not promoted (importance {record.importance:.3f} < {threshold:.3f})"
    if nearest and nearest[0] != record.segment_id and nearest[1] >= settings.dedup_similarity:
        return f"duplicate of {nearest[0]} ({nearest[1]:.3f})"
    return "promoted"
