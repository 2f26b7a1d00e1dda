"""link_associations: put the segment into the associative graph with its concepts, and link it to
similar earlier segments (L5). The last flush stage: the segment then leaves the pending list."""

from __future__ import annotations

from .pending import advance, record_of


def link_associations(state: dict, ctx, services) -> dict:
    settings = services.settings
    stores = services.stores

    def write(item: dict) -> None:
        record = record_of(item)
        neighbours: list[tuple[str, float]] = []
        if settings.association_max_links:
            hits = stores.vectors.search(ctx.user_id, record.embedding, settings.association_max_links + 1)
            neighbours = [
                (h.payload["segment_id"], round(h.score, 4))
                for h in hits
                if h.payload.get("segment_id") != record.segment_id and h.score >= settings.association_similarity
            ][: settings.association_max_links]
        segment = (
            ctx.user_id, record.segment_id, record.characters, record.keywords, record.summary, record.end_ts,
            record.importance,
        )
        if hasattr(stores.graph, "upsert_linked_segment"):  # one transaction
            stores.graph.upsert_linked_segment(*segment, neighbours)
            return
        stores.graph.upsert_segment(*segment)
        if settings.association_max_links:
            stores.graph.link_segments(ctx.user_id, record.segment_id, neighbours)

    done = advance(state, "graph", write)
    if not done:
        return {}
    return {"pending": [p for p in done["pending"] if "graph" not in p.get("stages", [])]}
