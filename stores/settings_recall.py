"""Recall's settings and its switches as a typed model.

``RecallSettings`` holds every ``recall_*`` / ``retrieve_*`` setting (env ``LUMINA_RECALL_*``, ``LUMINA_RETRIEVE_*``);
``LuminaSettings`` inherits them, so the names stay flat. ``RecallConfig`` is what one recall runs with: one
boolean per channel (``Channel``) and stage (``Stage``), read from the settings (``from_settings``) or a named
preset (``PRESETS``), a switch turned off per call (``without``). A misspelt switch is an error, never a no-op.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field


class RecallSettings(BaseModel):
    """The recall group of ``LuminaSettings``."""

    # --- L6/S1 retrieval -----------------------------------------------------------------------------
    retrieve_recent: int = Field(default=5, ge=0, le=100, description="S1: recent mid-term segments read by recall (0 = none).")
    retrieve_semantic: int = Field(
        default=5, ge=0, le=100, description="Nearest long-term segments shown by the graph view (`lumina-memory graph`)."
    )
    retrieve_graph: int = Field(
        default=5, ge=0, le=100, description="A3: segments per concept, and associated neighbours, the graph channel reads (0 = none)."
    )
    retrieve_graph_hub_share: float = Field(
        default=0.05, ge=0.0, le=1.0,
        description="A3: a query concept said in more than this share of the user's turns (and in over 20) is a "
        "hub and spreads no activation (the fan effect); the graph channel looks up the rarer ones.",
    )
    retrieve_graph_concepts: int = Field(default=4, ge=0, le=50, description="A3: query concepts looked up at most, rarest first.")
    retrieve_max_items: int = Field(
        default=10, ge=1, le=200, description="Items a recall returns when neither a limit nor a token budget is given."
    )
    recency_half_life_days: float = Field(default=30.0, gt=0, description="A3: 0.5^(age_days/30).")

    # --- hybrid turn-level recall (nodes/retrieval/recall.py); every switch of RecallConfig has one ---------
    turn_vectors: bool = Field(
        default=True, description="Also index every archived turn as a vector (second collection) for recall."
    )
    recall_turn_content: bool = Field(
        default=True,
        description="Channel: dense search over turn vectors with the query's content view (no question words, no "
        "names of the speakers asked about), or the query itself when it is all content.",
    )
    recall_turn_keyword: bool = Field(default=True, description="Channel: BM25 over archived turns (Sudachi terms).")
    recall_segment_keyword: bool = Field(default=True, description="Channel: BM25 over archived segments.")
    recall_midterm: bool = Field(
        default=True,
        description="Channel: recent mid-term segments (S1 recent), for a reply; a deliberate question is "
        "answered by relevance.",
    )
    recall_graph: bool = Field(default=True, description="Channel: concepts + ASSOCIATED spreading activation (A3).")
    recall_temporal: bool = Field(default=True, description="Boost memories inside a time window the query names.")
    recall_speaker_dense: bool = Field(
        default=True,
        description="Channel: for a question asking many things of one speaker, that speaker's turns ranked by meaning "
        "alone (nodes.retrieval.list_questions), weighted by recall_speaker_dense_weight.",
    )
    recall_lifecycle: bool = Field(
        default=True,
        description="Stage: the forgetting lifecycle shapes what recall shows (a faded memory as its summary or "
        "keywords, a forgotten one left out; for a reply, long-term segments ranked as remembered).",
    )
    recall_knowledge: bool = Field(
        default=True, description="Stage: the facts a question asks about lead the items; the others order the episodes."
    )
    recall_procedures: bool = Field(
        default=True, description="Stage: the procedure a how-question asks for leads the items."
    )
    recall_passages: bool = Field(
        default=True,
        description="Stage: a long turn is ranked and quoted by its best passage window (recall_passage_tokens).",
    )
    recall_crosslingual: bool = Field(
        default=True,
        description="Stage: names in the query also match their spelling in the other script (Bob / ボブ).",
    )
    recall_window_lift: float = Field(
        default=0.3, ge=0.0, le=1.5,
        description="A turn inside the time a question names (\"on 25 May\", \"last week\", 「先月」): its relevance "
                    "× 1.5 + this, at most 1.5 (the best relevance is 1), so that the day asked about passes better "
                    "matches of other days.",
    )
    recall_speakers: bool = Field(
        default=True,
        description="Focus on the turns of the speakers the query names (nodes/retrieval/query.py, fusion.py).",
    )
    recall_speaker_focus: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="Share of their relevance that turns of speakers the query does not name keep, when it names some.",
    )
    recall_person_focus: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="A question that names no speaker but speaks of the asker (\"my\", \"I\", 私の) or of what the other side "
        "said (\"you suggested\", 教えてくれた): share of their relevance the other side's turns keep.",
    )
    recall_mmr: bool = Field(default=True, description="S6 MMR re-ranking of the top of the ranking.")
    recall_context: bool = Field(
        default=True, description="Pack each hit turn with its neighbouring turns (detail) when the budget allows."
    )
    recall_keyword_context: float = Field(
        default=1.0, ge=0.0, le=2.0,
        description="Turn BM25: weight of the previous turn's words (same exchange) in each turn's document; 0 = turns alone.",
    )
    recall_keyword_context2: float = Field(
        default=0.5, ge=0.0, le=2.0,
        description="Turn BM25: weight of the words of the turn two back, when the three turns are one exchange "
                    "(a reply to a follow-up question is about the speaker's own turn before it); 0 = one turn back only.",
    )
    recall_turn_candidates: int = Field(default=80, ge=1, le=2000, description="Candidates per turn channel.")
    recall_segment_candidates: int = Field(default=10, ge=0, le=500, description="Candidates per segment channel.")
    recall_rrf_k: float = Field(default=30.0, gt=0, description="Reciprocal-rank fusion constant.")
    recall_keyword_floor: float = Field(
        default=0.1, ge=0.0, lt=1.0,
        description="A keyword hit scoring below this share of the best one is no candidate (fusion reads ranks, "
                    "not scores: without a floor, turns sharing only a common word rank as if they matched).",
    )
    recall_channel_weights: tuple[float, float, float] = Field(
        default=(1.0, 1.0, 0.6), description="Fusion weight of turn-dense (turn_content), turn-BM25 and segment evidence."
    )
    recall_keyword_trust: float = Field(
        default=0.3, ge=0.0, le=1.0,
        description="Fusion: the share of the query's IDF mass its best keyword hit must hold for the keyword channels "
        "to keep their full weight; below it their weight shrinks in proportion, so a question in other words than "
        "the conversation's follows the dense channel (nodes.retrieval.channel_trust); 0 = full weight for every query.",
    )
    recall_passage_max_penalty: float = Field(
        default=0.04, ge=0.0, le=1.0,
        description="Dense channel: a long turn ranks by its best passage's cosine less this × ln(its passages), "
        "as the best of many windows scores high by chance (nodes.retrieval.channels.passage_max_corrected); 0 = "
        "the best passage's cosine as it is.",
    )
    recall_feedback: bool = Field(
        default=True, description="Channel: BM25 again with terms of the first hits added (pseudo-relevance feedback)."
    )
    recall_feedback_docs: int = Field(default=3, ge=0, le=50, description="Feedback: first hits the terms come from.")
    recall_feedback_terms: int = Field(default=8, ge=0, le=50, description="Feedback: terms added to the query.")
    recall_feedback_weight: float = Field(default=0.5, ge=0.0, le=2.0, description="Feedback: fusion weight.")
    recall_speaker_dense_weight: float = Field(
        default=2.0, ge=0.0, le=10.0,
        description="Fusion weight of the named speaker's turns ranked by meaning alone, for a question "
        "asking for many things of them ('What activities does Melanie partake in?'; nodes.retrieval.list_questions).",
    )
    recall_neighbour_spread: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Share of a turn's relevance its adjacent turns inherit."
    )
    recall_relation_share: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="F6: a memory related to one recall found gets this share of its relevance per relation followed "
        "(× the relation's score; depth: lifecycle.relation_traversal_depth).",
    )
    recall_relation_seeds: int = Field(
        default=3, ge=0, le=50,
        description="F6, A3: the best memories found whose relations recall follows and where the PageRank walk "
        "restarts.",
    )
    recall_relation_per_hop: int = Field(
        default=5, ge=1, le=100, description="F6: related memories taken at most per relation followed away."
    )
    recall_access_weight: float = Field(
        default=0.1, ge=0.0, le=1.0,
        description="A3: + this × log(1 + times recalled) per memory, × α (the notes' 0.1; nodes.retrieval.activation).",
    )
    recall_pagerank_weight: float = Field(
        default=0.0, ge=0.0, le=2.0,
        description="A3: + this × Personalized PageRank (÷ the best) over the explicit and implicit links around the best "
        "memories found, × α; 0 = off. Off, not the notes' 0.5: on LoCoMo dev's tuning half 0.5 cost 1.4 points of "
        "recall@1,024 and 0.1 cost 0.3 (docs/recall.md).",
    )
    recall_same_category_boost: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="The notes' category reference: a candidate memory whose F2 category (casual, work, decision, "
        "emotional) is the query's gets + this to its activation, × α (nodes.retrieval.category); 0 = off. Off: on "
        "LoCoMo dev 91 % of the memories read emotional and 95 % of the questions casual, so the category tells "
        "little about the task; on the tuning half 0.05 changed nothing, 0.2 moved recall@1,024 −0.5 and @256 +0.5 "
        "points, 0.5 −1.7 and −0.9; on the other half 0.2 gave −0.1 and 0.",
    )
    recall_pagerank_hops: int = Field(
        default=2, ge=1, le=4, description="A3: links walked from the seeds to build the PageRank's subgraph."
    )
    recall_pagerank_per_node: int = Field(
        default=5, ge=1, le=50, description="A3: ASSOCIATED links read per memory of that subgraph."
    )
    recall_mmr_lambda: float = Field(default=0.7, ge=0.0, le=1.0, description="S6: λ of MMR.")
    recall_mmr_pool: int = Field(default=3, ge=1, le=10, description="S6: MMR pool = this × items wanted.")
    recall_dedup_similarity: float = Field(default=0.95, ge=0.5, le=1.0, description="Near-duplicates dropped.")
    recall_excerpt_tokens: int = Field(
        default=32, ge=0, le=10_000,
        description="When packing into a budget, a turn longer than this keeps its speaker prefix and the sentences "
        "closest to the query (0 = whole turns).",
    )
    recall_passage_tokens: int = Field(
        default=128, ge=0, le=10_000,
        description="A long turn is also indexed as passage windows of about this many tokens (their own "
        "vectors beside the turn's); recall ranks the turn by its best passage and quotes from it (0 = off). "
        "Changing it re-cuts the windows of new turns only: `recover --rederive` re-embeds the old ones.",
    )
    recall_passage_excerpt_tokens: int = Field(
        default=48, ge=0, le=10_000,
        description="Packing into a budget, a long turn is quoted by this many tokens of its best passage "
        "(0 = recall_excerpt_tokens).",
    )
    recall_passage_min_tokens: int = Field(
        default=160, ge=1, le=100_000, description="Turns longer than this get passage windows."
    )
    recall_mixed_turn_share: float = Field(
        default=0.6, ge=0.0, le=1.0, description="'mixed' granularity: share of the budget for raw turns first."
    )
    recall_index_users: int = Field(
        default=128, ge=1, le=1_000_000,
        description="Users whose recall indexes (turn BM25 + vectors, segment BM25) stay in memory; least recently used go first.",
    )
    recall_snapshot_min_turns: int = Field(
        default=1000, ge=0, le=100_000_000,
        description="A user with at least this many archived turns gets their built recall index kept in "
        "a file (`<data_dir>/recall_snapshots/`, written at write time, again after a tenth more turns), which a "
        "process that starts loads instead of building the index inside the user's first recall. Checked against "
        "the archive before use; erased with the user; not backed up (rebuilt from the archive). 0 = none written.",
    )
    recall_warm_users: int = Field(
        default=8, ge=0, le=1_000_000,
        description="A long-running process (the LangGraph server, `langgraph dev`) builds the recall "
        "indexes of this many recently active users in a background thread as it starts, so their first recall "
        "finds them ready instead of building them (seconds at 10,000 memories). The thread shares the CPU with "
        "live requests while it runs; 0 = off. One-shot CLI commands never warm.",
    )
    recall_granularity: Literal["auto", "turns", "segments", "mixed"] = Field(
        default="auto",
        description=(
            "Item granularity: 'turns' = raw hit turns (adjacent ones merged), 'segments' = one item per segment "
            "(its summary plus its best raw turns; carries all the segment's source ids), 'mixed' = raw turns for "
            "the first recall_mixed_turn_share of the budget, then segments not yet represented, 'auto' = segments "
            "when only a limit is given (chat), turns when packing into a token budget."
        ),
    )
    recall_budgets: dict[str, int] = Field(
        default_factory=lambda: {"greeting": 500, "question": 1500, "request": 3000, "heartbeat": 200, "default": 1024},
        description="A1 context budgets (tokens: CJK chars, else words) by message type.",
    )



class Channel(str, Enum):
    """Recall's candidate channels (nodes/retrieval/channels.py); each ranks turns or segments."""

    TURN_CONTENT = "turn_content"
    TURN_KEYWORD = "turn_keyword"
    FEEDBACK = "feedback"
    SEGMENT_KEYWORD = "segment_keyword"
    MIDTERM = "midterm"
    GRAPH = "graph"
    SPEAKER_DENSE = "speaker_dense"


class Stage(str, Enum):
    """Recall's stages besides the channels: query reading, ranking, re-ranking and what leads the items."""

    KEYWORD_CONTEXT = "keyword_context"
    SPEAKERS = "speakers"
    TEMPORAL = "temporal"
    MMR = "mmr"
    CONTEXT = "context"
    LIFECYCLE = "lifecycle"
    KNOWLEDGE = "knowledge"
    PROCEDURES = "procedures"
    PASSAGES = "passages"
    CROSSLINGUAL = "crosslingual"


CHANNELS: tuple[str, ...] = tuple(c.value for c in Channel)
STAGES: tuple[str, ...] = tuple(s.value for s in Stage)
SWITCHES: tuple[str, ...] = (*CHANNELS, *STAGES)
Switch = Literal[SWITCHES]  # type: ignore[valid-type]


def _switch(name: str) -> bool:
    return Field(default=True, description=f"Setting recall_{name} (LUMINA_RECALL_{name.upper()}).")


class RecallConfig(BaseModel):
    """One boolean per channel and stage; every switch on by default. Unknown names fail validation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn_content: bool = _switch("turn_content")
    turn_keyword: bool = _switch("turn_keyword")
    feedback: bool = _switch("feedback")
    segment_keyword: bool = _switch("segment_keyword")
    midterm: bool = _switch("midterm")
    graph: bool = _switch("graph")
    speaker_dense: bool = _switch("speaker_dense")
    keyword_context: bool = Field(
        default=True, description="Setting recall_keyword_context, a weight: on when above 0 (LUMINA_RECALL_KEYWORD_CONTEXT)."
    )
    speakers: bool = _switch("speakers")
    temporal: bool = _switch("temporal")
    mmr: bool = _switch("mmr")
    context: bool = _switch("context")
    lifecycle: bool = _switch("lifecycle")
    knowledge: bool = _switch("knowledge")
    procedures: bool = _switch("procedures")
    passages: bool = _switch("passages")
    crosslingual: bool = _switch("crosslingual")

    @classmethod
    def from_settings(cls, settings: RecallSettings) -> RecallConfig:
        """The switches as the settings set them (``recall_keyword_context`` is a weight: 0 is off)."""
        return cls(**{name: bool(getattr(settings, f"recall_{name}")) for name in SWITCHES})

    @classmethod
    def preset(cls, name: str) -> RecallConfig:
        """A named preset (``PRESETS``); an unknown name is a ValueError listing them."""
        try:
            return PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown recall preset {name!r}; known: {', '.join(PRESETS)}") from None

    def without(self, names: str | Iterable[str]) -> RecallConfig:
        """This configuration with ``names`` switched off; a name that is no switch fails validation naming it."""
        names = (names,) if isinstance(names, str) else tuple(names)
        return type(self).model_validate({**self.model_dump(), **dict.fromkeys(map(str, _values(names)), False)})

    @classmethod
    def only(cls, names: Iterable[str]) -> RecallConfig:
        """Every switch off but ``names`` (which must be switches)."""
        return cls.model_validate({**dict.fromkeys(SWITCHES, False), **dict.fromkeys(_values(names), True)})

    def switches(self) -> dict[str, bool]:
        """Switch name -> on, in ``SWITCHES`` order (a fresh dict the caller may change)."""
        return self.model_dump()


def _values(names: Iterable[str | Enum]) -> list[str]:
    return [n.value if isinstance(n, Enum) else n for n in names]


PRESETS: dict[str, RecallConfig] = {
    "default": RecallConfig(),
    "episodes": RecallConfig(knowledge=False, procedures=False),
    "plain": RecallConfig.only([Channel.TURN_CONTENT, Channel.TURN_KEYWORD]),
}
"""Named configurations: ``default`` every part (the settings' defaults); ``episodes`` what was said, no facts
or procedures leading (the search tool's episode kind); ``plain`` the hybrid baseline: dense search (the query's
content view) and BM25 search over turns fused by reciprocal rank, every other switch off."""
