"""Hybrid recall across tiers (L6, S1, A3): short-term turns, recent mid-term segments, long-term
vectors and graph neighbours, merged per segment, scored (P6) and tagged with where they came from."""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Any, Sequence

import numpy as np

from stores.models import SegmentRecord

from ..text.tokenize import nouns
from .lexical import bm25_scores, minmax
from .presets import weights_for

DAY = 86_400.0


def _date(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


class _Merged:
    """Candidates keyed by segment: one item however many tiers found it."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}

    def add(self, tier: str, seg_id: str, payload: dict[str, Any], signal: float = 0.0) -> None:
        item = self.items.get(seg_id)
        if item is None:
            item = self.items[seg_id] = {"segment_id": seg_id, "tiers": [], "payload": payload, "graph": 0.0}
        if tier not in item["tiers"]:
            item["tiers"].append(tier)
        if tier == "graph":
            item["graph"] = max(item["graph"], signal)
        if not item["payload"].get("embedding") and payload.get("embedding"):
            item["payload"] = payload


def recall(
    services,
    user_id: str,
    query: str,
    *,
    purpose: str = "talking",
    limit: int | None = None,
    character: str | None = None,
    open_turns: Sequence[dict] | None = None,
    now_ts: float | None = None,
) -> list[dict[str, Any]]:
    settings = services.settings
    stores = services.stores
    alpha, beta, gamma = weights_for(purpose)
    limit = limit or settings.retrieve_max_items
    qvec = services.embedder.embed([query])[0]
    merged = _Merged()

    for record in stores.midterm.recent_segments(user_id, settings.retrieve_recent):
        merged.add("mid-term", record.segment_id, record.model_dump())
    hits = stores.vectors.search(user_id, qvec.tolist(), settings.retrieve_semantic, character=character)
    for hit in hits:
        payload = dict(hit.payload)
        merged.add("long-term", payload["segment_id"], payload)
    for seg_id, _score in services.keyword_index.search(stores.archive, user_id, query, settings.retrieve_keyword):
        if seg_id not in merged.items:
            record = stores.midterm.get_segment(user_id, seg_id) or stores.archive.get_segment(user_id, seg_id)
            if record is not None:
                merged.add("archive", seg_id, record.model_dump())
        else:
            merged.add("archive", seg_id, {})
    concepts = list(dict.fromkeys(nouns(query)))
    graph_hits: list[tuple[str, float]] = []
    if concepts:
        graph_hits += [(s, float(n) / len(concepts)) for s, n in stores.graph.segments_for_concepts(user_id, concepts, settings.retrieve_graph)]
    seeds = [h.payload["segment_id"] for h in hits[:3]]
    if seeds:
        graph_hits += [(s, 0.5 * score) for s, score in stores.graph.associated(user_id, seeds, settings.retrieve_graph)]
    for seg_id, signal in graph_hits:
        if seg_id in merged.items:
            merged.add("graph", seg_id, {}, signal)
            continue
        record = stores.midterm.get_segment(user_id, seg_id) or stores.archive.get_segment(user_id, seg_id)
        if record is not None:
            merged.add("graph", seg_id, record.model_dump(), signal)

    if now_ts is None:
        ends = [item["payload"].get("end_ts", 0.0) for item in merged.items.values()]
        now_ts = max([*ends, *(t["ts"] for t in open_turns or [])], default=time.time())
    half_life = settings.recency_half_life_days * DAY
    candidates = list(merged.items.values())
    dense = []
    for item in candidates:
        vector = np.asarray(item["payload"].get("embedding") or [], dtype=np.float32)
        dense.append(max(0.0, float(vector @ qvec)) if vector.size == qvec.size else 0.0)
    lexical = bm25_scores(query, [c["payload"].get("text") or c["payload"].get("summary", "") for c in candidates])
    # Raw cosine and BM25 live on different scales and, for short chat turns, in a narrow band;
    # min-max over the pool lets the best match of each signal count fully.
    fused = [0.5 * d + 0.5 * l for d, l in zip(minmax(dense), minmax(lexical))]
    results: list[dict[str, Any]] = []
    for item, relevance in zip(candidates, fused):
        payload = item["payload"]
        relevance = min(1.0, relevance + 0.2 * item["graph"])
        age = max(0.0, now_ts - float(payload.get("end_ts", now_ts)))
        recency = math.pow(0.5, age / half_life)
        score = alpha * relevance + beta * recency + gamma * float(payload.get("importance", 0.0))
        results.append(_item(item["segment_id"], payload, item["tiers"], score, relevance, recency))
    results.sort(key=lambda r: -r["score"])
    out = results[:limit]
    if open_turns:
        out.insert(0, _open_segment_item(open_turns))
    return out


def _item(seg_id: str, payload: dict, tiers: list[str], score: float, relevance: float, recency: float) -> dict:
    return {
        "segment_id": seg_id,
        "text": payload.get("summary", ""),
        "date": _date(float(payload.get("end_ts", 0.0))),
        "tiers": tiers,
        "source_ids": list(payload.get("source_ids", [])),
        "turn_ids": list(payload.get("turn_ids", [])),
        "keywords": list(payload.get("keywords", [])),
        "score": round(score, 4),
        "relevance": round(relevance, 4),
        "recency": round(recency, 4),
        "importance": float(payload.get("importance", 0.0)),
    }


def _open_segment_item(turns: Sequence[dict]) -> dict:
    return {
        "segment_id": "(open)",
        "text": " / ".join(f"{t['speaker']}: {t['text']}" for t in turns[-6:]),
        "date": _date(turns[-1]["ts"]),
        "tiers": ["short-term"],
        "source_ids": [t["source_id"] for t in turns],
        "turn_ids": [t["turn_id"] for t in turns],
        "keywords": [],
        "score": 1.0,
        "relevance": 1.0,
        "recency": 1.0,
        "importance": 0.0,
    }


