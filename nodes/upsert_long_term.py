"""upsert_long_term: promote important segments to the user's long-term vectors (L4, L8, S3).

Every turn of the segment also goes into the turn-level vector collection (when enabled): that is the
index fine-grained recall searches, and it mirrors the archive rather than the promoted few.

Small talk, error dumps and near-empty segments (S3) never go long-term. Of the rest, only the top
70 % by importance go long-term (judged against the user's archived segments); a
near-copy (≥ 0.95 similar) of a memory already there is skipped. Nothing is lost either way: every
segment stays in the archive and the graph.
"""

from __future__ import annotations

import numpy as np

from .pending import advance, record_of
from .text.value import low_value_reason

_MIN_HISTORY = 10  # below this there is no distribution to take a percentile of


def promotion_threshold(importances: list[float], top_fraction: float) -> float:
    if len(importances) < _MIN_HISTORY or top_fraction >= 1.0:
        return 0.0
    return float(np.quantile(importances, 1.0 - top_fraction))


def upsert_long_term(state: dict, ctx, services) -> dict:
    settings = services.settings
    stores = services.stores

    def write(item: dict) -> dict:
        record = record_of(item)
        if stores.turns is not None and item.get("turns"):
            turns = [{**t, "segment_id": record.segment_id} for t in item["turns"]]
            stores.turns.upsert_turns(ctx.user_id, turns, services.embedder.embed([t["text"] for t in turns]))
        reason = low_value_reason([t["text"] for t in item.get("turns", [])], settings.low_value_min_terms)
        if reason:
            return {"long_term": f"not promoted (low value: {reason})"}
        if hasattr(stores.archive, "recent_importances"):  # one column, not 500 records with embeddings
            history = stores.archive.recent_importances(ctx.user_id, 500)
        else:
            history = [s.importance for s in stores.archive.segments(ctx.user_id, limit=500)]
        threshold = promotion_threshold(history, settings.longterm_top_fraction)
        if record.importance < threshold:
            return {"long_term": f"not promoted (importance {record.importance:.3f} < {threshold:.3f})"}
        near = stores.vectors.search(ctx.user_id, record.embedding, 1)
        if near and near[0].payload.get("segment_id") != record.segment_id and near[0].score >= settings.dedup_similarity:
            return {"long_term": f"duplicate of {near[0].payload.get('segment_id')} ({near[0].score:.3f})"}
        stores.vectors.upsert([record])
        return {"long_term": "promoted"}

    return advance(state, "qdrant", write)
