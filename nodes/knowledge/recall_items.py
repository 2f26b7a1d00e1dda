"""Knowledge in recall (A7): the facts a question asks about, current ones first, each saying when it held.

A question names what it asks by an attribute cue (「飲み物」, "drink", 「住んで」, "live") or by the fact's own
words (a value, a pet's name). Matching items come back as recall items of ``kind`` "knowledge" ahead of the
episodes, within the budget. A question about now ranks current items first and leaves superseded ones out
unless they are all there is; a question about the past (「前は」, "used to") brings the superseded ones first.
The episode a current fact came from moves ahead of the episodes of the facts it superseded, so the latest
source is read first.

A current fact under review (nodes.knowledge.unread: a later statement about it was not understood) comes back
marked ``uncertain`` and its text says so, so an answer does not serve it as plain current.

Cues are data (``QUESTION_CUES``, ``PAST_CUES``), not branches.

A second channel reads the user's knowledge vectors (stores.knowledge_vectors): the few facts nearest the
question's vector, above ``KnowledgeParams.recall_min_similarity``, are asked about too, and their cosine
(times ``recall_vector_weight``) is added to the cue score. That is how a question in one language finds a
fact said in another ("what does she drink now?" → 「紅茶にした」), and how the cue-matched facts ("likes")
are ordered by what the question is about. Each hit says which channels found it (``channels``).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from lumina_memory.nodes.text.token_count import count_tokens
from lumina_memory.nodes.retrieval.temporal import date_label as _date
from lumina_memory.nodes.text.tokenize import terms
from lumina_memory.nodes.text.transliterate import index_keys, with_aliases
from lumina_memory.stores.errors import StoreUnavailable

from .learn import params_of
from .dependents import RESTS_ON
from .unread import REVIEW, needs_review

log = logging.getLogger("lumina.knowledge")

# attribute → words of a question that asks about it (matched as substrings of the NFKC-lowered question)
QUESTION_CUES: dict[str, tuple[str, ...]] = {
    "drink": ("飲み物", "飲んで", "飲む", "drink"),
    "food": ("食べ物", "料理", "food", "eat"),
    "likes": ("好き", "ハマ", "趣味", "like", "love", "into", "favourite", "favorite", "hobby"),
    "dislikes": ("嫌い", "苦手", "dislike", "hate", "can't stand"),
    "lives_in": ("住んで", "住ん", "住ま", "引っ越", "live", "moved"),
    "from": ("出身", "生まれ", "from", "born", "grew up"),
    "works_at": ("働いて", "勤め", "会社", "職場", "work"),
    "job": ("仕事", "職業", "job", "work as"),
    "name": ("名前", "name"),
    "pet": ("ペット", "飼って", "猫", "犬", "pet", "cat", "dog"),
    "age": ("歳", "才", "年齢", "何歳", "old", "age"),
    "sibling": ("兄", "姉", "弟", "妹", "兄弟", "姉妹", "sister", "brother", "sibling"),
    "parent": ("母", "父", "親", "mother", "father", "mom", "dad", "parent"),
    "child": ("息子", "娘", "子供", "son", "daughter", "kid"),
    "partner": ("彼氏", "彼女", "夫", "妻", "旦那", "partner", "husband", "wife", "boyfriend", "girlfriend"),
    "friend": ("友達", "友人", "同僚", "friend", "colleague"),
    "has": ("持って", "買った", "own", "have"),
    "plan": ("予定", "行く", "するつもり", "plan", "going to", "will"),
    "event": ("行った", "した", "did", "went"),
    "habit": ("毎朝", "毎日", "習慣", "いつも", "every", "usually", "routine", "habit"),
    "issue": ("困って", "問題", "調子", "治った", "直った", "解決", "大丈夫", "problem", "issue", "fixed", "better",
              "trouble", "how is", "how's"),
}
DATED = ("plan", "event")  # facts that carry their day (event_date, when_text)
WHEN_CUES: tuple[str, ...] = ("いつ", "何日", "何月", "何曜", "when", "what day", "what date")
PAST_CUES: tuple[str, ...] = ("前は", "以前", "昔", "もともと", "元々", "かつて", "前に好き", "used to", "before",
                              "previously", "formerly", "in the past", "originally")


def _lower(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def asks_about_past(query: str) -> bool:
    q = _lower(query)
    return any(cue in q for cue in PAST_CUES)


def _score(query_lower: str, query_terms: set[str], row: Mapping[str, Any]) -> float:
    # Asked about: the question names the attribute (「飲み物」) or the person or pet the fact is about. A value
    # mentioned alone (「チーズケーキ、何度で焼く？」) is a question about an episode, not about the fact — unless
    # it asks when a plan or an event it names is (「富士山に登るのはいつ？」): the fact holds the day.
    named = bool(set(terms(f"{row['value']} {row['detail'] or ''}")) & query_terms)
    # An issue the user raised is asked about by naming it (「風邪はどう？」): its value is what they said of it.
    cue = any(c in query_lower for c in QUESTION_CUES.get(row["attribute"], ())) or (
        named and row["attribute"] in DATED and any(c in query_lower for c in WHEN_CUES)) or (
        named and row["attribute"] == "issue")
    # the person asked about, in either script (「ボブ」 for "Bob": nodes.text.transliterate)
    about = row["subject"] != "user" and bool({*terms(row["subject"]), *index_keys(row["subject"])} & query_terms)
    if not (cue or about):
        return 0.0
    context = set(terms(row["text"])) & query_terms
    return 1.0 * cue + 1.0 * about + 1.0 * named + 0.1 * len(context)


def _nearest(services, user_id: str, query_vector: Sequence[float] | None) -> dict[str, float]:
    """item_id → cosine of the user's facts nearest the question (the vector channel), above the floor."""
    store = getattr(services.stores, "knowledge", None)
    params = params_of(services)
    if store is None or query_vector is None or not params.recall_vector_candidates:
        return {}
    try:
        hits = store.search_items(user_id, [float(x) for x in query_vector], params.recall_vector_candidates)
    except StoreUnavailable as exc:  # the cue channel still answers; the archive holds every fact
        log.warning("knowledge vectors unavailable, recall uses cues only: %s", exc)
        return {}
    return {item: score for item, score in hits if score >= params.recall_min_similarity}


def knowledge_hits(services, user_id: str, query: str, *, limit: int = 3,
                   query_vector: Sequence[float] | None = None) -> list[dict[str, Any]]:
    """Recall items for the knowledge ``query`` asks about (at most ``limit``), best first. ``query_vector``:
    the question's embedding, for the vector channel (None: cues only)."""
    table = getattr(services.stores.archive, "knowledge", None)
    if table is None:
        return []
    rows = table.recall_items(user_id)
    if not rows:
        return []
    q_lower, q_terms = _lower(query), set(with_aliases(query, terms(query)))
    past = asks_about_past(query)
    near = _nearest(services, user_id, query_vector)
    weight = params_of(services).recall_vector_weight
    scored = []
    for r in rows:
        if r["status"] == "merged":
            continue
        cue, cosine = _score(q_lower, q_terms, r), near.get(r["item_id"])
        if cue > 0 or cosine is not None:
            channels = [name for name, on in (("cue", cue > 0), ("vector", cosine is not None)) if on]
            scored.append((cue + weight * (cosine or 0.0), {**r, "channels": channels}))
    if not scored:
        return []
    current = [(s, r) for s, r in scored if r["valid_to"] is None]
    ended = [(s, r) for s, r in scored if r["valid_to"] is not None]
    by_rank = lambda pair: (-pair[0], -pair[1]["said_at"])  # noqa: E731 - best match, then newest
    first, second = (ended, current) if past else (current, ended)
    ranked = sorted(first, key=by_rank) + sorted(second, key=by_rank)
    return [_item(r, s, services.settings.timezone) for s, r in ranked[:limit]]


def _item(row: Mapping[str, Any], score: float, zone: str) -> dict[str, Any]:
    value = row["value"] if row["polarity"] == "positive" else f"not {row['value']}"
    subject = "" if row["subject"] == "user" else f"{row['subject']} "
    # The fact alone: its sentence is in the source episode that recall brings too (bench.knowledge: repeating
    # it cost LoCoMo recall at small budgets); ``sentence`` keeps it for a caller that wants it.
    # A fact under review (a later statement about it was not understood) is said to be uncertain, not current.
    # A fact resting on one that changed (F6) says which.
    uncertain = row["valid_to"] is None and needs_review(row)
    why = (row["note"] or "").removeprefix(REVIEW) if uncertain else ""
    doubt = f" (uncertain: {why})" if why.startswith(RESTS_ON) else " (uncertain: may have changed since)"
    resolved = " (resolved)" if (row["note"] or "").startswith("resolved: ") else ""  # nodes.knowledge.resolutions
    text = f"[{subject}{row['attribute']}: {value}{doubt if uncertain else ''}{resolved}]"
    return {
        "kind": "knowledge", "item_id": row["item_id"], "text": text, "sentence": row["text"], "score": round(float(score), 4),
        "status": row["status"], "uncertain": uncertain, "why": why, "valid_from": row["valid_from"], "valid_to": row["valid_to"],
        "superseded_by": row["superseded_by"], "source_ids": list(row["source_ids"] or []),
        "source_turn_ids": list(row["source_turn_ids"] or []), "episode_ids": list(row["episode_ids"] or []),
        # in the budget's own unit (a CJK character one token, other text by words): recall takes the facts'
        # tokens out of the budget before packing the episodes
        "tokens": max(1, count_tokens(text)), "level": 1, "archived": False,
        # what every recall item has, so callers reading episodes read facts alike: the source turns, and the
        # latest episode the fact came from
        "turn_ids": list(row["source_turn_ids"] or []),
        "segment_id": (list(row["episode_ids"] or []) or [None])[-1],
        "tiers": ["archive", *(["long-term"] if "vector" in row.get("channels", ()) else [])],
        "date": _date(row["said_at"], zone), "channels": list(row.get("channels", ["cue"])),
    }


def with_knowledge(items: Sequence[dict[str, Any]], hits: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Knowledge hits ahead of the episodes; every episode item says ``kind`` "episode"; a current fact's
    latest source episode moves ahead of the episodes of the facts it superseded."""
    episodes = [{**i, "kind": i.get("kind", "episode")} for i in items]
    current_sources = {e for h in hits if h["valid_to"] is None for e in h["episode_ids"][-1:]}
    old_sources = {e for h in hits if h["valid_to"] is not None for e in h["episode_ids"]} - current_sources
    if current_sources and old_sources:
        ahead = [i for i in episodes if i.get("segment_id") in current_sources]
        first_old = next((n for n, i in enumerate(episodes) if i.get("segment_id") in old_sources), None)
        if first_old is not None and ahead:
            rest = [i for i in episodes if i.get("segment_id") not in current_sources]
            first_old = next(n for n, i in enumerate(rest) if i.get("segment_id") in old_sources)
            episodes = rest[:first_old] + ahead + rest[first_old:]
    return [*hits, *episodes]
