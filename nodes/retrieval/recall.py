"""Hybrid recall across tiers (L6, S1, A3, P6, S6, A1): the public retrieval API.

``recall(services, user_id, query, ...)`` ranks *turns* — the finest unit every tier can point back to —
from several candidate channels, each switchable off in settings (``recall_*``):

- ``turn_content``   dense search over the turn-vector collection (stores.turn_vectors) with the query's
                     content view: without its question scaffolding and the names of the speakers it asks
                     about (nodes.retrieval.query.content_view); the query itself when it is all content  tier: long-term
- ``turn_keyword``   BM25 over the user's archived turns, Sudachi/English terms               tier: archive
- ``feedback``       BM25 again with the terms that weigh most in the first hits (pseudo-relevance
                     feedback, for questions whose answer shares words with a first hit only)  tier: archive
- ``segment_keyword`` BM25 over archived segments (summary + keywords + text)                 tier: archive
- ``midterm``        the most recent mid-term segments (S1 "recent"; for a reply)             tier: mid-term
- ``graph``          segments that MENTION the query's concepts, and for a reply ASSOCIATED neighbours
                     of the best segments (A3 spreading activation)                           tier: graph

Recall for a reply (any purpose but "question") also searches the long-term segment vectors, ranked as
remembered when the lifecycle is on (a faded memory by its text at its level; nodes.lifecycle.memory_vector).

Turn channels are fused by reciprocal rank; segment channels add a share of their segment's fused score to
each of its turns, and a turn passes a share of its relevance to its neighbours (answers sit next to the
question that prompted them). The score is α·relevance + β·recency + γ·importance with the purpose's
preset (P6; recency on the conversation's clock), boosted inside a time window the query names
("last week", "先月"), re-ranked by
MMR (λ 0.7 over a pool of 3× the items wanted) with near-duplicates
(≥ 0.95) dropped, and packed into a token budget (A1). Hit turns that are adjacent in the conversation are
merged into one item in conversation order, prefixed with their date; the packer accounts for that.

``recall`` runs the stages of recall_stages.STAGES, in order, over one recall_run.RecallRun: each a small named
job (open the index, plan the query, run the turn channels, ..., pack, place the knowledge).

Every item carries ``source_ids`` (the caller's ids, e.g. LoCoMo dia_ids) and ``turn_ids`` of exactly the
turns its text was built from, plus ``tiers`` (where it was found) and ``date``.
"""

from __future__ import annotations

import time
from typing import Any, Collection, Sequence

from lumina_memory.stores.settings_recall import SWITCHES, RecallConfig  # noqa: F401  (SWITCHES: bench.locomo reads it here)

from ..costs import operation
from .packing import Refunds
from .recall_run import RecallRequest, RecallRun, Timings
from .recall_stages import STAGES
from .resonance import CurrentEmotion

__all__ = ["SWITCHES", "RecallConfig", "Timings", "recall"]


def recall(
    services,
    user_id: str,
    query: str,
    *,
    purpose: str = "talking",
    limit: int | None = None,
    character: str | None = None,
    session: str | None = None,
    emotion: CurrentEmotion | None = None,
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
    ``character``, ``session``: every channel reaches only the memories this character took part in, of this
    session (S4, nodes.retrieval.scope: a session is named by its first segment's id); the open turns, the
    conversation in progress, are shown as given, and knowledge items are the person's profile, shared (A4).
    ``emotion``: the current emotion carried from the memory recalled before (F7, resonance.py): a reply's
    recall ranks the memories by the notes' priority with it when the query shows no emotion of its own.
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
    run = RecallRun(services, RecallRequest(
        user_id, query, purpose=purpose, limit=limit, character=character, session=session, emotion=emotion, open_turns=open_turns, now_ts=now_ts,
        budget=budget, query_vector=query_vector, config=config, disabled=disabled, item_overhead=item_overhead,
        dates_once=dates_once, pointer_groups=pointer_groups, shown_facts=shown_facts), timings, refunds)
    with operation("recall", services) as op:  # issue 49: each stage's time, kept per recall
        for stage in STAGES:
            with op.stage(stage.__name__):
                run = stage(run)
            run.marks[stage.__name__] = time.perf_counter()
    return run.items
