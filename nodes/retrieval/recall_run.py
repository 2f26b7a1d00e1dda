"""One recall as data: what the caller asks (``RecallRequest``), and the run its stages fill in turn (``RecallRun``,
see recall_stages.STAGES); with the check every query passes before any work (``check_query``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Sequence

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_recall import RecallConfig

from .channels import Candidates
from .packing import Refunds
from .query import QueryPlan


@dataclass
class Timings:
    embed_ms: float = 0.0
    search_ms: float = 0.0
    channels: dict[str, float] = field(default_factory=dict)
    # Wall time of each stage but the query embedding (embed_ms: the question's when not given, and its
    # content view's): index (the user's in-process indexes, topped up if the archive moved), candidates
    # (all channels), rank (fusion + P6 scoring), rerank (MMR + dedup), pack (items into the budget).
    stages: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RecallRequest:
    """What one recall is asked: ``recall()``'s parameters (documented there) but the services and what the call
    reports back (timings, refunds)."""

    user_id: str
    query: str
    purpose: str = "talking"
    limit: int | None = None
    character: str | None = None
    session: str | None = None
    emotion: Any = None  # the current emotion carried from the memory recalled before (resonance.CurrentEmotion)
    open_turns: Sequence[dict] | None = None
    now_ts: float | None = None
    budget: int | None = None
    query_vector: Sequence[float] | None = None
    config: RecallConfig | None = None
    disabled: Sequence[str] = ()
    item_overhead: int = 0
    dates_once: bool = False
    pointer_groups: bool = False
    shown_facts: Collection[str] = ()


@dataclass
class RecallRun:
    """A recall in progress: the request, the services it reads, and what each stage found so far."""

    services: Any
    request: RecallRequest
    timings: Timings | None = None
    refunds: Refunds | None = None
    weights: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the purpose's α, β, γ (P6)
    on: dict[str, bool] = field(default_factory=dict)  # the switches this call runs with
    index: Any = None  # the user's turn index (turn_index.UserTurns)
    scope: Any = None  # what this recall may reach (scope.Scope); None: the whole of the user's memory
    plan: QueryPlan = field(default_factory=QueryPlan)
    q_terms: list[str] = field(default_factory=list)  # the query's terms for the keyword channels
    name_terms: set[str] = field(default_factory=set)  # the terms of the speakers' names the query asks about
    view: str | None = None  # the query's content view (query.content_view)
    qvec: Any = None
    content_vec: Any = None
    cands: Candidates = field(default_factory=Candidates)
    pick: Any = None  # the passage picker (excerpts.passage_picker), when passages are on
    rel: Any = None  # fused relevance per turn
    tiers: dict = field(default_factory=dict)  # turn -> the tiers it was found in
    activation: dict[str, float] = field(default_factory=dict)  # segment -> A3's access and PageRank terms
    now_ts: float = 0.0
    ordered: Any = None  # the ranked candidates: (score, index, relevance, recency)
    wanted: int = 0  # items the rerank aims at
    facts: list[dict] = field(default_factory=list)
    asked: list[dict] = field(default_factory=list)  # facts the question names, leading the items
    related: list[dict] = field(default_factory=list)  # facts near the question in meaning, after the episodes
    how: list[dict] = field(default_factory=list)  # the procedure a how-question asks for
    budget: int | None = None  # what is left of the budget for the episodes
    full_budget: int | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    marks: dict[str, float] = field(default_factory=dict)  # stage name -> perf_counter when it ended


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
