"""upsert_long_term: promote important segments to the user's long-term vectors (L4, L8, S3).

Every turn of the segment also goes into the turn-level vector collection (when enabled): that is the
index fine-grained recall searches, and it mirrors the archive rather than the promoted few.

Small talk, error dumps and near-empty segments (S3) never go long-term. Of the rest, only the top
70 % by importance go long-term (judged against the user's archived segments); a
near-copy (≥ 0.95 similar) of a memory already there is skipped. Nothing is lost either way: every
segment stays in the archive and the graph.
"""

from __future__ import annotations

from . import promotion
from .pending import advance, note_degraded, record_of
from .text.passages import passage_rows
from .promotion import promotion_threshold  # noqa: F401 - re-exported: the rule lives with its node's docs
from .text.value import low_value_reason


def upsert_long_term(state: dict, ctx, services) -> dict:
    settings = services.settings
    stores = services.stores

    def write_all(items: list[dict]) -> list[dict]:
        if stores.turns is not None:  # every turn of every segment, in one upsert
            turns = [{**t, "segment_id": item["record"]["segment_id"]} for item in items for t in item.get("turns", [])]
            turns += passage_rows(turns, settings)
            if turns:
                stores.turns.upsert_turns(ctx.user_id, turns, services.embedder.embed([t["text"] for t in turns]))
        if all(item.get("promotion") is not None for item in items):
            # Verdicts made at flush (they already count the batch's earlier segments): one upsert for
            # the promoted ones instead of one per segment.
            promoted = [record_of(item) for item in items if item["promotion"] == "promoted"]
            if promoted:
                stores.vectors.upsert(promoted)
            return [{"long_term": item["promotion"]} for item in items]
        return [promote(item) for item in items]

    def promote(item: dict) -> dict:
        """A segment from a checkpoint made before verdicts were made at flush: decided here, in
        order, each upsert before the next segment's near-copy search."""
        record = record_of(item)
        decided = item.get("promotion")
        if decided is None:
            low_value = low_value_reason([t["text"] for t in item.get("turns", [])], settings.low_value_min_terms)
            history = promotion.recent_importances(stores.archive, ctx.user_id)
            near = stores.vectors.search(ctx.user_id, record.embedding, 1, fields=("segment_id",))
            nearest = (near[0].payload.get("segment_id", ""), near[0].score) if near else None
            decided = promotion.verdict(record, low_value, history, nearest, settings)
        if decided == "promoted":
            stores.vectors.upsert([record])
        return {"long_term": decided}

    return advance(state, "qdrant", write_all=write_all, on_deferred=lambda stage, exc: note_degraded(services, stage, exc))
