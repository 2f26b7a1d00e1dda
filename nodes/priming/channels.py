"""The four priming channels (A1): each reads one kind of memory and returns candidate items, best first.

They run in parallel (prime.py) and only read; what fits the budgets is decided afterwards (assemble.py).
Every item is a dict with the PrimedItem fields (``_source`` is its read_memory pointer, ``origin`` its layer).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Collection, Sequence

import numpy as np

from lumina_memory.nodes.activity import recent_activity
from lumina_memory.nodes.issues import RESOLVED as ISSUE_RESOLVED
from lumina_memory.nodes.knowledge.learn import params_of as knowledge_params
from lumina_memory.nodes.knowledge.procedures import match_procedures
from lumina_memory.nodes.knowledge.profile import cached_profile
from lumina_memory.nodes.knowledge.recall_procedures import procedure_item
from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.nodes.retrieval.packing import Refunds
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.temporal import date_label
from lumina_memory.nodes.text.reference_cues import refers_back
from lumina_memory.nodes.text.tokenize import terms
from lumina_memory.nodes.text.transliterate import index_keys, with_aliases
from lumina_memory.nodes.tools.pointers import format_pointer

from .presets import PrimingPreset

ASKING = ("question", "request")  # types whose recent activity must be about the message


def item(origin: str, pointer: str, kind: str, text: str, *, date: str | None = None, similarity: float | None = None,
         source_ids: Sequence[str] = (), quoted: Sequence[str] = (), segment_id: str | None = None,
         ts: float | None = None, whole: Sequence[str] = ()) -> dict[str, Any]:
    return {"_source": pointer, "origin": origin, "kind": kind, "text": text, "tokens": count_tokens(text), "date": date,
            "similarity": None if similarity is None else round(float(similarity), 4),
            "source_ids": list(source_ids), "quoted_source_ids": list(quoted), "whole_source_ids": list(whole),
            "segment_id": segment_id, "ts": ts}


def _groupable_segment(r: dict) -> str | None:
    """The segment whose time header may stand over this recall item's line and its others of that day
    (pointer_groups): whole turns of a stored segment. An excerpt of a long message has a header of its own."""
    segment = r.get("segment_id")
    if r.get("unit") != "turns" or r.get("passages") or not segment or segment == "(open)":
        return None
    return segment


def _cosine(vector: Sequence[float] | None, query: np.ndarray | None) -> float | None:
    if vector is None or query is None or len(vector) != len(query):
        return None
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v) * np.linalg.norm(query))
    return float(v @ query) / norm if norm else None


# --- A: the user's profile ----------------------------------------------------------------------------------
def profile_channel(services, user_id: str, message: str, message_type: str, character: str | None) -> list[dict]:
    """The profile's gist (top topics, the relationship with the character who answers; not for a question), then
    the facts about the user: for a question or a request only those sharing a word with the message, else the
    newest first."""
    profile = cached_profile(services, user_id)
    out: list[dict] = []
    topics = list(profile["topics"])[:5]
    who = character if character in profile["characters"] else None
    # A question is primed with what it is about: the facts sharing its words, not the profile's gist.
    if (topics or who) and message_type != "question":
        latest = services.stores.archive.segments(user_id, limit=1)
        parts = [f"likes to talk about {', '.join(topics)}"] if topics else []
        if who:
            c = profile["characters"][who]
            parts.append(f"with {who}: relationship depth {c['relationship_depth']:.2f}, {c['turns']} turns over {c['days']} days")
        if latest:
            out.append(item("profile", f"seg:{latest[0].segment_id}", "profile", "; ".join(parts),
                            date=date_label(latest[0].end_ts, services.settings.timezone)))
    facts = profile["facts"]
    if message_type in ASKING:
        # Not by the names of the people who speak: every sentence of a person's holds that name ("Tim: …"), so
        # a question naming them would share a word with all their facts.
        index = services.turn_index.get(services.stores.archive, user_id, services.stores.turns)
        names = {t for speaker in index.speakers for t in terms(speaker)}
        words = set(with_aliases(message, [t for t in terms(message) if t not in names]))
        # A fact's cross-script keys as an index holds them (nodes.text.transliterate): 「ボブ」 meets "Bob".
        facts = [f for f in facts
                 if words & {*terms(said := f"{f['attribute']} {f['value']} {f['text']}"), *index_keys(said)}]
    # The messages each fact was learnt from, as recall's fact items carry them.
    table = getattr(services.stores.archive, "knowledge", None)
    # From recall's kept read of the facts (no archive round trip, and no write of pending use counts, which
    # ``items`` makes first, inside the reply's path).
    wanted = {f["item_id"] for f in facts}
    sources = ({r["item_id"]: list(r["source_ids"] or ()) for r in table.recall_items(user_id) if r["item_id"] in wanted}
               if facts and table is not None and hasattr(table, "recall_items") else {})
    for f in facts:
        ids = sources.get(f["item_id"], [])
        out.append(item("profile", f"fact:{f['item_id']}", "knowledge", f"{f['attribute']}: {f['value']}",
                        date=date_label(f["valid_from"], services.settings.timezone) if f["valid_from"] else None, source_ids=ids, quoted=ids))
    return out


# --- B: recent activity -------------------------------------------------------------------------------------
def recent_channel(services, user_id: str, message: str, message_type: str, preset: PrimingPreset,
                   query_vector: Future) -> list[dict]:
    """The latest segments (mid-term, else the archive) as their summaries, newest first, and the questions the
    user asked lately (the activity log). For a question or a request that does not refer back to earlier
    talk, only the segments at least ``preset.threshold`` similar to the message."""
    stores = services.stores
    segments = stores.midterm.recent_segments(user_id, preset.recent) if preset.recent else []
    if not segments and preset.recent:
        segments = stores.archive.segments(user_id, limit=preset.recent)
    gate = message_type in ASKING and not refers_back(message)
    qvec = query_vector.result() if gate else None
    out: list[dict] = []
    for seg in segments:
        similarity = _cosine(seg.embedding, qvec) if gate else None
        if gate and (similarity is None or similarity < preset.threshold):
            continue
        out.append(item("recent", f"seg:{seg.segment_id}", "segment", f"[{date_label(seg.end_ts, services.settings.timezone)}] {seg.summary}",
                        date=date_label(seg.end_ts, services.settings.timezone), similarity=similarity, source_ids=seg.source_ids))
    if gate:
        return out
    events = recent_activity(services, user_id, 20, ("recall", ISSUE_RESOLVED))
    asked = [e for e in events if e.get("event") == "recall" and e.get("query") and e.get("turn_id")][-5:]
    # A5's resolution propagation (nodes.issues): what the user said was settled lately, so no character asks after it.
    settled = [e for e in events if e.get("event") == ISSUE_RESOLVED and e.get("resolved_turn")][-3:]
    if asked or settled:
        wanted = [e["turn_id"] for e in asked] + [e["resolved_turn"] for e in settled]
        by_id = {t.turn_id: t for t in stores.archive.get_turns(user_id, wanted)}
        for e in reversed(asked):
            turn = by_id.get(e["turn_id"])
            if turn is not None:
                out.append(item("activity", f"ep:{turn.source_id}", "activity", f"[{date_label(turn.ts, services.settings.timezone)}] asked: {e['query']}",
                                date=date_label(turn.ts, services.settings.timezone), source_ids=[turn.source_id]))
        for e in reversed(settled):
            turn = by_id.get(e["resolved_turn"])
            if turn is not None:
                day = date_label(turn.ts, services.settings.timezone)
                out.append(item("activity", f"ep:{turn.source_id}", "activity", f"[{day}] resolved: {turn.text}",
                                date=day, source_ids=[turn.source_id]))
    return out


# --- C: related knowledge and episodes ----------------------------------------------------------------------
def recall_items(services, user_id: str, message: str, *, purpose: str, budget: int, character: str | None,
                 now_ts: float | None, query_vector: Future, shown_facts: Collection[str] = (),
                 refunds: Refunds | None = None) -> list[dict]:
    """Recall packed the way the episodes section shows it: one time header over a segment's lines of a day
    (assemble.py); without the facts the profile section shows (``shown_facts``), and with the room back of
    those whose messages it packs (``refunds``)."""
    return recall(services, user_id, message, purpose=purpose, budget=budget, character=character, now_ts=now_ts,
                  query_vector=query_vector.result(), item_overhead=1, dates_once=True, pointer_groups=True,
                  shown_facts=shown_facts, refunds=refunds)


def episode_channel(services, user_id: str, recalled: Sequence[dict], preset: PrimingPreset,
                    query_vector: Future) -> tuple[list[dict], list[dict]]:
    """Recall's items as primed items: (knowledge and episodes, procedures). Facts found by vectors alone must
    reach the threshold; episodes carry their cosine (their best turn's) but are not cut by it (presets.py)."""
    qvec = query_vector.result()
    weight = knowledge_params(services).recall_vector_weight or 1.0
    index = services.turn_index.get(services.stores.archive, user_id, services.stores.turns)
    episodes: list[dict] = []
    procedures: list[dict] = []
    semantic = 0
    for r in recalled:
        kind = r.get("kind", "episode")
        if r.get("segment_id") == "(open)":
            continue  # the open segment's turns are the conversation itself, in the prompt already
        if kind == "procedure":
            procedures.append(_procedure(r))
            continue
        if kind == "knowledge":
            vector_only = list(r.get("channels") or ()) == ["vector"]
            similarity = float(r["score"]) / weight if vector_only else None
            if vector_only and similarity < preset.threshold:
                continue
            episodes.append(item("knowledge", format_pointer(r), "knowledge", r["text"], date=r.get("date"),
                                 similarity=similarity, source_ids=r.get("source_ids", ()), quoted=r.get("source_ids", ())))
            continue
        if preset.semantic is not None and semantic >= preset.semantic:
            continue
        semantic += 1
        positions = [index.position[t] for t in r.get("turn_ids", ()) if t in index.position]
        vectors = index.vectors_for(services.stores.turns, user_id, positions) if positions and qvec is not None else {}
        similarity = max((float(v @ qvec) for v in vectors.values()), default=None)
        episodes.append(item("semantic", format_pointer(r), kind, r["text"], date=r.get("date"), similarity=similarity,
                             source_ids=r.get("source_ids", ()), quoted=r.get("quoted_source_ids", r.get("source_ids", ())),
                             segment_id=_groupable_segment(r), ts=r.get("first_ts"), whole=r.get("whole_source_ids", ())))
    if preset.summaries:
        episodes += _summaries(services, user_id, recalled, preset.summaries)
    return episodes, procedures


def _summaries(services, user_id: str, recalled: Sequence[dict], wanted: int) -> list[dict]:
    """S1 "summary": the summaries of the best episodes' segments (long-term context at a glance)."""
    out: list[dict] = []
    seen: set[str] = set()
    for r in recalled:
        seg_id = r.get("segment_id")
        if len(out) >= wanted or not seg_id or seg_id == "(open)" or seg_id in seen or r.get("kind") not in (None, "episode"):
            continue
        seen.add(seg_id)
        seg = services.stores.archive.get_segment(user_id, seg_id)
        if seg is not None and seg.summary:
            out.append(item("summary", f"seg:{seg_id}", "segment", f"[{date_label(seg.end_ts, services.settings.timezone)}] {seg.summary}",
                            date=date_label(seg.end_ts, services.settings.timezone), source_ids=seg.source_ids))
    return out


# --- D: matching procedures ---------------------------------------------------------------------------------
def _procedure(r: dict) -> dict:
    return item("procedure", format_pointer(r), "procedure", r["text"], date=r.get("date"),
                similarity=r["score"] if r.get("stage") == "vector" else None, source_ids=r.get("source_ids", ()))


def procedure_channel(services, user_id: str, message: str, preset: PrimingPreset) -> list[dict]:
    """The notes' three-stage match (bracket keyword, content words, vectors); a vector-only match must reach the
    threshold."""
    table = getattr(services.stores.archive, "procedures", None)
    if not message.strip() or table is None or not table.current(user_id):
        return []
    out = []
    for m in match_procedures(services, user_id, message, limit=3):
        if m["stage"] == "vector" and m["score"] < preset.threshold:
            continue
        out.append(_procedure(procedure_item(m, services.settings.timezone)))
    return out


# --- knowledge bases (L5) -----------------------------------------------------------------------------------
def kb_channel(services, user_id: str, message: str, preset: PrimingPreset, query_vector: Future) -> list[dict]:
    """Passages of the knowledge bases the user can read, at least ``preset.threshold`` similar (their score is
    the cosine). Empty while nodes.kb is not installed."""
    try:
        from lumina_memory.nodes.kb.search import search_kb
    except ImportError:
        return []
    if not message.strip():
        return []
    hits = search_kb(services, message, user_id=user_id, limit=5, query_vector=query_vector.result())
    return [item("kb", h["id"], "kb", f"[{h['source']} §{h['position']}] {h['text']}", date=h.get("date"),
                 similarity=h["score"])
            for h in hits if h.get("score") is not None and h["score"] >= preset.threshold]
