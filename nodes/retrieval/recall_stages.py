"""The stages of recall (nodes.retrieval.recall), in order (``STAGES``): each takes the run (recall_run.RecallRun),
adds what its job finds, and returns it."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.settings_recall import RecallConfig

from ..knowledge.forgetting import note_accessed
from ..lifecycle.recall_view import DELIBERATE, apply_lifecycle
from ..archive_recall import cold_log_items, leave_archive_out
from ..text.tokenize import terms
from ..text.transliterate import with_aliases
from .channels import feedback_channel, segment_channels, speaker_dense_channel, turn_channels, whose_turns
from .channel_trust import keyword_trust, matched_share
from .excerpts import passage_picker
from .fusion import fuse
from .list_questions import answered_across_turns
from .presets import weights_for
from .query import QueryPlan, analyse, content_view
from .ranking import asks_only_a_time, rank_turns
from .recall_packing import lead_knowledge, pack_items, place_knowledge
from .recall_run import RecallRun, check_query
from .activation import access_boost, pagerank_boost
from .relations import best_segments, lend_to_related
from .resonance import by_carried_emotion, shows_emotion, within_limits
from .scope import scope_of
from .dedup import drop_duplicate_items, drop_repeated_turns
from .category import prefer_same_category
from .rerank import dedup, mmr, similarities
from .segment_items import open_segment_item
from .temporal import window_and_rest

_AVG_TOKENS_GUESS = 25  # to size the MMR pool when only a budget is given


def check_request(run: RecallRun) -> RecallRun:
    """Refuses a bad user id, query, purpose or switch before any work, and settles the switches of this call."""
    request, settings = run.request, run.services.settings
    validate_id(request.user_id, "user_id")
    check_query(request.query, settings.max_query_chars)
    run.weights = weights_for(request.purpose)
    run.on = (request.config or RecallConfig.from_settings(settings)).without(request.disabled).switches()
    if run.services.stores.turns is None:
        run.on["turn_content"] = False
    return run


def open_index(run: RecallRun) -> RecallRun:
    """Opens the user's in-process turn index, topped up if the archive moved."""
    stores = run.services.stores
    run.index = run.services.turn_index.get(stores.archive, run.request.user_id, stores.turns)
    return run


def narrow(run: RecallRun) -> RecallRun:
    """Settles what this recall may reach: a character's and a session's memories (S4, scope.py)."""
    request = run.request
    run.scope = scope_of(run.index, request.character, request.session, run.services.settings.boundary_idle_seconds)
    return run


def plan_query(run: RecallRun) -> RecallRun:
    """Reads the query: the speakers it asks about, its terms for the keyword channels, its content view."""
    query, on, index = run.request.query, run.on, run.index
    run.plan = plan = analyse(query, index.speakers) if on["speakers"] else QueryPlan()
    q_terms = terms(query)
    if plan.speakers:
        # The speaker focus already says whose turns matter; the names' own terms (in every "Name:" prefix)
        # would only dilute the content terms in BM25.
        run.name_terms = {t for name in plan.speakers for t in terms(name)}
        q_terms = [t for t in q_terms if t not in run.name_terms] or q_terms
    if on["crosslingual"]:  # keys of the other script standing for the query's names (nodes.text.transliterate)
        q_terms = with_aliases(query, q_terms)
    run.q_terms = q_terms
    run.view = content_view(query, plan.speakers) if on["turn_content"] and index.turns else None
    return run


def embed_query(run: RecallRun) -> RecallRun:
    """Embeds the question (unless given) and its content view in one embedder call."""
    query_vector, view = run.request.query_vector, run.view
    texts = ([run.request.query] if query_vector is None else []) + ([view] if view is not None else [])
    vectors = run.services.embedder.embed(texts) if texts else None
    run.qvec = vectors[0] if query_vector is None else np.asarray(query_vector, dtype=np.float32)
    run.content_vec = vectors[-1] if view is not None else None
    return run


def turn_candidates(run: RecallRun) -> RecallRun:
    """Runs the turn channels: dense (the content view) and keyword; one speaker's turns."""
    services, on, index, query = run.services, run.on, run.index, run.request.query
    settings = services.settings
    turn_channels(services, index, run.request.user_id, run.qvec, run.q_terms, on, run.cands, run.content_vec)
    if on["speaker_dense"] and answered_across_turns(query) \
            and (whose := whose_turns(index, run.plan, settings.recall_passage_min_tokens)) is not None:
        speaker_dense_channel(index, run.content_vec if run.content_vec is not None else run.qvec, whose,
                              settings.recall_turn_candidates, run.cands)
    if run.scope is not None:  # the feedback reads the keyword channel's first hits: the scope's only
        run.cands.turn_rankings = {name: run.scope.keep_turns(r) for name, r in run.cands.turn_rankings.items()}
    return run


def feedback_candidates(run: RecallRun) -> RecallRun:
    """Picks each long turn's answering passage, and runs pseudo-relevance feedback on the first hits."""
    # The passage of a long turn that answers the query, by its words and the dense channels' passage hits.
    run.pick = passage_picker(run.index, run.cands.passage, run.q_terms) if run.on["passages"] else None
    if run.on["feedback"]:
        feedback_channel(run.index, run.q_terms, run.services.settings, run.cands, run.pick)
    return run


def segment_candidates(run: RecallRun) -> RecallRun:
    """Runs the segment channels (keyword, graph; mid-term and dense for a reply), each lending its turns a share
    of its score."""
    alpha, beta, _gamma = run.weights
    # Recent segments are candidates for being recent, so for a reply they count as much as the purpose values
    # recency over relevance.
    recent_signal = 0.5 * beta / max(alpha, beta)
    request = run.request
    reply = request.purpose not in DELIBERATE
    segment_channels(run.services, run.index, request.user_id, request.query, run.qvec, run.on, request.character,
                     run.cands, recent_signal, reply=reply, as_remembered=reply and run.on["lifecycle"])
    return run


def keep_in_scope(run: RecallRun) -> RecallRun:
    """Leaves out of every channel's candidates what lies outside this recall's scope (S4), before the fusion
    normalises by the best of them."""
    scope, cands = run.scope, run.cands
    if scope is None:
        return run
    cands.turn_rankings = {name: scope.keep_turns(ranking) for name, ranking in cands.turn_rankings.items()}
    for seg in [s for s in cands.seg_score if not scope.keeps_segment(s)]:
        del cands.seg_score[seg]
        cands.seg_tiers.pop(seg, None)
    return run


def fuse_candidates(run: RecallRun) -> RecallRun:
    """Fuses the channels into one relevance per turn, and the tiers each turn was found in; the keyword channels
    weigh as much as this query's best keyword hit matched its rare terms (channel_trust)."""
    full_at = run.services.settings.recall_keyword_trust
    if full_at > 0 and "turn_keyword" in run.cands.turn_rankings:
        share = matched_share(run.index, run.q_terms, run.cands.turn_rankings["turn_keyword"])
        run.cands.keyword_trust = keyword_trust(share, full_at)
    run.rel, run.tiers = fuse(run.index, run.cands, run.services.settings, run.on, run.plan)
    if run.scope is not None:  # a neighbour's share never crosses the scope
        run.rel = np.where(run.scope.turns, run.rel, 0.0)
    return run


def follow_relations(run: RecallRun) -> RecallRun:
    """Brings the memories related to the best ones found, to the set depth (F6, relations.py)."""
    settings = run.services.settings
    depth = settings.lifecycle.relation_traversal_depth
    if depth and run.on["graph"] and settings.recall_relation_seeds:
        run.rel = lend_to_related(run.index, run.rel, run.tiers, run.services.stores.graph, run.request.user_id, depth,
                                  settings.recall_relation_share, settings.recall_relation_seeds,
                                  settings.recall_relation_per_hop, run.scope)
    return run


def activate(run: RecallRun) -> RecallRun:
    """A3's terms besides similarity and recency: how often each candidate memory was recalled, and its
    Personalized PageRank around the best ones found (activation.py)."""
    settings, index, user_id = run.services.settings, run.index, run.request.user_id
    if not run.rel.any():
        return run
    candidates = {index.segment_ids[c] for c in np.unique(index.segment_of[run.rel > 0])}
    boost = access_boost(run.services, user_id, candidates, settings.recall_access_weight) if run.on["lifecycle"] else {}
    if run.on["graph"] and settings.recall_pagerank_weight and settings.recall_relation_seeds:
        keep = run.scope.keeps_segment if run.scope is not None else None
        ranked = pagerank_boost(run.services.stores.graph, user_id, best_segments(index, run.rel, settings.recall_relation_seeds),
                                settings.recall_pagerank_weight, settings.recall_pagerank_hops,
                                settings.recall_pagerank_per_node, keep)
        for seg, value in ranked.items():
            if seg in candidates:
                boost[seg] = boost.get(seg, 0.0) + value
    run.activation = boost
    return run


def rank(run: RecallRun) -> RecallRun:
    """Scores every candidate by relevance, recency and importance (P6), lifting the time the question names."""
    request, settings, index, on = run.request, run.services.settings, run.index, run.on
    turns = index.turns
    now_ts = request.now_ts
    if now_ts is None:
        now_ts = max([turns[-1].ts if turns else 0.0, *(t["ts"] for t in request.open_turns or [])]) or time.time()
    run.now_ts = now_ts
    query = request.query
    window, untimed = window_and_rest(query, now_ts, settings.timezone) if on["temporal"] else (None, "")
    only_when = window is not None and asks_only_a_time(untimed, run.plan.speakers or index.speakers)
    run.ordered = rank_turns(index, run.rel, run.cands.seg_importance, window, now_ts, run.weights, settings,
                             only_when, run.activation)
    return run


def rerank(run: RecallRun) -> RecallRun:
    """Re-ranks the head by MMR (S6) and drops near-duplicates; the tail follows in score order."""
    request, settings, index, on = run.request, run.services.settings, run.index, run.on
    stores = run.services.stores
    budget = request.budget
    run.wanted = wanted = request.limit or (max(1, budget // _AVG_TOKENS_GUESS) if budget else settings.retrieve_max_items)
    pool_size = settings.recall_mmr_pool * wanted
    ordered = run.ordered
    pool, rest = list(ordered[:pool_size]), ordered[pool_size:]
    dedup_on = settings.recall_dedup_similarity < 1.0
    rows = None
    if pool and stores.turns is not None and (on["mmr"] or dedup_on):
        rows = index.vector_rows(stores.turns, request.user_id, [c[1] for c in pool])
    sims = similarities(pool, rows)
    order = mmr(pool, sims, settings.recall_mmr_lambda, wanted) if on["mmr"] else list(range(len(pool)))
    # A long turn's vector averages its boilerplate: two replies sharing headings and code read as near-
    # duplicates (≥ 0.95) while their passages say different things, so no long turn is dropped as one.
    keep = ({j for j, c in enumerate(pool) if index.token_counts[c[1]] > index.passage_cut[1]}
            if index.passage_cut[0] and on["passages"] else set())
    run.ordered = dedup(pool, order, sims, rest, index.turns, settings.recall_dedup_similarity, keep,
                        index.token_counts)
    return run


def apply_forgetting(run: RecallRun) -> RecallRun:
    """Lets the forgetting lifecycle shape the items: a faded memory as its summary, a forgotten one left out."""
    if run.on["lifecycle"]:
        run.items = apply_lifecycle(run.services, run.request.user_id, run.items, run.request.purpose,
                                    query=run.request.query)
    return run


def resonate(run: RecallRun) -> RecallRun:
    """F7: a reply's memories ranked by the notes' priority with the emotion carried from the memory recalled
    before, when the query shows none of its own, then cut by the notes' top_k and relevance_threshold (resonance.py)."""
    request = run.request
    if (request.emotion and run.on["lifecycle"] and request.purpose not in DELIBERATE
            and not shows_emotion(request.query)):
        run.items = by_carried_emotion(run.services, request.user_id, run.items, request.emotion)
    if run.on["lifecycle"] and request.purpose not in DELIBERATE:  # F7's cut-offs (resonance.within_limits)
        run.items = within_limits(run.items, run.services.settings.lifecycle)
    return run


def note_use(run: RecallRun) -> RecallRun:
    """Notes that the knowledge shown was used (forgetting), when knowledge or a procedure took part."""
    if run.on["knowledge"] or run.how:
        note_accessed(run.services, run.request.user_id, run.items, run.now_ts)
    return run


def add_open_turns(run: RecallRun) -> RecallRun:
    """Puts the open conversation's last turns first, as one short-term item."""
    if run.request.open_turns:
        run.items.insert(0, open_segment_item(run.request.open_turns, run.services.settings.timezone))
    return run


def record_timings(run: RecallRun) -> RecallRun:
    """Reports each stage's wall time to the caller's Timings, when given."""
    timings = run.timings
    if timings is not None:
        marks, t_pack = run.marks, time.perf_counter()
        started = marks["check_request"]
        timings.embed_ms = (marks["embed_query"] - marks["plan_query"]) * 1000
        timings.search_ms = (t_pack - started) * 1000 - timings.embed_ms
        timings.channels = run.cands.ms
        timings.stages = {name: round((b - a) * 1000, 3) for name, a, b in (
            ("index", started, marks["open_index"]), ("candidates", marks["embed_query"], marks["segment_candidates"]),
            ("rank", marks["segment_candidates"], marks["rank"]), ("rerank", marks["rank"], marks["rerank"]),
            ("pack", marks["rerank"], t_pack))}
    return run


STAGES: tuple[Callable[[RecallRun], RecallRun], ...] = (
    check_request, open_index, narrow, plan_query, embed_query, turn_candidates, feedback_candidates,
    segment_candidates, keep_in_scope, fuse_candidates, follow_relations, activate, prefer_same_category, leave_archive_out, rank, rerank, drop_repeated_turns, lead_knowledge, pack_items, apply_forgetting, resonate, place_knowledge, cold_log_items, note_use,
    add_open_turns, drop_duplicate_items, record_timings,
)
