"""Hybrid recall across tiers (L6, S1, A3, P6, S6, A1): the public retrieval API.

``recall(services, user_id, query, ...)`` ranks *turns* — the finest unit every tier can point back to —
from several candidate channels, each switchable off in settings (``recall_*``):

- ``turn_dense``     dense search over the turn-vector collection (stores.turn_vectors)      tier: long-term
- ``turn_content``   dense search again with the query's content view: without its question scaffolding
                     and the names of the speakers it asks about (nodes.retrieval.query.content_view) tier: long-term
- ``turn_keyword``   BM25 over the user's archived turns, Sudachi/English terms               tier: archive
- ``feedback``       BM25 again with the terms that weigh most in the first hits (pseudo-relevance
                     feedback, for questions whose answer shares words with a first hit only)  tier: archive
- ``segment_dense``  long-term segment centroids                                             tier: long-term
- ``segment_keyword`` BM25 over archived segments (summary + keywords + text)                 tier: archive
- ``midterm``        the most recent mid-term segments (S1 "recent")                          tier: mid-term
- ``graph``          segments that MENTION the query's concepts, and ASSOCIATED neighbours of
                     the best segments (A3 spreading activation)                              tier: graph

Turn channels are fused by reciprocal rank; segment channels add a share of their segment's fused score to
each of its turns, and a turn passes a share of its relevance to its neighbours (answers sit next to the
question that prompted them). The score is α·relevance + β·recency + γ·importance with the purpose's
preset (P6; recency on the conversation's clock), boosted inside a time window the query names
("last week", "先月") and, for a when-question, where the turn says when (time_mentions.py), re-ranked by
MMR (λ 0.7 over a pool of 3× the items wanted) with near-duplicates
(≥ 0.95) dropped, and packed into a token budget (A1). Hit turns that are adjacent in the conversation are
merged into one item in conversation order, prefixed with their date; the packer accounts for that.

Every item carries ``source_ids`` (the caller's ids, e.g. LoCoMo dia_ids) and ``turn_ids`` of exactly the
turns its text was built from, plus ``tiers`` (where it was found) and ``date``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Collection, Sequence

import numpy as np

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.settings_recall import SWITCHES, RecallConfig  # noqa: F401  (SWITCHES: bench.locomo reads it here)

from ..text.function_words import content_terms
from ..text.tokenize import terms
from ..text.transliterate import with_aliases
from .channels import (TIER as _TIER, Candidates, feedback_channel, replies_at_length, segment_channels,
                       speaker_dense_channel, sub_query_channels, turn_channels, whose_turns)
from .decompose import sub_queries
from .list_questions import answered_across_turns
from ..knowledge.recall_items import knowledge_hits, with_knowledge
from ..knowledge.forgetting import note_accessed
from ..knowledge.recall_procedures import procedure_hits
from ..lifecycle.recall_view import DELIBERATE, apply_lifecycle
from .fusion import fuse
from .packing import Refunds, open_segment_item, pack_turns, passage_picker, segment_items
from .presets import weights_for
from .query import QueryPlan, analyse, content_view
from .rerank import dedup, mmr, similarities
from .temporal import window_and_rest
from .time_mentions import asks_when

DAY = 86_400.0
_AVG_TOKENS_GUESS = 25  # to size the MMR pool when only a budget is given


@dataclass
class Timings:
    embed_ms: float = 0.0
    search_ms: float = 0.0
    channels: dict[str, float] = field(default_factory=dict)
    # Wall time of each stage but the query embedding (embed_ms: the question's when not given, and its
    # content view's): index (the user's in-process indexes, topped up if the archive moved), candidates
    # (all channels), rank (fusion + P6 scoring), rerank (MMR + dedup), pack (items into the budget).
    stages: dict[str, float] = field(default_factory=dict)


def _leading_within(asked: list[dict], how: list[dict], budget: int, item_overhead: int
                    ) -> tuple[list[dict], list[dict], int]:
    """The asked facts and procedures, in order, that fit ``budget`` (each paying ``item_overhead``), and the
    budget they leave."""
    kept: tuple[list[dict], list[dict]] = ([], [])
    for target, entries in zip(kept, (asked, how)):
        for entry in entries:
            if entry["tokens"] + item_overhead <= budget:
                target.append(entry)
                budget -= entry["tokens"] + item_overhead
    return kept[0], kept[1], budget


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
    item_overhead: int = 0,
    dates_once: bool = False,
    pointer_groups: bool = False,
    shown_facts: Collection[str] = (),
    refunds: Refunds | None = None,
    config: RecallConfig | None = None,
) -> list[dict[str, Any]]:
    """Ranked memory items for ``query`` from one user's memory (never another user's).

    ``limit``: at most this many items (default settings.retrieve_max_items when no budget is given).
    ``budget``: pack items into this many tokens (CJK char = 1, else words), in rank order.
    ``query_vector``: a precomputed embedding of the query (skips the embedder).
    ``config``: the switches to run with (``RecallConfig``, e.g. ``RecallConfig.preset("plain")``); default the
    settings' (``RecallConfig.from_settings``).
    ``disabled``: switch names to turn off for this call on top of ``config`` (ablation), see SWITCHES; a name
    that is no switch fails (pydantic ValidationError naming it).
    ``character``: restricts the long-term segment channel to segments this character took part in.
    ``item_overhead``: tokens of the budget each item costs beyond its text (priming's pointer on every line);
    ``dates_once``: a day's date is shown once over its items, not on each (priming), and paid for once;
    ``pointer_groups``: one time header is shown over a segment's items of a day (or an excerpt), and paid for
    once (priming);
    ``shown_facts``: ids of knowledge items the caller shows already (priming's profile section): they still
    order the episodes, but are not packed again, so their room goes to other memories;
    ``refunds``: the caller's lines that packed turns would make redundant, and what each costs: once the turns
    packed quote all of a line's messages, its tokens are added to the budget (packing.Refunds; priming's profile
    facts). ``refunds.earned`` then says which lines the caller can leave out.
    """
    settings = services.settings
    validate_id(user_id, "user_id")
    check_query(query, settings.max_query_chars)
    stores = services.stores
    alpha, beta, gamma = weights_for(purpose)
    on = (config or RecallConfig.from_settings(settings)).without(disabled).switches()
    if stores.turns is None:
        on["turn_dense"] = on["turn_content"] = False
    started = time.perf_counter()
    index = services.turn_index.get(stores.archive, user_id, stores.turns)
    t_index = time.perf_counter()
    turns = index.turns
    n = len(turns)
    plan = analyse(query, index.speakers) if on["speakers"] else QueryPlan()
    cands = Candidates()
    q_terms = terms(query)
    name_terms: set[str] = set()
    if plan.speakers:
        # The speaker focus already says whose turns matter; the names' own terms (in every "Name:" prefix)
        # would only dilute the content terms in BM25.
        name_terms = {t for name in plan.speakers for t in terms(name)}
        q_terms = [t for t in q_terms if t not in name_terms] or q_terms
    if on["function_words"]:
        q_terms = content_terms(query, q_terms)
    if on["crosslingual"]:  # keys of the other script standing for the query's names (nodes.text.transliterate)
        q_terms = with_aliases(query, q_terms)
    view = content_view(query, plan.speakers) if on["turn_content"] and index.turns else None
    # The question and its content view in one embedder call (one request when the embedder is remote).
    t_after_plan = time.perf_counter()
    texts = ([query] if query_vector is None else []) + ([view] if view is not None else [])
    vectors = services.embedder.embed(texts) if texts else None
    t_embed = time.perf_counter()
    qvec = vectors[0] if query_vector is None else np.asarray(query_vector, dtype=np.float32)
    content_vec = vectors[-1] if view is not None else None
    turn_channels(services, index, user_id, qvec, q_terms, on, cands, content_vec)
    if on["speaker_dense"] and answered_across_turns(query) \
            and (whose := whose_turns(index, plan, settings.recall_passage_min_tokens)) is not None:
        speaker_dense_channel(index, content_vec if content_vec is not None else qvec, whose,
                              settings.recall_turn_candidates, cands)
    if on["decompose"] and on["turn_keyword"] and (parts := sub_queries(query)):
        part_terms = [[t for t in terms(p) if t not in name_terms] or terms(p) for p in parts]
        if on["function_words"]:
            part_terms = [content_terms(query, t) for t in part_terms]
        if on["crosslingual"]:
            part_terms = [with_aliases(p, t) for p, t in zip(parts, part_terms)]
        sub_query_channels(index, [p for p in part_terms if p], settings, on, cands)
    # The passage of a long turn that answers the query, by its words and the dense channels' passage hits.
    pick = passage_picker(index, cands.passage, q_terms) if on["passages"] else None
    if on["feedback"]:
        feedback_channel(index, q_terms, settings, cands, pick)
    # Recent segments are candidates for being recent, so they count as much as the purpose values recency
    # over relevance: fully while talking, barely for a factual question (where they mostly add noise).
    recent_signal = 0.5 * beta / max(alpha, beta)
    segment_channels(services, index, user_id, query, qvec, on, character, cands, recent_signal,
                     as_remembered=on["lifecycle"] and purpose not in DELIBERATE)
    t_candidates = time.perf_counter()
    rel, tiers = fuse(index, cands, settings, on, plan)
    channel_ms = cands.ms

    if now_ts is None:
        now_ts = max([turns[-1].ts if turns else 0.0, *(t["ts"] for t in open_turns or [])]) or time.time()
    window, untimed = window_and_rest(query, now_ts, settings.timezone) if on["temporal"] else (None, "")
    only_when = window is not None and asks_only_a_time(untimed, plan.speakers or index.speakers)
    # A when-question's answer says when (81 % of LoCoMo dev's, against 12 % of all turns); not where the other side
    # answers at length: there a decision is said in a short turn without a time, dated by its own timestamp, and
    # the long replies name times in passing.
    if on["when"] and asks_when(query) and not replies_at_length(index, settings.recall_passage_min_tokens):
        _lift_time_mentions(index, rel, settings.recall_when_lift)
    ordered = _rank(index, rel, cands.seg_importance, window, now_ts, (alpha, beta, gamma), settings, only_when)

    t_rank = time.perf_counter()
    # --- MMR (S6) and dedup over the head; the tail follows in score order -------------------------------
    wanted = limit or (max(1, budget // _AVG_TOKENS_GUESS) if budget else settings.retrieve_max_items)
    pool_size = settings.recall_mmr_pool * wanted
    pool, rest = list(ordered[:pool_size]), ordered[pool_size:]
    dedup_on = settings.recall_dedup_similarity < 1.0
    rows = None
    if pool and stores.turns is not None and (on["mmr"] or dedup_on):
        rows = index.vector_rows(stores.turns, user_id, [c[1] for c in pool])
    sims = similarities(pool, rows)
    order = mmr(pool, sims, settings.recall_mmr_lambda, wanted) if on["mmr"] else list(range(len(pool)))
    # A long turn's vector averages its boilerplate: two replies sharing headings and code read as near-
    # duplicates (≥ 0.95) while their passages say different things, so no long turn is dropped as one.
    keep = ({j for j, c in enumerate(pool) if index.token_counts[c[1]] > index.passage_cut[1]}
            if index.passage_cut[0] and on["passages"] else set())
    ordered = dedup(pool, order, sims, rest, turns, settings.recall_dedup_similarity, keep, index.token_counts)

    t_rerank = time.perf_counter()
    # Issue 18: the facts the question asks about (it names their attribute or subject) lead, current ones
    # first, then the procedure a how-question asks for; they take their share of the budget. Facts that are
    # only near the question in meaning follow the episodes, in what budget is left: their source turn is
    # often packed already (LoCoMo: leading with them cost evidence at 1,024 tokens).
    facts = knowledge_hits(services, user_id, query, limit=3 if limit is None else max(1, limit // 2), query_vector=qvec) if on["knowledge"] else []
    asked = [f for f in facts if "cue" in f["channels"] and f.get("item_id") not in shown_facts]
    related = [f for f in facts if "cue" not in f["channels"] and f.get("item_id") not in shown_facts]
    how = procedure_hits(services, user_id, query) if on["procedures"] else []
    full_budget = budget
    if (asked or how) and budget is not None:
        # Only what fits leads: a recipe longer than the whole budget would overflow it, and charged anyway it
        # would leave the episodes nothing.
        asked, how, budget = _leading_within(asked, how, budget, item_overhead)
    granularity = settings.recall_granularity
    if granularity == "auto":
        granularity = "turns" if budget is not None else "segments"
    if granularity == "mixed" and budget is not None:
        ordered = list(ordered)  # read twice below
        items = pack_turns(ordered, turns, tiers, int(budget * settings.recall_mixed_turn_share), None, settings, wanted, q_terms,
                           index.token_counts, pick, item_overhead, dates_once, pointer_groups)
        seen = {turns[index.position[t]].segment_id for item in items for t in item["turn_ids"]}
        used = sum(item["tokens"] for item in items)
        rest_ordered = [c for c in ordered if turns[c[1]].segment_id not in seen]
        items += segment_items(rest_ordered, turns, tiers, services, user_id, budget - used, None)
    elif granularity == "segments":
        items = segment_items(ordered, turns, tiers, services, user_id, budget, limit or (None if budget else wanted))
    else:
        items = pack_turns(ordered, turns, tiers, budget, limit if budget is None else None, settings, wanted, q_terms,
                           index.token_counts, pick, item_overhead, dates_once, pointer_groups, refunds)
        if refunds is not None and full_budget is not None:
            full_budget += refunds.tokens
    if on["lifecycle"]:
        items = apply_lifecycle(services, user_id, items, purpose, query=query)
    if on["knowledge"] or how:
        episodes = with_knowledge(items, facts)[len(facts):]  # every fact orders the episodes (current first)
        items = [*asked, *how, *episodes]
        if full_budget is not None:
            room = full_budget - sum(i["tokens"] + item_overhead for i in items)
            for fact in related:
                if fact["tokens"] + item_overhead <= room:
                    items.append(fact)
                    room -= fact["tokens"] + item_overhead
        else:
            items += related
        if limit is not None:
            items = items[:limit]
        note_accessed(services, user_id, items, now_ts)
    if open_turns:
        items.insert(0, open_segment_item(open_turns, settings.timezone))
    if timings is not None:
        t_pack = time.perf_counter()
        timings.embed_ms = (t_embed - t_after_plan) * 1000
        timings.search_ms = (t_pack - started) * 1000 - timings.embed_ms
        timings.channels = channel_ms
        timings.stages = {name: round((b - a) * 1000, 3) for name, a, b in (
            ("index", started, t_index), ("candidates", t_embed, t_candidates), ("rank", t_candidates, t_rank),
            ("rerank", t_rank, t_rerank), ("pack", t_rerank, t_pack))}
    return items


def check_query(query: object, max_chars: int) -> str:
    """The query, or InvalidInput("query") before any work: a 1 MB question once took 105 s to tokenise,
    embed and score before anything could refuse it."""
    if not isinstance(query, str):
        raise InvalidInput("query", f"must be a string, got {type(query).__name__}")
    if len(query) > max_chars:
        raise InvalidInput("query", f"has {len(query):,} characters; the limit is {max_chars:,} (LUMINA_MAX_QUERY_CHARS)")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput("query", f"is not valid Unicode (lone surrogate at position {exc.start})") from None
    return query


_WHEN_HEAD = 100
"""Candidates (the most relevant) a when-question reads for a time: the lift only reorders the head."""


def _lift_time_mentions(index, rel: np.ndarray, lift: float) -> None:
    """A when-question: the head's candidates that name a time (nodes.retrieval.time_mentions) get their relevance
    × (1 + ``lift``), before P6 scoring."""
    if lift <= 0:
        return
    candidates = np.flatnonzero(rel > 0)
    if len(candidates) > _WHEN_HEAD:
        candidates = candidates[np.argpartition(-rel[candidates], _WHEN_HEAD)[:_WHEN_HEAD]]
    said = index.time_mentions(candidates)
    if said.size:
        rel[said] *= 1.0 + lift


_WINDOW_SAYS_NOTHING = 0.9
"""Share of the candidates inside a question's time window from which the window is not applied."""
_WINDOW_SCALE, _WINDOW_CAP = 1.5, 1.5
"""A turn inside the window: relevance × _WINDOW_SCALE + recall_window_lift, at most _WINDOW_CAP (the best
relevance outside is 1)."""


_TIME_ONLY_LIFT = 1.0
"""A turn inside the window of a question that asks nothing besides when (``asks_only_a_time``): relevance × 1.5 +
this, so every turn of that time passes every turn outside it (whose relevance is at most 1) and keeps its order."""
# What is left of a question without its time cues that still asks nothing: the words linking it to the time
# ("between … and …", "the week before …"), and the verbs that say only that something was done or said.
_TIME_LINKS = frozenset({"between", "before", "after", "during", "since", "until", "till", "from", "around"})
_BARE_VERBS = frozenset({"happen", "go", "say", "tell", "talk", "discus", "mention", "chat", "up",
                         "話す", "言う", "起きる", "起こる", "行く"})


def asks_only_a_time(untimed: str, speakers) -> bool:
    """Whether a question, without its time cues (``untimed``, temporal.window_and_rest), names nothing but the
    people it is about: "Where was John between August 11 and August 15?", "What did Nate do for Joanna on 25 May?",
    "What did we talk about last Friday?", 「6月3日に美咲は何してた？」. Its answer is a turn of that time in words of its
    own ("Took a trip to a new place"), which the question's words cannot find: only the time can."""
    names = {t for name in speakers for t in terms(name)}
    return not [t for t in terms(untimed) if t not in names and t not in _TIME_LINKS and t not in _BARE_VERBS]


def _rank(index, rel: np.ndarray, seg_importance: dict[str, float], window, now_ts: float, weights, settings,
          only_when: bool = False) -> "_Ranked":
    """P6: α·relevance + β·recency + γ·importance for every candidate turn (relevance > 0), best first;
    a turn inside the time window the query names is boosted, above every turn outside it when the query asks
    nothing besides when (``only_when``). Tuples (score, index, relevance, recency)."""
    alpha, beta, gamma = weights
    candidates = np.flatnonzero(rel > 0)
    if not candidates.size:
        return _Ranked(np.zeros(0), candidates, np.zeros(0), np.zeros(0))
    relevance = rel[candidates] / rel[candidates].max()
    ts = index.ts[candidates]
    if window is not None:
        inside = (ts >= window[0]) & (ts <= window[1])
        # A window holding (nearly) every candidate tells none apart — a conversation younger than "recently" (30
        # days) — and its capped lift would only tie every turn above 0.8 at 1.5, for recency to decide.
        if inside.mean() < _WINDOW_SAYS_NOTHING:
            # Up to half again the best match: a turn of the day asked about, said in other words than the
            # question's, passes better matches of other days (tests/test_time_window_ranking.py).
            lift = _TIME_ONLY_LIFT if only_when else settings.recall_window_lift
            lifted = np.minimum(_WINDOW_CAP, relevance * _WINDOW_SCALE + lift)
            relevance = np.where(inside, lifted, relevance)
    half_life = settings.recency_half_life_days * DAY
    recency = np.power(0.5, np.maximum(0.0, now_ts - ts) / half_life)
    per_segment = np.zeros(len(index.segment_ids))
    for seg_id, value in seg_importance.items():
        code = index.segment_code.get(seg_id)
        if code is not None:
            per_segment[code] = value
    score = alpha * relevance + beta * recency + gamma * per_segment[index.segment_of[candidates]]
    order = np.lexsort((candidates, -score))  # best score first, then conversation order
    return _Ranked(score[order], candidates[order], relevance[order], recency[order])


class _Ranked:
    """The ranked candidates as arrays; slicing gives the (score, index, relevance, recency) tuples, built
    only for the part the caller reads (a broad query can have thousands of candidates)."""

    def __init__(self, score, index, relevance, recency) -> None:
        self._cols = (score, index, relevance, recency)

    def __len__(self) -> int:
        return len(self._cols[0])

    def __getitem__(self, part: slice):
        score, index, relevance, recency = (c[part] for c in self._cols)
        return _Ranked(score, index, relevance, recency)

    def __iter__(self):
        return zip(*(c.tolist() for c in self._cols))

    def __bool__(self) -> bool:
        return len(self) > 0
