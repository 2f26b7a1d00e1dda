"""What recall shows of the lifecycle (F4, F5, F3): every item says its memory's level and whether it is
archived; recall flags what it touched for the next batch's reinforcement.

Deliberate recall (purpose "question": 「覚えてる？」, the CLI's `recall`) reaches everything, faded and
archived memories too: their turns come from the record (``from_record``), and an archived memory it reaches
is flagged for revival. Recall for a reply (priming) shows a memory as it stands at its level — its turns at
level 1, its summary at 2, its keywords at 3 — and never an archived one. Either way an item of a memory carries
its ``trigger`` and ``content`` (F2) as they stand at its level.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from lumina_memory.nodes.text.emotion_f2 import read_emotion

from .columns import TAGS, VALENCES, tags_mask
from .formulas import priority, resonance

DELIBERATE = ("question",)


def _by_priority(services, items: list[dict[str, Any]], rows: dict[str, dict], query: str) -> list[dict[str, Any]]:
    """F7 for priming: priority = retention × match × (1 + w·recalls) + α·resonance × retention, ``match``
    the recall score relative to the best item's. Items without a memory row (older data) count as fresh."""
    params = services.settings.lifecycle
    best = max((float(i.get("score") or 0.0) for i in items), default=0.0) or 1.0
    match = np.array([float(i.get("score") or 0.0) / best for i in items])
    mems = [rows.get(i.get("segment_id")) for i in items]
    retention_ = np.array([float(m["retention"]) if m else 100.0 for m in mems])
    recalls = np.array([int(m["recall_count"]) if m else 0 for m in mems])
    feel = read_emotion(query)
    query_valence = VALENCES[feel.valence] if feel.valence != "neutral" or feel.tags else None
    valences = np.array([VALENCES.get(m["valence"], 0) if m else 0 for m in mems], dtype=np.int8)
    arousal = np.array([float(m["arousal"]) if m else 0.0 for m in mems])
    tags = np.array([tags_mask([t for t in (m["tags"] if m else []) if t in TAGS]) for m in mems], dtype=np.uint32)
    resonance_ = resonance(query_valence, float(feel.arousal), tags_mask([t for t in feel.tags if t in TAGS]),
                           valences, arousal, tags, params)
    ranked = priority(retention_ / 100.0, match, recalls, resonance_, params)
    order = sorted(range(len(items)), key=lambda k: -ranked[k])
    return [{**items[k], "priority": round(float(ranked[k]), 4)} for k in order]


def apply_lifecycle(services, user_id: str, items: list[dict[str, Any]], purpose: str,
                    now: float | None = None, query: str = "") -> list[dict[str, Any]]:
    table = getattr(services.stores.archive, "memories", None)
    ids = sorted({i["segment_id"] for i in items if i.get("segment_id")})
    if table is None or not ids:
        return items
    view, gone = table.recall_view(user_id)  # kept between recalls until the user's memories change
    rows = {i: view[i] for i in ids if i in view}
    forgotten = {i for i in ids if i not in rows and i in gone}
    deliberate = purpose in DELIBERATE
    out = []
    for item in items:
        row = rows.get(item.get("segment_id"))
        if item.get("segment_id") in forgotten:  # auto-deleted: only the record remembers it
            if deliberate:
                out.append({**item, "level": 4, "archived": True, "from_record": True, "forgotten": True})
            continue
        if row is None:  # the open segment, or a segment from before the lifecycle
            out.append({**item, "level": 1, "archived": False})
            continue
        level = int(row["level"])
        shown = {**item, "level": level, "archived": level == 4, "from_record": level > 1}
        if row.get("trigger") or row.get("content"):  # F2: what started it / how it was answered, at its level
            shown["trigger"], shown["content"] = row.get("trigger") or "", row.get("content") or ""
        if not deliberate:
            if level == 4:
                continue
            if level > 1 and row["text"]:
                shown["text"] = row["text"]
                shown["from_record"] = False
        out.append(shown)
    if not deliberate:
        out = _by_priority(services, out, rows, query)
    touched = [i["segment_id"] for i in out if i.get("segment_id") in rows]
    if touched:
        table.mark_recalled(user_id, touched, now if now is not None else time.time(), deliberate)
    return out
