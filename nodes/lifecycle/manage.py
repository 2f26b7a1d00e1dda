"""What a user (or an operator for them) does to single memories: list, protect, unprotect, forget.

``forget`` is deliberate deletion of one memory from every tier, its turns included: unlike fading, the user
asked for it to be gone, so the record goes too. The audit log records it (ids and counts, no content).
"""

from __future__ import annotations

import json
import time
from typing import Any

from lumina_memory.nodes.knowledge.tiers import forget_episodes as forget_knowledge_points
from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.factory import open_audit_log
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.protocols import MemoryLifecycleStore
from lumina_memory.stores.secret import memory_secret

from .columns import ARCHIVED, ArchiveReason

JSON_FIELDS = ("memory_id", "level", "retention", "intensity", "valence", "arousal", "tags", "category", "decay",
               "memory_days", "recall_count", "protected", "archived", "revival_requested", "text",
               "source_turn_ids", "source_ids", "created", "relations", "low_activity", "trigger", "content",
               "trigger_path")


def memory_table(services) -> MemoryLifecycleStore:
    return services.stores.archive.memories


def list_memories(services, user_id: str, *, level: int | None = None) -> list[dict[str, Any]]:
    """The user's memories, oldest first, with exactly JSON_FIELDS (``relations``: [{kind, memory_id,
    direction}], direction "out" when this memory is the higher-retention end)."""
    validate_id(user_id, "user_id")
    if level is not None and level not in (1, 2, 3, 4):
        raise InvalidInput("level", f"must be 1, 2, 3 or 4, got {level!r}")
    table = memory_table(services)
    params = services.settings.lifecycle
    rows = table.rows(user_id, level=level)
    links: dict[str, list[dict[str, Any]]] = {}
    for rel in table.relations(user_id):
        links.setdefault(rel["src"], []).append({"kind": rel["kind"], "memory_id": rel["dst"], "direction": "out"})
        links.setdefault(rel["dst"], []).append({"kind": rel["kind"], "memory_id": rel["src"], "direction": "in"})
    out = []
    for r in rows:
        out.append({
            "memory_id": r["memory_id"], "level": int(r["level"]), "retention": round(float(r["retention"]), 4),
            "intensity": float(r["intensity"]), "valence": r["valence"], "arousal": float(r["arousal"]),
            "tags": list(r["tags"]), "category": r["category"], "decay": float(r["decay"]),
            "memory_days": float(r["memory_days"]), "recall_count": int(r["recall_count"]),
            "protected": bool(r["protected"]), "archived": int(r["level"]) == 4,
            "revival_requested": bool(r["revival_requested"]),
            "text": r["text"] if r["text"] is not None else (r["segment_text"] or ""),
            "source_turn_ids": list(r["source_turn_ids"] or []), "source_ids": list(r["source_ids"] or []),
            "created": float(r["created"]), "relations": links.get(r["memory_id"], []),
            "low_activity": low_activity(r, params),
            "trigger": r["trigger"] or "", "content": r["content"] or "", "trigger_path": r["trigger_path"] or "",
        })
    return out


def low_activity(row: dict[str, Any], params) -> bool:
    """A9's mark on an episode: archived for low activity, or (active, not protected) unused for
    ``low_activity_unused_days`` batch days and recalled fewer than ``low_activity_min_recalls`` times. The batch
    keeps ``idle_days`` whether or not ``low_activity_enabled`` lets it archive such memories, so the mark shows
    what A9 would forget either way."""
    if int(row.get("archive_reason") or 0) == int(ArchiveReason.LOW_ACTIVITY):
        return True
    return (int(row["level"]) != ARCHIVED and not row["protected"]
            and float(row.get("idle_days") or 0.0) >= params.low_activity_unused_days
            and int(row["recall_count"]) < params.low_activity_min_recalls)


def set_protected(services, user_id: str, memory_id: str, protected: bool) -> dict[str, Any]:
    cap = services.settings.lifecycle.max_protected_memories
    out = memory_table(services).set_protected(user_id, memory_id, protected, cap)
    if out["changed"]:
        # The vector payload says it too, so search-side filters and priming agree with the archive.
        try:
            services.stores.vectors.set_payload(user_id, {memory_id: {"protected": protected}})
        except StoreUnavailable:
            memory_table(services).queue(user_id, memory_id, "payload")
    return out


def forget_memory(services, user_id: str, memory_id: str, *, actor: str = "api") -> dict[str, int]:
    """Delete one memory everywhere: lifecycle rows and relations, mid-term, long-term and turn vectors,
    the graph's node, the archived turns and segment. Not found → InvalidInput (another user's id too)."""
    validate_id(user_id, "user_id")
    validate_id(memory_id, "memory_id")
    archive = services.stores.archive
    segment = archive.get_segment(user_id, memory_id)
    table = memory_table(services)
    if segment is None and not table.rows(user_id, [memory_id]):
        raise InvalidInput("memory_id", f"{memory_id!r} not found for user_id {user_id!r}")
    turn_ids = list(segment.turn_ids) if segment else []
    stores = services.stores
    removed: dict[str, int] = {}
    # Derived tiers first: if one is down, the archive still holds the memory and a retry finds it.
    removed["midterm"] = stores.midterm.delete_segments(user_id, [memory_id])
    removed["long-term"] = stores.vectors.delete(user_id, [memory_id])
    if stores.turns is not None and turn_ids:
        removed["turn vectors"] = stores.turns.delete(user_id, turn_ids)
    removed["graph"] = stores.graph.delete_segments(user_id, [memory_id])  # its LEARNED_FROM edges too
    removed["knowledge vectors"] = forget_knowledge_points(services, user_id, [memory_id])
    with archive.transaction():
        removed["lifecycle"] = table.delete(user_id, memory_id)
        removed["turns"] = archive.delete_turns(user_id, turn_ids) if turn_ids else 0
        removed["segment"] = archive.delete_segments(user_id, [memory_id])
        if hasattr(archive, "knowledge"):  # facts only this episode taught go with it (their turns do)
            removed["knowledge"] = archive.knowledge.forget_episodes(user_id, [memory_id])
        if hasattr(archive, "procedures"):  # procedures it alone taught (a newer version it made: the older returns)
            removed["procedures"] = archive.procedures.forget_episodes(user_id, [memory_id])
        if hasattr(archive, "semantic"):  # and semantic memories left with one episode
            removed["semantic"] = archive.semantic.forget_episodes(user_id, [memory_id])
    services.keyword_index.forget(user_id)
    services.turn_index.forget(user_id)
    open_audit_log(archive, memory_secret(services.settings)).append("memory_forgotten", actor, user_id,
                               json.dumps({"memory_id": memory_id, "removed": removed, "at": time.time()}, sort_keys=True))
    return removed
