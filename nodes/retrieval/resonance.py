"""F7's current emotion, carried over from the last memory recalled (the notes' 「直前の記憶から引き継ぎ」):

    current_emotion = the emotion of the memory generated or recalled just before ({valence, arousal, tags})
    at the start of a session: none (no resonance)

The user's message is the memory generated just before a reply's recall: when it shows an emotion of its own
(nodes.text.emotion_f2), that is the current one, and the lifecycle's ranking already reads it
(nodes.lifecycle.recall_view). When it shows none (neutral, no tags), the emotion carried from the memory recalled
before ranks the memories by the notes' priority instead: retention × match × (1 + w·recalls) + α × resonance ×
retention (nodes.lifecycle.formulas). After a recall, the first item with an emotion on record is the current one
(``emotion_of``); nodes.retrieve_context keeps it in the thread's state (``current_emotion``) for the next turn, and
lets it go after an idle gap longer than ``boundary_idle_seconds`` (a new session).
"""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np

from ..lifecycle.columns import TAGS, VALENCES, tags_mask
from ..lifecycle.formulas import priority, resonance
from ..text.emotion_f2 import read_emotion


class CurrentEmotion(TypedDict):
    valence: str  # positive / negative / neutral
    arousal: float  # 0-100
    tags: list[str]
    segment_id: str  # the memory it was carried from
    ts: float  # when it was recalled (the conversation's clock)


def emotion_of(services, user_id: str, items: list[dict[str, Any]], ts: float) -> CurrentEmotion | None:
    """The emotion of the first recalled memory that has one on record (a lifecycle memory row), or None."""
    table = getattr(services.stores.archive, "memories", None)
    if table is None:
        return None
    rows, _gone = table.recall_view(user_id)
    for item in items:
        row = rows.get(item.get("segment_id") or "")
        if row is not None and row.get("valence") is not None:
            return CurrentEmotion(valence=str(row["valence"]), arousal=float(row["arousal"] or 0.0),
                                  tags=[t for t in (row["tags"] or []) if t in TAGS],
                                  segment_id=str(item["segment_id"]), ts=float(ts))
    return None


def shows_emotion(query: str) -> bool:
    feel = read_emotion(query)
    return feel.valence != "neutral" or bool(feel.tags)


def by_carried_emotion(services, user_id: str, items: list[dict[str, Any]], emotion: CurrentEmotion
                       ) -> list[dict[str, Any]]:
    """``items`` (the lifecycle's view of a reply's recall, each with its ``priority``) ranked again by the notes'
    priority with ``emotion`` as the current one; an item without a memory row counts as fresh, as in the lifecycle's
    view."""
    table = getattr(services.stores.archive, "memories", None)
    if table is None or not items:
        return items
    params = services.settings.lifecycle
    rows, _gone = table.recall_view(user_id)
    mems = [rows.get(i.get("segment_id") or "") for i in items]
    best = max((float(i.get("score") or 0.0) for i in items), default=0.0) or 1.0
    match = np.array([float(i.get("score") or 0.0) / best for i in items])
    retention = np.array([float(m["retention"]) if m else 100.0 for m in mems]) / 100.0
    recalls = np.array([int(m["recall_count"]) if m else 0 for m in mems])
    valences = np.array([VALENCES.get(m["valence"], 0) if m else 0 for m in mems], dtype=np.int8)
    arousal = np.array([float(m["arousal"]) if m else 0.0 for m in mems])
    tags = np.array([tags_mask([t for t in (m["tags"] if m else []) if t in TAGS]) for m in mems], dtype=np.uint32)
    resonance_ = resonance(VALENCES.get(emotion["valence"], 0), float(emotion["arousal"]),
                           tags_mask([t for t in emotion["tags"] if t in TAGS]), valences, arousal, tags, params)
    ranked = priority(retention, match, recalls, resonance_, params)
    order = sorted(range(len(items)), key=lambda k: -ranked[k])
    return [{**items[k], "priority": round(float(ranked[k]), 4), "resonance": round(float(resonance_[k]), 4)}
            for k in order]


def within_limits(items: list[dict[str, Any]], params) -> list[dict[str, Any]]:
    """A reply's memories, ranked by F7's priority (each with its ``priority``), cut by the notes' retrieval settings:
    a memory whose priority on the notes' scale (retention 0–100, so × 100) is under
    ``params.relevance_threshold`` is left out, then at most ``params.top_k`` are kept (0: no cut).
    An item without a priority (the open conversation, knowledge) is neither cut nor counted."""
    threshold, top_k = params.relevance_threshold, params.top_k
    if not threshold and not top_k:
        return items
    kept, ranked = [], 0
    for item in items:
        if "priority" in item:
            if 100.0 * float(item["priority"]) < threshold or (top_k and ranked >= top_k):
                continue
            ranked += 1
        kept.append(item)
    return kept
