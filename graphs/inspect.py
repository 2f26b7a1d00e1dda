"""What each tier holds — for `lumina-memory stats`, the demo, notebooks and tests."""

from __future__ import annotations

from typing import Any

from nodes.recovery import outbox_summary
from nodes.services import Services
from stores.errors import StoreUnavailable


def tier_stats(services: Services, user_id: str | None = None) -> dict[str, Any]:
    stores = services.stores
    archive = stores.archive.counts(user_id)
    graph = stores.graph.counts(user_id)
    try:
        midterm_segments: int | str = stores.midterm.count(user_id)
    except StoreUnavailable as exc:  # degraded mode: the other tiers still answer, and stats says so
        midterm_segments = f"unavailable ({exc.tier})"
        services.degraded.setdefault("mid-term", str(exc)[:300])
    return {
        "mid-term": {"backend": stores.midterm.backend, "segments": midterm_segments},
        "archive": {"backend": stores.archive.backend, **archive},
        "long-term": {"backend": stores.vectors.backend, "points": stores.vectors.count(user_id),
                      "collection": stores.vectors.collection},
        "graph": {"backend": stores.graph.backend, "nodes": graph.nodes, "edges": graph.edges},
        "paths": {**services.paths, "bulk_embedding": services.embedder.ahead_path},
        # Degraded mode: derived writes owed (a crash, or a store that is down) and the tiers found down.
        "derivations": {**outbox_summary(stores.archive), "degraded": dict(getattr(services, "degraded", {}))},
    }


def source_turns(services: Services, user_id: str, item: dict, limit: int = 3) -> list[dict]:
    """The archived turns an item was built from (so a recalled memory can be audited)."""
    turns = services.stores.archive.get_turns(user_id, item.get("turn_ids", []))
    return [t.model_dump() for t in turns[:limit]]
