"""The short-term memory is this state: the open segment's turns live here until it closes (L1)."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.channels import EphemeralValue
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic (and so Studio's schemas) needs it on Python < 3.12


class TurnState(TypedDict):
    """One utterance as kept in short-term memory."""

    turn_id: str
    """Deterministic uuid5 of (user, source_id): the same message replayed gets the same id."""
    source_id: str
    """The caller's id for the turn (LoCoMo dia_id, a chat message id, ...)."""
    speaker: str
    """user, lumina, clarisse or nox."""
    text: str
    ts: float
    """Message time in epoch seconds, on the conversation's own clock."""


class PendingSegment(TypedDict, total=False):
    """A closed segment on its way down the tiers. It stays in state until every tier has it, so a
    crash between two writes resumes from the checkpoint and the idempotent writes complete it."""

    segment_id: str
    turns: list[TurnState]
    domain: str
    close_reason: str
    record: dict[str, Any]
    """The SegmentRecord built by flush_to_redis (summary, keywords, embedding, importance)."""
    promotion: str
    """'promoted' or why the segment stays out of long-term memory, decided when it is scored."""
    stages: list[str]
    """Writes already done: redis, duckdb, qdrant, graph."""


class TurnInput(TypedDict, total=False):
    speaker: str
    text: str
    ts: float | str
    """Epoch seconds or ISO-8601; omitted means now."""
    source_id: str


class PrimedSectionState(TypedDict):
    name: str
    label: str
    budget: int
    tokens: int
    items: list[dict[str, Any]]
    """Each with ``_source`` (the pointer read_memory opens), origin, kind, text, tokens, date, similarity."""


class PrimedState(TypedDict):
    """lumina_memory.nodes.priming.Primed as state: the memory the character answers with, in labelled sections (A1)."""

    message_type: str
    budget: int
    preset: str
    sections: list[PrimedSectionState]
    text: str
    """The sections rendered for a system prompt, within ``budget`` tokens."""
    tokens: int
    timings: dict[str, float]


class InputState(TypedDict, total=False):
    """What a caller sends: a chat message, one transcript turn or a batch of them, or a request to
    close the segment."""

    messages: Annotated[list[AnyMessage], add_messages]
    """Chat input (Studio): the last human message becomes a user turn."""
    # Ephemeral: a run's input lives for its first step only. A run that fails validation would
    # otherwise leave its bad input in the checkpoint, and the thread's next run would trip on it.
    turn: Annotated[TurnInput | None, EphemeralValue(TurnInput | None)]
    """A transcript turn with its own speaker and timestamp (replay, ingest)."""
    transcript: Annotated[list[TurnInput] | None, EphemeralValue(list[TurnInput] | None)]
    """Transcript turns ingested in order in one run (import, replay): the same memories as sending
    them one `turn` at a time, with one graph run and one batched write per tier."""
    flush: bool
    """Close the open segment now and send it down the tiers."""


class MemoryState(InputState, total=False):
    owner: str
    """The user_id of the thread's first run: a thread belongs to one user, other users' runs are refused."""
    incoming: TurnState | None
    """The validated turn of this run, until detect_boundary places it."""
    arrivals: list[TurnState] | None
    """The validated, not yet seen turns of a `transcript` batch, until detect_boundary places them."""
    turns: list[TurnState]
    """The open segment's turns (at most short_term_max_turns)."""
    segment_id: str
    domain: str
    """Topic domain of the open segment, "" when unknown."""
    character_turns: dict[str, int]
    """Turns per character in the open segment: {lumina, clarisse, nox}."""
    started_at: float
    last_update: float
    pending: list[PendingSegment]
    boundary: dict[str, Any]
    """Why the last turn did or did not close a segment (each rule's verdict)."""
    recalled: list[dict[str, Any]]
    """Items retrieve_context found for the reply, each with its tiers and source turn ids."""
    primed: PrimedState | None
    """The primed context of this user turn (nodes.priming), replaced on each user turn."""
    responder: str
    """Which character answers this turn."""
    current_emotion: dict[str, Any] | None
    """F7: the emotion carried from the last memory recalled (nodes.retrieval.resonance.CurrentEmotion), None at a
    session's start."""
    reply: str
    reply_path: str
    """'llm' or 'offline' — which responder produced the reply."""


class OutputState(TypedDict, total=False):
    messages: list[AnyMessage]
    reply: str
    responder: str
    recalled: list[dict[str, Any]]
    boundary: dict[str, Any]
    segment_id: str
