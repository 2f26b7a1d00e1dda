"""What each tier holds — for `lumina-memory stats`, the demo, notebooks and tests."""

from __future__ import annotations

from typing import Any, Callable

from lumina_memory.nodes.costs_summary import cost_summary
from lumina_memory.nodes.lifecycle.capacity import capacity_report
from lumina_memory.nodes.recovery import outbox_summary
from lumina_memory.nodes.services import Services
from lumina_memory.stores.errors import StoreUnavailable


def _answer(services, tier: str, read: Callable[[], Any]) -> Any:
    """A tier's figure, or "unavailable (...)" when its store is down: stats still answers in degraded
    mode, and the tier is noted as down."""
    try:
        return read()
    except StoreUnavailable as exc:
        services.degraded.setdefault(tier, str(exc)[:300])
        return f"unavailable ({exc.tier})"


def tier_stats(services: Services, user_id: str | None = None) -> dict[str, Any]:
    stores = services.stores
    archive = stores.archive.counts(user_id)  # the durable base: embedded, never "down"
    graph = _answer(services, "graph", lambda: stores.graph.counts(user_id))
    return {
        "mid-term": {"backend": stores.midterm.backend,
                     "segments": _answer(services, "mid-term", lambda: stores.midterm.count(user_id))},
        "archive": {"backend": stores.archive.backend, **archive},
        "long-term": {"backend": stores.vectors.backend,
                      "points": _answer(services, "long-term", lambda: stores.vectors.count(user_id)),
                      "collection": stores.vectors.collection},
        "graph": {"backend": stores.graph.backend, "nodes": graph if isinstance(graph, str) else graph.nodes,
                  "edges": graph if isinstance(graph, str) else graph.edges},
        "paths": {**services.paths, "bulk_embedding": services.embedder.ahead_path},
        # The recall index of this process: how many turns it read from their text, how many it decoded from
        # the reads the archive keeps, how many users' indexes it loaded from their snapshots (a fresh process
        # should mostly load or decode).
        **({"recall_index": index.summary()} if (index := getattr(services, "turn_index", None)) is not None else {}),
        **({"segment_index": segments.summary()} if (segments := getattr(services, "keyword_index", None)) is not None
           and hasattr(segments, "summary") else {}),
        **({"startup_warm": warm.summary()} if (warm := getattr(services, "startup_warm", None)) is not None else {}),
        # Issue 49: the user's memories against the lifecycle's ratio targets and protected cap.
        **({"capacity": capacity_report(services, user_id)} if user_id is not None else {}),
        # Issue 49: what the operations of every user cost (records hold no user), over the days kept.
        "costs": _answer(services, "archive", lambda: cost_summary(services)),
        # Degraded mode: derived writes owed (a crash, or a store that is down) and the tiers found down.
        "derivations": {**outbox_summary(stores.archive), "degraded": dict(getattr(services, "degraded", {}))},
    }


def source_turns(services: Services, user_id: str, item: dict, limit: int = 3) -> list[dict]:
    """The archived turns an item was built from (so a recalled memory can be audited)."""
    turns = services.stores.archive.get_turns(user_id, item.get("turn_ids", []))
    return [t.model_dump() for t in turns[:limit]]
