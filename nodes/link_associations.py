"""link_associations: put the segment into the associative graph with its concepts, and link it to
similar earlier segments (L5). The last flush stage: the segment then leaves the pending list."""

from __future__ import annotations

from lumina_memory.stores.records import LinkedSegment

from .activity import record as record_event
from .knowledge.tiers import sync_best_effort
from .pending import advance, note_degraded, record_of
from .retrieval.warm import warm_indexes


def link_associations(state: dict, ctx, services) -> dict:
    settings = services.settings
    stores = services.stores

    def write_all(items: list[dict]) -> list[None]:
        records = [record_of(item) for item in items]
        # Earlier segments only: a search keeps to segments that ended by this one's start, so the links do not
        # depend on what else the store holds now (a later segment of this batch, or one another process
        # importing the same transcript wrote first). One engine call per segment.
        found: list[list] = [[] for _ in records]
        if settings.association_max_links:
            for index, r in enumerate(records):
                found[index] = stores.vectors.search_many(
                    ctx.user_id, [r.embedding], [settings.association_max_links + 1], fields=("segment_id",),
                    ended_by=r.start_ts)[0]  # a segment's payload carries its whole text: ask for its id only
        segments = []
        for record, hits in zip(records, found):
            neighbours: list[tuple[str, float]] = []
            if settings.association_max_links:
                neighbours = [
                    (h.payload["segment_id"], round(h.score, 4))
                    for h in hits
                    if h.payload.get("segment_id") != record.segment_id
                    and h.score >= settings.association_similarity
                ][: settings.association_max_links]
            segments.append(
                LinkedSegment(
                    record.segment_id, record.characters, record.keywords, record.summary, record.end_ts,
                    record.importance, neighbours,
                )
            )
        if hasattr(stores.graph, "upsert_linked_segments"):  # one transaction for the batch
            stores.graph.upsert_linked_segments(ctx.user_id, segments)
        else:
            for s in segments:
                stores.graph.upsert_segment(ctx.user_id, *s[:6])
                if settings.association_max_links:
                    stores.graph.link_segments(ctx.user_id, s.segment_id, s.neighbours)
        for r, s in zip(records, segments):  # A10: the segment reached every tier
            record_event(services, ctx.user_id, "segment_closed", segment_id=r.segment_id, turns=len(r.turn_ids),
                         reason=r.close_reason, importance=round(r.importance, 4), ts=[r.start_ts, r.end_ts],
                         links=len(s.neighbours))
        return [None] * len(items)

    # The last stage: the archive's outbox rows of these segments go (or keep what is still deferred).
    # A graph that is down is remembered as degraded (stats, doctor) until recovery completes its writes.
    done = advance(state, "graph", write_all=write_all, outbox=(stores.archive, ctx.user_id),
                   on_deferred=lambda stage, exc: note_degraded(services, stage, exc))
    if not done:
        return {}
    # After the commit and the segments' graph write: what this flush learned reaches the knowledge vectors
    # and the graph (a store that is down leaves it owed to the next flush or recovery pass).
    sync_best_effort(services, ctx.user_id)
    warm_indexes(services, ctx.user_id)
    return {"pending": [p for p in done["pending"] if "graph" not in p.get("stages", [])]}
