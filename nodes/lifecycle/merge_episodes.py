"""A9's merging of similar low-activity episodes (the notes' 神経新生的再編 applied to memories, as
nodes.lifecycle.merge_low_activity applies it to facts).

A user's memories marked of low activity (nodes.lifecycle.manage.low_activity: unused ``low_activity_unused_days``
and recalled fewer than ``low_activity_min_recalls`` times, or archived for that; ``mergeable`` adds the archived
ones recalled fewer times and not asked back) and not protected are compared
by their segments' vectors (the centroid of their turns' embeddings, what the long-term points hold). Greedily
from the strongest (retention, then intensity, then the oldest), each takes every other candidate at a cosine of
at least ``episode_merge_similarity``: one memory told twice. The survivor keeps the strongest retention and
intensity, the union of tags, the earliest creation, a merged text, trigger and content (offline: the distinct
texts joined, the survivor's first; the notes would ask a model to rewrite them), and a derived_from relation to
each memory folded into it. The folded ones stop being memories in the same archive transaction (marked forgotten:
their segments stay the record and never come back as fresh memories), and the lifecycle outbox owes their
removal from the vector, mid-term and graph tiers and the survivor's re-embedding (nodes.lifecycle.phases). The
undo log keeps every row the merge changed (step ``merge``), so `lumina-memory undo` can put the merge back whole;
``plan_merges`` is what `forget-preview` lists.
Like A9's archiving and deletion it runs only with ``low_activity_enabled`` (off by default: the F notes alone
decide); the maintenance graph's lifecycle_merge checks it.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from lumina_memory.stores.ids import validate_id

from .columns import ARCHIVED
from .manage import low_activity

log = logging.getLogger("lumina.lifecycle")
JOIN = " / "


def mergeable(row: dict[str, Any], params) -> bool:
    """Unprotected and of low activity: marked (manage.low_activity), or archived, not asked back and recalled
    fewer than ``low_activity_min_recalls`` times (the batch stops counting an archived memory's idle days: it is
    out of use whatever archived it)."""
    if row["protected"]:
        return False
    if low_activity(row, params):
        return True
    return (int(row["level"]) == ARCHIVED and not row["revival_requested"]
            and int(row["recall_count"]) < params.low_activity_min_recalls)


def candidates(services, user_id: str) -> list[dict[str, Any]]:
    """The user's mergeable memories, oldest first."""
    params = services.settings.lifecycle
    return [r for r in services.stores.archive.memories.rows(user_id) if mergeable(r, params)]


def merge_groups(rows: list[dict[str, Any]], vectors: np.ndarray,
                 threshold: float) -> list[tuple[int, dict[int, float]]]:
    """(survivor, {absorbed: cosine}) positions, greedy from the strongest; each memory in one group at most."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    sims = unit @ unit.T
    order = sorted(range(len(rows)), key=lambda i: (-float(rows[i]["retention"]), -float(rows[i]["intensity"]),
                                                    float(rows[i]["created"]), rows[i]["memory_id"]))
    taken: set[int] = set()
    groups: list[tuple[int, dict[int, float]]] = []
    for i in order:
        if i in taken or not norms[i, 0]:
            continue
        taken.add(i)
        absorbed = {j: float(sims[i, j]) for j in order if j not in taken and norms[j, 0] and sims[i, j] >= threshold}
        if absorbed:
            taken.update(absorbed)
            groups.append((i, absorbed))
    return groups


def _joined(parts: list[str | None]) -> str:
    return JOIN.join(dict.fromkeys(p.strip() for p in parts if p and p.strip()))


def merged_values(rows: list[dict[str, Any]], summaries: dict[str, str]) -> dict[str, Any]:
    """What the survivor (``rows[0]``) holds after the merge; ``summaries``: memory id -> its segment's summary,
    which stands for a level-1 memory's text (its turns are its text)."""
    return {
        "retention": max(float(r["retention"]) for r in rows),
        "intensity": max(float(r["intensity"]) for r in rows),
        "tags": list(dict.fromkeys(t for r in rows for t in r["tags"])),
        "created": min(float(r["created"]) for r in rows),
        "text": _joined([r["text"] or summaries.get(r["memory_id"]) for r in rows]) or None,
        "trigger": _joined([r["trigger"] for r in rows]) or None,
        "content": _joined([r["content"] for r in rows]) or None,
    }


def plan_merges(services, user_id: str) -> tuple[int, list[tuple[dict[str, Any], dict[str, float], dict[str, Any]]]]:
    """What merging would do now, nothing written: (candidates, [(survivor row, {folded id: cosine}, values)])."""
    user_id = validate_id(user_id, "user_id")
    rows = candidates(services, user_id)
    if len(rows) < 2:
        return len(rows), []
    records = {r.segment_id: r for r in services.stores.archive.segments(user_id)}
    rows = [r for r in rows if records.get(r["memory_id"]) is not None and records[r["memory_id"]].embedding]
    if len(rows) < 2:
        return len(rows), []
    vectors = np.asarray([records[r["memory_id"]].embedding for r in rows], dtype=np.float32)
    plans = []
    for i, absorbed in merge_groups(rows, vectors, services.settings.lifecycle.episode_merge_similarity):
        group = [rows[i], *(rows[j] for j in absorbed)]
        values = merged_values(group, {r["memory_id"]: records[r["memory_id"]].summary for r in group})
        plans.append((rows[i], {rows[j]["memory_id"]: s for j, s in absorbed.items()}, values))
    return len(rows), plans


def merge_episodes(services, user_id: str, day: int, now: float | None = None) -> dict[str, Any]:
    """Merge the user's similar low-activity memories; {"candidates", "merged": [(survivor, [absorbed, ...]), ...]}.
    Each merge is kept in the undo log (step ``merge``, applied at ``now``: the clock by default)."""
    user_id = validate_id(user_id, "user_id")
    count, plans = plan_merges(services, user_id)
    table = services.stores.archive.memories
    merged = []
    for survivor, absorbed, values in plans:
        table.merge_into(user_id, survivor["memory_id"], absorbed, values, day, now)
        merged.append((survivor["memory_id"], list(absorbed)))
    if merged:
        log.info("A9 episode merge user=%s: %d low-activity memories, %d folded into %d", user_id, count,
                 sum(len(m[1]) for m in merged), len(merged))
    return {"candidates": count, "merged": merged}


def users_with_memories(services) -> list[str]:
    """Users holding lifecycle memories (those the daily batch has run for)."""
    return sorted(services.stores.archive.memories.last_days())
