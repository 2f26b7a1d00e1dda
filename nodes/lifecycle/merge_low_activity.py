"""A9's merging of similar low-activity knowledge (the notes' 神経新生的再編: low-activity chunks that are near
duplicates of each other are folded into one).

Among a user's facts marked of low activity (nodes.knowledge.forgetting.mark_low_activity) and still current,
two about the same subject with the same polarity whose item vectors (nodes.knowledge.tiers.embedding_text,
the embedder's) have a cosine of at least ``low_activity_merge_similarity`` are one fact said twice in other
words. The survivor is the more confident, then the more recently said; it takes the other's sources (turns,
source ids, episodes). The other keeps its row as history: status ``merged``, ``superseded_by`` the survivor,
a note saying why, exactly as a restated fact is merged at learning time (nodes.knowledge.resolve). Nothing is
deleted; the knowledge tiers follow at their next sync. The notes ask a model to write the merged text; offline
the survivor's own sentence stands for both, which is what a near duplicate needs.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from lumina_memory.stores.ids import validate_id

log = logging.getLogger("lumina.lifecycle")

LIVE = ("current", "coexisting")


def low_activity_ids(table, user_id: str) -> set[str]:
    """The user's remembered items marked of low activity (the item store's reads leave the activity columns out)."""
    return table.low_activity_ids(user_id)


def _union(a: list[str] | None, b: list[str] | None) -> list[str]:
    return list(dict.fromkeys([*(a or []), *(b or [])]))


def merge_pairs(rows: list[dict[str, Any]], vectors: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """(survivor, absorbed) positions: greedy from the strongest item (confidence, then newest said), each absorbed
    once, never a survivor absorbed later."""
    if len(rows) < 2:
        return []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    sims = unit @ unit.T
    order = sorted(range(len(rows)), key=lambda i: (-float(rows[i]["confidence"]), -float(rows[i]["said_at"]), rows[i]["item_id"]))
    taken: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for i in order:
        if i in taken:
            continue
        for j in order:
            if j == i or j in taken or sims[i, j] < threshold:
                continue
            if rows[j]["subject"] != rows[i]["subject"] or rows[j]["polarity"] != rows[i]["polarity"]:
                continue
            pairs.append((i, j))
            taken.add(j)
        taken.add(i)
    return pairs


def merge_low_activity_knowledge(services, user_id: str, now: float | None = None) -> dict[str, Any]:
    """Merge the user's near-duplicate low-activity facts; {"candidates", "merged": [(survivor, absorbed)...]}."""
    from lumina_memory.nodes.knowledge.tiers import embedding_text, sync_best_effort

    user_id = validate_id(user_id, "user_id")
    table = getattr(services.stores.archive, "knowledge", None)
    if table is None:
        return {"candidates": 0, "merged": []}
    low = low_activity_ids(table, user_id)
    rows = [r for r in table.items(user_id, history=True)
            if r["item_id"] in low and r["status"] in LIVE and r["valid_to"] is None]
    if len(rows) < 2:
        return {"candidates": len(rows), "merged": []}
    vectors = np.asarray(services.embedder.embed([embedding_text(r) for r in rows]), dtype=np.float32)
    pairs = merge_pairs(rows, vectors, services.settings.lifecycle.low_activity_merge_similarity)
    if not pairs:
        return {"candidates": len(rows), "merged": []}
    now = time.time() if now is None else now
    survivors: dict[int, dict[str, Any]] = {}
    absorbed: list[dict[str, Any]] = []
    for i, j in pairs:
        keep = survivors.setdefault(i, dict(rows[i]))
        other = rows[j]
        for column in ("source_turn_ids", "source_ids", "episode_ids"):
            keep[column] = _union(keep.get(column), other.get(column))
        keep["updated_at"] = now
        absorbed.append({**other, "status": "merged", "superseded_by": keep["item_id"], "updated_at": now,
                         "note": f"low-activity near duplicate of {keep['item_id']} (A9)"})
    written = [{k: v for k, v in r.items() if k != "forgotten_at"} for r in (*survivors.values(), *absorbed)]
    table.upsert(written)
    sync_best_effort(services, user_id, reason="low-activity merge")
    merged = [(rows[i]["item_id"], rows[j]["item_id"]) for i, j in pairs]
    log.info("A9 merge user=%s: %d low-activity fact(s), %d merged into %d", user_id, len(rows), len(pairs), len(survivors))
    return {"candidates": len(rows), "merged": merged}


def users_with_knowledge(services) -> list[str]:
    table = getattr(services.stores.archive, "knowledge", None)
    return [] if table is None else table.users_with_low_activity()
