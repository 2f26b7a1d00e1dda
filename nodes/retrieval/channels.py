"""Candidate channels of recall: each returns a ranking, fused by nodes.retrieval.fusion.

Turn channels rank turns (indices into the user's UserTurns); segment channels rank segments, whose score is
later lent to their turns.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..lifecycle.memory_vector import MEMORY_VECTOR_FIELD, as_remembered as remembered_order
from ..text.tokenize import nouns, terms
from .excerpts import passage_term_counts
from .turn_index import unified_search

SHORT_SHARE, SHORT_FLOOR = 0.15, 10
"""The dense and keyword channels offer at most this share of the user's turns among their short turns (at least
SHORT_FLOOR, never more than ``recall_turn_candidates``); a long turn found by its passages always stays. Asked for 80,
the dense channel over a short history (a new user's first weeks of chat) returned every turn: each then had a vote
in the fusion, and the segments' lending and the neighbours' share lifted the question's look-alikes that share only
a common word with it ("mein", "mi", "내") and the short replies next to them above the statement that answers it
in other words, which only the dense channel ranks high. Long replies' passages are left alone: there the evidence
sits deep in a reply, and cutting them cost recall (docs/recall.md)."""


def short_turn_count(settings, turns: int) -> int:
    """How many short turns the dense and keyword channels offer over a history of ``turns`` turns."""
    return min(settings.recall_turn_candidates, max(SHORT_FLOOR, round(SHORT_SHARE * turns)), turns)


def fewer_short_turns(index, ranking: list[int], most: int) -> list[int]:
    """``ranking`` with its first ``most`` short turns only; every long turn (one with passages) kept in place."""
    size, least = index.passage_cut
    kept: list[int] = []
    short = 0
    for i in ranking:
        if size and index.token_counts[i] > least:
            kept.append(i)
        elif short < most:
            kept.append(i)
            short += 1
    return kept


TIER = {
    "turn_content": "long-term",
    "turn_keyword": "archive",
    "turn_feedback": "archive",
    "segment_dense": "long-term",
    "segment_keyword": "archive",
    "midterm": "mid-term",
    "graph": "graph",
    "short-term": "short-term",
    "speaker_dense": "long-term",
}


@dataclass
class Candidates:
    turn_rankings: dict[str, list[int]] = field(default_factory=dict)  # channel -> turn indices, best first
    seg_score: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    seg_tiers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    seg_importance: dict[str, float] = field(default_factory=dict)
    ms: dict[str, float] = field(default_factory=dict)
    # Long turns found by their passages (nodes.text.passages): turn index -> {passage number: best cosine}.
    passage: dict[int, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    # The keyword channels' fusion weight factor for this query (nodes.retrieval.channel_trust).
    keyword_trust: float = 1.0


def turn_channels(services, index, user_id: str, qvec: np.ndarray, q_terms: list[str], on: dict, out: Candidates,
                  content_vec: np.ndarray | None = None) -> None:
    """``content_vec``: the embedding of the query's content view; None when the query has no other view (it is
    all content: a statement, "adoption agency"), and then the dense channel searches with ``qvec``."""
    stores, settings = services.stores, services.settings
    K = settings.recall_turn_candidates
    most = short_turn_count(settings, len(index.turns))
    if on["turn_content"] and index.turns:
        t0 = time.perf_counter()
        hits = stores.turns.search_point_ids(user_id, qvec if content_vec is None else content_vec, K)
        # Ids only: a point id is uuid5(user, turn), so only this user's own turns can map back.
        position = index.point_position
        passage_of = index.passage_of if on.get("passages", True) else {}
        best: dict[int, float] = {}
        for pid, score in hits:
            i = position.get(pid)
            if i is None and (found_passage := passage_of.get(pid)) is not None:
                i, part = found_passage
                out.passage[i][part] = max(score, out.passage[i].get(part, -1.0))
            if i is not None and i not in best:
                best[i] = score
        # A turn and its passages are one candidate: its best-ranked point stands for it.
        ranking = passage_max_corrected(index, best, settings.recall_passage_max_penalty) if passage_of else list(best)
        out.turn_rankings["turn_content"] = fewer_short_turns(index, ranking, most)
        out.ms["turn_content"] = (time.perf_counter() - t0) * 1000
    if on["turn_keyword"] and index.turns:
        t0 = time.perf_counter()
        out.turn_rankings["turn_keyword"] = fewer_short_turns(index, keyword_ranking(index, q_terms, K, settings, on), most)
        out.ms["turn_keyword"] = (time.perf_counter() - t0) * 1000


def passage_max_corrected(index, best: dict[int, float], penalty: float) -> list[int]:
    """The dense channel's turns (``best``: turn -> its best point's cosine, best first) re-ranked with a long turn's
    best passage lowered by ``penalty`` × ln(its passages): the best of many passages' cosines is higher than one
    short turn's cosine by chance alone, so a reply cut into twenty windows would otherwise take the ranks of the
    short statements a paraphrased question is about. 0 = the order of the points."""
    if penalty <= 0 or not best or not len(index.passages.doc_turn):
        return list(best)
    turns = list(best)
    counts = [hi - lo for lo, hi in map(index.passages.span_of, turns)]
    scores = np.array([best[i] - (penalty * math.log(c) if c > 1 else 0.0) for i, c in zip(turns, counts)])
    return [turns[j] for j in np.argsort(-scores, kind="stable")]


def whose_turns(index, plan, long_tokens: int) -> np.ndarray | None:
    """The turns of the person a question is about, as a mask: the speakers it names, or with none named the
    asker's own ("my", 私の: speaker "user") or the other side's ("you suggested"); None when it is nobody's — and
    for the asker's own where the other side answers at length (replies_at_length): an assistant's long replies
    hold the asker's facts as often as their own turns."""
    if plan.speakers:
        return np.isin(index.label_array, list(plan.speakers))
    if plan.person == "user" and replies_at_length(index, long_tokens):
        return None
    if plan.person in ("user", "other"):
        mine = index.said_by_user()
        return mine if plan.person == "user" else ~mine
    return None


def replies_at_length(index, long_tokens: int) -> bool:
    """Whether the other side answers the user at length (half its turns or more are long turns, over
    ``long_tokens``): an assistant's replies, which hold the facts of a user's question as often as the user's own
    short turns do. The index keeps the answer (UserTurns.replies_at_length)."""
    return index.replies_at_length(long_tokens)


def speaker_dense_channel(index, vec: np.ndarray, whose: np.ndarray, K: int, out: Candidates) -> None:
    """One person's turns (``whose``, whose_turns) ranked by meaning alone (``speaker_dense``), for a question
    asking for many things of them (nodes.retrieval.list_questions): their answers are spread over that person's
    turns in words the question does not use, and the other channels, which rank every turn by the question's
    words or meaning, leave most of them far down. From the index's own matrix of the turns' vectors: no engine
    call."""
    if index.vectors is None or not len(index.turns):
        return
    t0 = time.perf_counter()
    theirs = np.flatnonzero(whose & index.has_vector)
    if theirs.size:
        sims = index.vectors[theirs].astype(np.float32) @ np.asarray(vec, dtype=np.float32)
        best = theirs[np.argsort(-sims, kind="stable")[:K]]
        out.turn_rankings["speaker_dense"] = [int(i) for i in best]
    out.ms["speaker_dense"] = (time.perf_counter() - t0) * 1000


def keyword_ranking(index, q_terms: list[str], K: int, settings, on: dict) -> list[int]:
    """BM25 over the turns; with long turns, over short turns and long turns' passages as one collection."""
    if on.get("passages", True) and len(index.passages.doc_turn):
        hits = unified_search(index, q_terms, K)
    else:
        carry = on.get("keyword_context", True)
        hits = index.search(q_terms, K, context=settings.recall_keyword_context if carry else 0.0,
                            context2=settings.recall_keyword_context2 if carry else 0.0)
    floor = settings.recall_keyword_floor * hits[0][1] if hits else 0.0
    return [i for i, score in hits if score >= floor]


def segment_channels(services, index, user_id: str, query: str, qvec: np.ndarray, on: dict, character: str | None,
                     out: Candidates, recent_signal: float = 0.5, reply: bool = False,
                     as_remembered: bool = False) -> None:
    """``recent_signal``: how much a mid-term segment counts for being recent alone (the purpose's recency
    weight relative to its relevance weight, see ``recall``). ``reply`` (recall for a reply, not a deliberate
    question): the most recent mid-term segments are offered for being recent (``midterm``), and the long-term
    segments are also searched by meaning (``segment_dense``), their best three seeding the graph's ASSOCIATED
    neighbours; a deliberate question's recall is as good or better without either on every labelled set
    (docs/recall.md). ``as_remembered``: that search ranks a faded memory by its text at its
    level, not by what was recorded."""
    stores, settings = services.stores, services.settings
    k = settings.recall_rrf_k
    S = settings.recall_segment_candidates

    def add(name: str, ranked: Sequence[tuple[str, float]]) -> None:
        for rank, (seg_id, signal) in enumerate(ranked):
            out.seg_score[seg_id] += signal / (k + rank + 1)
            out.seg_tiers[seg_id].add(TIER[name])

    seeds: list[str] = []
    if reply and S:
        t0 = time.perf_counter()
        fields = ("segment_id", "importance", MEMORY_VECTOR_FIELD) if as_remembered else ("segment_id", "importance")
        hits = stores.vectors.search(user_id, qvec.tolist(), S, character=character, fields=fields)
        if as_remembered:
            hits = remembered_order(hits, qvec)
        add("segment_dense", [(h.payload["segment_id"], 1.0) for h in hits])
        for h in hits:
            out.seg_importance[h.payload["segment_id"]] = float(h.payload.get("importance", 0.0))
        seeds = [h.payload["segment_id"] for h in hits[:3]]
        out.ms["segment_dense"] = (time.perf_counter() - t0) * 1000
    if on["segment_keyword"] and S:
        t0 = time.perf_counter()
        add("segment_keyword", [(s, 1.0) for s, _ in services.keyword_index.search(stores.archive, user_id, query, S,
                                                                               cross=on.get("crosslingual", True), turns=index)])
        out.ms["segment_keyword"] = (time.perf_counter() - t0) * 1000
    if on["midterm"] and settings.retrieve_recent and reply:
        t0 = time.perf_counter()
        recent = stores.midterm.recent_signals(user_id, settings.retrieve_recent)
        # Recent segments are candidates by recency alone: ranked among themselves by similarity.
        sims = [float(np.dot(r.embedding, qvec)) if r.embedding.size == qvec.size else 0.0 for r in recent]
        order = sorted(range(len(recent)), key=lambda j: -sims[j])
        add("midterm", [(recent[j].segment_id, recent_signal) for j in order])
        for r in recent:
            out.seg_importance[r.segment_id] = r.importance
        out.ms["midterm"] = (time.perf_counter() - t0) * 1000
    if on["graph"] and settings.retrieve_graph:
        t0 = time.perf_counter()
        concepts = _specific_concepts(nouns(query), index, settings)
        ranked: list[tuple[str, float]] = []
        if concepts:
            ranked += [(s, 0.5 * c / len(concepts))
                       for s, c in stores.graph.segments_for_concepts(user_id, concepts, settings.retrieve_graph)]
        if seeds:
            ranked += [(s, 0.5 * float(score)) for s, score in stores.graph.associated(user_id, seeds, settings.retrieve_graph)]
        add("graph", sorted(ranked, key=lambda kv: -kv[1]))
        out.ms["graph"] = (time.perf_counter() - t0) * 1000


def feedback_channel(index, q_terms: list[str], settings, out: Candidates, passage_of=None) -> None:
    """Pseudo-relevance feedback (RM3-style): the terms that weigh most in the keyword channel's best
    turns, added to the query for a second BM25 pass. Multi-hop questions name one side of what they ask
    ("What did Caroline research?"); the turns that answer it share words with the first hits, not the query.
    ``passage_of(i)`` (excerpts.passage_picker): a long turn gives the terms of the passage that answers, not of
    the whole reply — the rest of a 700-word reply is about other things, and tokenising it was this
    channel's main cost."""
    docs, extra = settings.recall_feedback_docs, settings.recall_feedback_terms
    rankings = [out.turn_rankings["turn_keyword"]] if "turn_keyword" in out.turn_rankings else []
    if not (docs and extra and rankings and index.turns):
        return
    t0 = time.perf_counter()
    first: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, i in enumerate(ranking[: 3 * docs]):
            first[i] += 1.0 / (settings.recall_rrf_k + rank + 1)
    top = sorted(first, key=lambda i: -first[i])[:docs]
    n = len(index.turns)
    asked = set(q_terms)
    weight: dict[str, float] = defaultdict(float)
    for i in top:
        text = index.turns[i].text
        found = passage_of(i) if passage_of is not None else None
        if found is not None:
            start, end = found[2]
            counts = dict(passage_term_counts(text[start:end]))
        else:
            counts = Counter(terms(text))
        length = sum(counts.values()) or 1
        for term, tf in counts.items():
            posting = index.postings.get(term)
            df = 0 if posting is None else posting[0].size
            if term in asked or df < 2:  # a term of one turn only cannot lead anywhere else
                continue
            weight[term] += (tf / length) * math.log(1 + (n - df + 0.5) / (df + 0.5))
    expansion = sorted(weight, key=lambda t: -weight[t])[:extra]
    if expansion:
        out.turn_rankings["turn_feedback"] = [i for i, _ in index.search([*q_terms, *expansion], settings.recall_turn_candidates)]
    out.ms["turn_feedback"] = (time.perf_counter() - t0) * 1000


def _specific_concepts(names: list[str], index, settings) -> list[str]:
    """The query's concepts worth a graph lookup, rarest in the user's turns first. A concept in a large
    share of the turns (a speaker's name, a daily word) links to so many segments that each gets almost no
    activation (the fan effect), and reading its hundreds of MENTIONS edges was the graph channel's main
    cost. Frequency is read from the turn index through the same normalisation as its terms ("cooked" is
    counted as "cook"); a concept made of several terms is as rare as its rarest."""
    n = len(index.turns)
    hub = max(20, settings.retrieve_graph_hub_share * n)

    def frequency(name: str) -> int:
        postings = [index.postings.get(t) for t in terms(name)]
        return min((p[0].size if p is not None else 0 for p in postings), default=0)

    df = {name: frequency(name) for name in dict.fromkeys(names)}
    specific = [name for name in df if df[name] <= hub]
    return sorted(specific, key=lambda name: df[name])[: settings.retrieve_graph_concepts]
