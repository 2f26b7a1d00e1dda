"""Hybrid recall across tiers (L6, S1, A3, P6, S6, A1): the public retrieval API.

``recall(services, user_id, query, ...)`` ranks *turns* — the finest unit every tier can point back to —
from several candidate channels, each switchable off in settings (``recall_*``):

- ``turn_dense``     dense search over the turn-vector collection (stores.turn_vectors)      tier: long-term
- ``turn_keyword``   BM25 over the user's archived turns, Sudachi/English terms               tier: archive
- ``segment_dense``  long-term segment centroids                                             tier: long-term
- ``segment_keyword`` BM25 over archived segments (summary + keywords + text)                 tier: archive
- ``midterm``        the most recent mid-term segments (S1 "recent")                          tier: mid-term
- ``graph``          segments that MENTION the query's concepts, and ASSOCIATED neighbours of
                     the best segments (A3 spreading activation)                              tier: graph

Turn channels are fused by reciprocal rank; segment channels add a share of their segment's fused score to
each of its turns, and a turn passes a share of its relevance to its neighbours (answers sit next to the
question that prompted them). The score is α·relevance + β·recency + γ·importance with the purpose's
preset (P6; recency on the conversation's clock), boosted inside a time window the query names
("last week", "先月"), re-ranked by MMR (λ 0.7 over a pool of 3× the items wanted) with near-duplicates
(≥ 0.95) dropped, and packed into a token budget (A1). Hit turns that are adjacent in the conversation are
merged into one item in conversation order, prefixed with their date; the packer accounts for that.

Every item carries ``source_ids`` (the caller's ids, e.g. LoCoMo dia_ids) and ``turn_ids`` of exactly the
turns its text was built from, plus ``tiers`` (where it was found) and ``date``.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..text.tokenize import nouns, terms
from .budget import count_tokens
from .presets import weights_for
from .temporal import date_label, time_window

DAY = 86_400.0
CHANNELS = ("turn_dense", "turn_keyword", "segment_dense", "segment_keyword", "midterm", "graph")
SWITCHES = (*CHANNELS, "temporal", "mmr", "context")
_TIER = {
    "turn_dense": "long-term",
    "turn_keyword": "archive",
    "segment_dense": "long-term",
    "segment_keyword": "archive",
    "midterm": "mid-term",
    "graph": "graph",
    "short-term": "short-term",
}
_AVG_TOKENS_GUESS = 25  # to size the MMR pool when only a budget is given


def _date(ts: float) -> str:
    return date_label(ts)


@dataclass
class Timings:
    embed_ms: float = 0.0
    search_ms: float = 0.0
    channels: dict[str, float] = field(default_factory=dict)


def _enabled(settings, name: str, disabled: Sequence[str]) -> bool:
    return name not in disabled and bool(getattr(settings, f"recall_{name}", True))


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
    budget: int | None = None,
    query_vector: Sequence[float] | None = None,
    disabled: Sequence[str] = (),
    timings: Timings | None = None,
) -> list[dict[str, Any]]:
    """Ranked memory items for ``query`` from one user's memory (never another user's).

    ``limit``: at most this many items (default settings.retrieve_max_items when no budget is given).
    ``budget``: pack items into this many tokens (CJK char = 1, else words), in rank order.
    ``query_vector``: a precomputed embedding of the query (skips the embedder).
    ``disabled``: channel/stage names to switch off for this call (ablation), see SWITCHES.
    ``character``: restricts the long-term segment channel to segments this character took part in.
    """
    settings = services.settings
    stores = services.stores
    alpha, beta, gamma = weights_for(purpose)
    on = {name: _enabled(settings, name, disabled) for name in SWITCHES}
    if stores.turns is None:
        on["turn_dense"] = False
    started = time.perf_counter()
    if query_vector is None:
        qvec = services.embedder.embed([query])[0]
    else:
        qvec = np.asarray(query_vector, dtype=np.float32)
    t_embed = time.perf_counter()

    index = services.turn_index.get(stores.archive, user_id)
    turns = index.turns
    n = len(turns)
    k = settings.recall_rrf_k
    w_dense, w_keyword, w_segment = settings.recall_channel_weights
    rel = np.zeros(n, dtype=np.float64)
    tiers: dict[int, set[str]] = defaultdict(set)
    vectors: dict[int, np.ndarray] = {}
    channel_ms: dict[str, float] = {}
    K = settings.recall_turn_candidates

    # --- turn channels --------------------------------------------------------------------------
    if on["turn_dense"] and n:
        t0 = time.perf_counter()
        hits = stores.turns.search_with_vectors(user_id, qvec.tolist(), K)
        for rank, (hit, vec) in enumerate(hits):
            i = index.position.get(hit.payload.get("turn_id", ""))
            if i is None:
                continue
            rel[i] += w_dense / (k + rank + 1)
            tiers[i].add(_TIER["turn_dense"])
            if vec:
                vectors[i] = np.asarray(vec, dtype=np.float32)
        channel_ms["turn_dense"] = (time.perf_counter() - t0) * 1000
    q_terms = terms(query)
    if on["turn_keyword"] and n:
        t0 = time.perf_counter()
        for rank, (i, _score) in enumerate(index.search(q_terms, K)):
            rel[i] += w_keyword / (k + rank + 1)
            tiers[i].add(_TIER["turn_keyword"])
        channel_ms["turn_keyword"] = (time.perf_counter() - t0) * 1000

    # --- segment channels: a fused segment score spread over the segment's turns ------------------
    seg_score: dict[str, float] = defaultdict(float)
    seg_tiers: dict[str, set[str]] = defaultdict(set)
    seg_importance: dict[str, float] = {}
    S = settings.recall_segment_candidates

    def add_segments(name: str, ranked: Sequence[tuple[str, float]]) -> None:
        for rank, (seg_id, signal) in enumerate(ranked):
            seg_score[seg_id] += signal / (k + rank + 1)
            seg_tiers[seg_id].add(_TIER[name])

    seeds: list[str] = []
    if on["segment_dense"] and S:
        t0 = time.perf_counter()
        hits = stores.vectors.search(user_id, qvec.tolist(), S, character=character)
        add_segments("segment_dense", [(h.payload["segment_id"], 1.0) for h in hits])
        for h in hits:
            seg_importance[h.payload["segment_id"]] = float(h.payload.get("importance", 0.0))
        seeds = [h.payload["segment_id"] for h in hits[:3]]
        channel_ms["segment_dense"] = (time.perf_counter() - t0) * 1000
    if on["segment_keyword"] and S:
        t0 = time.perf_counter()
        add_segments("segment_keyword", [(s, 1.0) for s, _ in services.keyword_index.search(stores.archive, user_id, query, S)])
        channel_ms["segment_keyword"] = (time.perf_counter() - t0) * 1000
    if on["midterm"] and settings.retrieve_recent:
        t0 = time.perf_counter()
        recent = stores.midterm.recent_segments(user_id, settings.retrieve_recent)
        # Recent segments are candidates by recency alone: ranked among themselves by similarity.
        sims = [float(np.dot(np.asarray(r.embedding, dtype=np.float32), qvec)) if r.embedding else 0.0 for r in recent]
        order = sorted(range(len(recent)), key=lambda j: -sims[j])
        add_segments("midterm", [(recent[j].segment_id, 0.5) for j in order])
        for r in recent:
            seg_importance[r.segment_id] = r.importance
        channel_ms["midterm"] = (time.perf_counter() - t0) * 1000
    if on["graph"] and settings.retrieve_graph:
        t0 = time.perf_counter()
        concepts = list(dict.fromkeys(nouns(query)))
        ranked: list[tuple[str, float]] = []
        if concepts:
            ranked += [(s, 0.5 * c / len(concepts)) for s, c in stores.graph.segments_for_concepts(user_id, concepts, settings.retrieve_graph)]
        if seeds:
            ranked += [(s, 0.5 * float(score)) for s, score in stores.graph.associated(user_id, seeds, settings.retrieve_graph)]
        add_segments("graph", sorted(ranked, key=lambda kv: -kv[1]))
        channel_ms["graph"] = (time.perf_counter() - t0) * 1000
    if seg_score and n:
        top = max(seg_score.values())
        members: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(turns):
            if t.segment_id in seg_score:
                members[t.segment_id].append(i)
        turn_top = rel.max() if rel.any() else 1.0 / (k + 1)
        for seg_id, score in seg_score.items():
            share = w_segment * turn_top * score / top
            for i in members.get(seg_id, []):
                # A segment lends weight to the turns that match the query on their own, and a little
                # to the rest (so a segment found only by a segment channel can still surface).
                rel[i] += share * (0.5 if rel[i] > 0 else 0.25)
                tiers[i] |= seg_tiers[seg_id]

    # --- neighbours: an answer sits next to what prompted it --------------------------------------
    spread = settings.recall_neighbour_spread if on["context"] else 0.0
    if spread and n > 1:
        base = rel.copy()
        same_prev = np.array([turns[i].segment_id == turns[i - 1].segment_id or abs(turns[i].ts - turns[i - 1].ts) < 3600
                              for i in range(1, n)])
        left = np.zeros(n)
        right = np.zeros(n)
        left[1:] = np.where(same_prev, base[:-1], 0.0)  # relevance of the previous turn
        right[:-1] = np.where(same_prev, base[1:], 0.0)  # relevance of the next turn
        rel = base + spread * np.maximum(left, right)
        for i in np.flatnonzero((base == 0) & (rel > 0)):
            tiers[int(i)].add("archive")

    candidates = np.flatnonzero(rel > 0)
    if now_ts is None:
        now_ts = max([turns[-1].ts if turns else 0.0, *(t["ts"] for t in open_turns or [])]) or time.time()
    window = time_window(query, now_ts) if on["temporal"] else None
    t_search = time.perf_counter()

    # --- P6 score ------------------------------------------------------------------------------------
    top_rel = rel[candidates].max() if candidates.size else 1.0
    half_life = settings.recency_half_life_days * DAY
    scored: list[tuple[float, int, float, float]] = []
    for i in candidates:
        turn = turns[i]
        relevance = float(rel[i] / top_rel)
        if window is not None and window[0] <= turn.ts <= window[1]:
            relevance = min(1.0, relevance * 1.5 + 0.1)
        age = max(0.0, now_ts - turn.ts)
        recency = math.pow(0.5, age / half_life)
        importance = seg_importance.get(turn.segment_id, 0.0)
        score = alpha * relevance + beta * recency + gamma * importance
        scored.append((score, int(i), relevance, recency))
    scored.sort(key=lambda s: (-s[0], s[1]))

    # --- MMR (S6) and dedup ----------------------------------------------------------------------------
    wanted = limit or (max(1, budget // _AVG_TOKENS_GUESS) if budget else settings.retrieve_max_items)
    pool_size = settings.recall_mmr_pool * wanted
    pool = scored[:pool_size]
    rest = scored[pool_size:]
    dedup_on = settings.recall_dedup_similarity < 1.0
    if pool and stores.turns is not None and (on["mmr"] or dedup_on):
        missing = [turns[c[1]].turn_id for c in pool if c[1] not in vectors]
        if missing:
            for turn_id, vec in stores.turns.vectors_of(user_id, missing).items():
                vectors[index.position[turn_id]] = np.asarray(vec, dtype=np.float32)
    ordered = _mmr(pool, vectors, settings.recall_mmr_lambda) if on["mmr"] else list(pool)
    ordered = _dedup(ordered + rest, vectors, turns, settings.recall_dedup_similarity, len(pool))

    granularity = settings.recall_granularity
    if granularity == "auto":
        granularity = "turns" if budget is not None else "segments"
    if granularity == "mixed" and budget is not None:
        items = _pack_turns(ordered, turns, tiers, int(budget * settings.recall_mixed_turn_share), None, settings, wanted)
        seen = {turns[index.position[t]].segment_id for item in items for t in item["turn_ids"]}
        used = sum(item["tokens"] for item in items)
        rest_ordered = [c for c in ordered if turns[c[1]].segment_id not in seen]
        items += _segment_items(rest_ordered, turns, tiers, services, user_id, budget - used, None)
    elif granularity == "segments":
        items = _segment_items(ordered, turns, tiers, services, user_id, budget, limit or (None if budget else wanted))
    else:
        items = _pack_turns(ordered, turns, tiers, budget, limit if budget is None else None, settings, wanted)
    if open_turns:
        items.insert(0, _open_segment_item(open_turns))
    if timings is not None:
        timings.embed_ms = (t_embed - started) * 1000
        timings.search_ms = (time.perf_counter() - t_embed) * 1000
        timings.channels = channel_ms
    return items


def _mmr(pool: list[tuple], vectors: dict[int, np.ndarray], lam: float) -> list[tuple]:
    """S6 maximal marginal relevance over the pool: λ·score − (1−λ)·max similarity to those chosen.
    Candidates without a vector are never penalised."""
    if len(pool) < 2:
        return list(pool)
    dim = next((v.size for v in vectors.values()), 0)
    matrix = np.zeros((len(pool), max(dim, 1)), dtype=np.float32)
    for j, cand in enumerate(pool):
        vec = vectors.get(cand[1])
        if vec is not None:
            matrix[j] = vec
    sims = matrix @ matrix.T
    scores = np.array([c[0] for c in pool], dtype=np.float64)
    redundancy = np.zeros(len(pool))
    chosen = np.zeros(len(pool), dtype=bool)
    order: list[tuple] = []
    for _ in range(len(pool)):
        value = np.where(chosen, -np.inf, lam * scores - (1 - lam) * redundancy)
        j = int(np.argmax(value))
        chosen[j] = True
        order.append(pool[j])
        redundancy = np.maximum(redundancy, sims[j])
    return order


def _dedup(ordered: list[tuple], vectors: dict[int, np.ndarray], turns, threshold: float, head: int) -> list[tuple]:
    """Drop a turn whose text repeats, or (among the first ``head``) whose vector is ≥ threshold similar
    to one kept before it (S3 at recall time)."""
    kept: list[tuple] = []
    texts: set[str] = set()
    dim = next((v.size for v in vectors.values()), 0)
    kept_matrix = np.zeros((max(head, 1), max(dim, 1)), dtype=np.float32)
    n_kept = 0
    for pos, cand in enumerate(ordered):
        text = turns[cand[1]].text
        if text in texts:
            continue
        vec = vectors.get(cand[1]) if pos < head else None
        if vec is not None:
            if n_kept and float(np.max(kept_matrix[:n_kept] @ vec)) >= threshold:
                continue
            kept_matrix[n_kept] = vec
            n_kept += 1
        texts.add(text)
        kept.append(cand)
    return kept


def _segment_items(ordered, turns, tiers, services, user_id, budget, max_items) -> list[dict[str, Any]]:
    """One item per segment, segments ranked by their hit turns (best counts fully, the next ones half,
    a quarter ...). Text: the segment's date and summary, then its best raw turns the summary lacks."""
    stores = services.stores
    hits: dict[str, list[tuple]] = defaultdict(list)
    seg_rank: dict[str, float] = defaultdict(float)
    for cand in ordered:
        seg = turns[cand[1]].segment_id
        seg_rank[seg] += cand[0] * 0.5 ** len(hits[seg])
        hits[seg].append(cand)
    items: list[dict[str, Any]] = []
    used = 0
    for seg in sorted(seg_rank, key=lambda s: -seg_rank[s]):
        if max_items is not None and len(items) >= max_items:
            break
        record = stores.midterm.get_segment(user_id, seg) or stores.archive.get_segment(user_id, seg)
        if record is None:
            continue
        best = hits[seg][:2]
        raw = [turns[c[1]] for c in sorted(best, key=lambda c: c[1]) if turns[c[1]].text[:40] not in record.summary]
        text = f"[{_date(record.end_ts)}] {record.summary}" + "".join(f"\n{t.text}" for t in raw)
        cost = count_tokens(text)
        if budget is not None and used + cost > budget:
            continue
        used += cost
        by_turn = {t.turn_id: t for t in turns if t.segment_id == seg} if raw else {}
        quoted = [sid for tid, sid in zip(record.turn_ids, record.source_ids)
                  if tid in {t.turn_id for t in raw} or (by_turn.get(tid) and by_turn[tid].text[:40] in record.summary)]
        item_tiers: list[str] = []
        for c in hits[seg]:
            for tier in sorted(tiers.get(c[1], {"archive"})):
                if tier not in item_tiers:
                    item_tiers.append(tier)
        top = hits[seg][0]
        items.append(
            {
                "segment_id": seg,
                "kind": "segment",
                "text": text,
                "date": _date(record.end_ts),
                "tiers": item_tiers,
                "source_ids": list(record.source_ids),
                "turn_ids": list(record.turn_ids),
                "quoted_source_ids": quoted,
                "keywords": list(record.keywords),
                "score": round(seg_rank[seg], 4),
                "relevance": round(top[2], 4),
                "recency": round(top[3], 4),
                "importance": float(record.importance),
                "tokens": cost,
            }
        )
    return items


def _pack_turns(kept, turns, tiers, budget, limit, settings, wanted) -> list[dict[str, Any]]:
    """Take ranked turns while the budget allows; adjacent chosen turns merge into one item (one date
    prefix, conversation order). Returns the items in rank order of their best turn."""
    groups: list[dict[str, Any]] = []  # each: {"lo", "hi", "rank", "members", "score", ...}
    by_index: dict[int, dict[str, Any]] = {}
    used = 0
    max_items = limit or (None if budget else wanted)
    for rank, (score, i, relevance, recency) in enumerate(kept):
        if i in by_index:
            continue
        cost = count_tokens(turns[i].text)
        if budget is not None and used + cost > budget:
            continue
        date = _date(turns[i].ts)
        joinable = [g for g in (by_index.get(i - 1), by_index.get(i + 1)) if g is not None and g["date"] == date]
        extra = 0 if joinable else 1  # a new item pays for its "[date]" prefix
        if budget is not None and used + cost + extra > budget:
            continue
        if not joinable and max_items is not None and len(groups) >= max_items:
            if budget is None:
                break
            continue
        used += cost + extra
        if not joinable:
            group = {"lo": i, "hi": i, "rank": rank, "score": score, "relevance": relevance, "recency": recency,
                     "date": date, "members": {i}}
            groups.append(group)
        else:
            group = joinable[0]
            if len(joinable) == 2 and joinable[1] is not group:  # i bridges two items: merge them
                other = joinable[1]
                group["members"] |= other["members"]
                group["lo"], group["hi"] = min(group["lo"], other["lo"]), max(group["hi"], other["hi"])
                group["rank"] = min(group["rank"], other["rank"])
                group["score"] = max(group["score"], other["score"])
                for m in other["members"]:
                    by_index[m] = group
                groups.remove(other)
                used -= 1  # the merged item needs one date prefix, not two
            group["members"].add(i)
            group["lo"], group["hi"] = min(group["lo"], i), max(group["hi"], i)
        by_index[i] = group
    items = []
    for group in sorted(groups, key=lambda g: g["rank"]):
        members = sorted(group["members"])
        chosen = [turns[m] for m in members]
        text = f"[{group['date']}] " + "\n".join(t.text for t in chosen)
        item_tiers: list[str] = []
        for m in members:
            for tier in sorted(tiers.get(m, {"archive"})):
                if tier not in item_tiers:
                    item_tiers.append(tier)
        items.append(
            {
                "segment_id": chosen[0].segment_id,
                "kind": "turns",
                "text": text,
                "date": group["date"],
                "tiers": item_tiers,
                "source_ids": [t.source_id for t in chosen],
                "quoted_source_ids": [t.source_id for t in chosen],
                "turn_ids": [t.turn_id for t in chosen],
                "speakers": [t.speaker for t in chosen],
                "keywords": [],
                "score": round(group["score"], 4),
                "relevance": round(group["relevance"], 4),
                "recency": round(group["recency"], 4),
                "importance": 0.0,
                "tokens": count_tokens(text),
            }
        )
    return items


def _open_segment_item(turns: Sequence[dict]) -> dict:
    text = " / ".join(f"{t['speaker']}: {t['text']}" for t in turns[-6:])
    return {
        "segment_id": "(open)",
        "kind": "short-term",
        "text": text,
        "date": _date(turns[-1]["ts"]),
        "tiers": ["short-term"],
        "source_ids": [t["source_id"] for t in turns[-6:]],
        "turn_ids": [t["turn_id"] for t in turns[-6:]],
        "keywords": [],
        "score": 1.0,
        "relevance": 1.0,
        "recency": 1.0,
        "importance": 0.0,
        "tokens": count_tokens(text),
    }
