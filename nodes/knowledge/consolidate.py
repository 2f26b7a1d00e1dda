"""Consolidation (P4, A6): episodes that keep coming back become one semantic memory with its sources.

Daily (the maintenance graph's ``knowledge_daily`` step): the user's episodes (closed segments, their unit
embeddings) are linked at cosine ≥ ``similarity`` by blocked matrix products (nodes.lifecycle.autolink's
``top_similar``: memory bounded whatever the user's size); a connected group whose episodes span at least
``min_days`` local days is a semantic memory. Its id is stable (the group's oldest episode), so a group that
grows updates its memory instead of making a second one, and a re-run changes nothing. Episodes are never
deleted by consolidation.

The text, offline: the date span, the group's most shared keywords, and the summary of its most important
episode. (A model's summary of the group is the natural next step; the offline text is what runs here.)
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import numpy as np

from lumina_memory.nodes.lifecycle.autolink import top_similar, unit_rows
from lumina_memory.stores.ids import NAMESPACE, validate_id

SIMILARITY = 0.85
MIN_DAYS = 2
TOP_KEYWORDS = 5


def _components(n: int, pairs_a: np.ndarray, pairs_b: np.ndarray) -> np.ndarray:
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(pairs_a.tolist(), pairs_b.tolist()):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([find(i) for i in range(n)])


def semantic_id(user_id: str, oldest_episode: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"semantic|{user_id}|{oldest_episode}"))


def consolidate_user(services, user_id: str, *, now: float | None = None, similarity: float = SIMILARITY,
                     min_days: int = MIN_DAYS) -> dict[str, int]:
    """Group the user's similar episodes across days into semantic memories. Returns counts."""
    user_id = validate_id(user_id, "user_id")
    archive = services.stores.archive
    table = archive.semantic
    zone = ZoneInfo(getattr(services.settings, "timezone", "UTC"))
    segments = [s for s in archive.segments(user_id) if s.embedding]
    if len(segments) < 2:
        return {"episodes": len(segments), "groups": 0, "written": 0}
    segments.sort(key=lambda s: (s.end_ts, s.segment_id))
    vectors = unit_rows(np.asarray([s.embedding for s in segments], np.float32))
    rows = np.arange(len(segments))
    a, b, _ = top_similar(vectors, rows, rows, similarity, 10, unit=vectors)
    roots = _components(len(segments), a, b)
    known = {r["semantic_id"]: r for r in table.items(user_id)}
    now = time.time() if now is None else now
    written, groups = [], 0
    for root in np.unique(roots):
        members = [segments[i] for i in np.flatnonzero(roots == root)]
        days = {datetime.fromtimestamp(s.end_ts, UTC).astimezone(zone).date() for s in members}
        if len(members) < 2 or len(days) < min_days:
            continue
        groups += 1
        sid = semantic_id(user_id, members[0].segment_id)
        episode_ids = [s.segment_id for s in members]
        old = known.get(sid)
        if old is not None and list(old["episode_ids"]) == episode_ids:
            continue  # unchanged since the last run
        keywords = [k for k, _ in Counter(k for s in members for k in dict.fromkeys(s.keywords)).most_common(TOP_KEYWORDS)]
        best = max(members, key=lambda s: (s.importance, s.end_ts))
        first, last = min(days), max(days)
        text = f"[{first.isoformat()} – {last.isoformat()}, {len(members)} conversations] {', '.join(keywords)}: {best.summary}"
        written.append({
            "semantic_id": sid, "user_id": user_id, "text": text, "keywords": keywords, "episode_ids": episode_ids,
            "first_ts": min(s.start_ts for s in members), "last_ts": max(s.end_ts for s in members),
            "days": len(days), "method": "offline", "created": old["created"] if old else now, "updated": now,
        })
    table.upsert(written)
    # Two groups that merged keep the older one's id: the other's row is stale.
    current = {semantic_id(user_id, segments[int(r)].segment_id) for r in np.unique(roots)}
    stale = [sid for sid in known if sid not in current]
    removed = table.delete(user_id, stale)
    return {"episodes": len(segments), "groups": groups, "written": len(written), "removed": removed}
