"""The weekly knowledge step (P4, A7): duplicates merged and contradictions resolved across all of a user's facts.

Weekly, ``review_user``: every current item of the user is folded again, oldest statement first, through the
same resolution as at learning time (nodes.knowledge.resolve). Items learned out of order (a replayed import, a
model's late extraction) or under older settings (an attribute moved from accumulate to single) come out merged
or superseded as they would have been; nothing is deleted, and an item changes only when its status, validity
or sources do. A fact the refold ends puts the current facts resting on it under review (F6,
nodes.knowledge.dependents). A re-run changes nothing.
"""

from __future__ import annotations

import time
from typing import Any

from lumina_memory.stores.ids import validate_id

from .dependents import under_review
from .learn import item_of, params_of, row_of
from .models import KnowledgeItem
from .resolve import resolve_all

_COMPARED = ("status", "valid_to", "superseded_by", "source_turn_ids", "source_ids")


def review_user(services, user_id: str, *, now: float | None = None) -> dict[str, int]:
    user_id = validate_id(user_id, "user_id")
    table = services.stores.archive.knowledge
    params = params_of(services)
    rows = {r["item_id"]: r for r in table.items(user_id, history=True)}
    live = [item_of(r) for r in rows.values() if r["status"] in ("current", "coexisting") and r["valid_to"] is None]
    if len(live) < 2:
        return {"items": len(rows), "changed": 0}
    # Fold from nothing, oldest first: the first statement of each fact is "added", later ones resolve against it.
    fresh = [i.model_copy(update={"status": "current", "valid_to": None, "superseded_by": None}) for i in live]
    folded, _steps = resolve_all([], fresh, params)
    now = time.time() if now is None else now
    changed: list[dict[str, Any]] = []
    ended: dict[str, tuple[KnowledgeItem, KnowledgeItem]] = {}
    by_id = {i.item_id: i for i in folded}
    for item in folded:
        old = rows[item.item_id]
        new = row_of(item, user_id, old["episode_ids"], now)
        if any(_norm(new[k]) != _norm(old[k]) for k in _COMPARED):
            if item.status == "current" and old["status"] == "coexisting":
                continue  # a coexisting pair refolded alone: its annotation stands
            changed.append(new)
            if item.status == "superseded" and item.superseded_by in by_id:
                ended[item.item_id] = (item, by_id[item.superseded_by])
    # F6: what rested on a fact the refold ended goes under review, as at learning time.
    written = {r["item_id"] for r in changed}
    resting = [i for i in folded if i.derived_from and i.item_id not in written]
    for item in under_review(resting, ended, set()):
        changed.append(row_of(item, user_id, rows[item.item_id]["episode_ids"], now))
    table.upsert(changed)
    return {"items": len(rows), "changed": len(changed)}


def _norm(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value
