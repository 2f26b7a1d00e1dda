"""The records of agents' memory (PIANO, issue 48), the same for every backend.

An *agent* is a simulated character of a run (a civilisation simulation of up to a thousand of them), beside the
chat's users. Its memory has three layers: a working-memory document (P1), short-term events (P2) and long-term
records (P4, P5); agents of one run may also share memories (P7). Times are UTC epoch seconds of the run's clock
(a simulation may run faster than the wall clock), so every rate and decay is in the run's hours.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from . import ids

EventType = Literal["conversation", "action", "observation", "reflection"]
LtmType = Literal["episodic", "semantic", "procedural"]
Scope = Literal["global", "group", "bilateral"]
Layer = Literal["wm", "stm", "ltm"]
EVENT_TYPES: tuple[str, ...] = ("conversation", "action", "observation", "reflection")
LTM_TYPES: tuple[str, ...] = ("episodic", "semantic", "procedural")
SCOPES: tuple[str, ...] = ("global", "group", "bilateral")
LAYERS: tuple[str, ...] = ("wm", "stm", "ltm")
DEFAULT_RUN = "default"


def agent_id(value: object, field: str = "agent_id") -> str:
    """An agent id, validated as user ids are (stores.ids.validate_id): hostile ids never reach a store."""
    return ids.validate_id(value, field)


class AgentEvent(BaseModel):
    """One short-term event (the notes' STM schema). ``importance`` is the rule-based score (P3) when stored."""

    model_config = ConfigDict(extra="forbid")

    event_id: str
    agent_id: str
    time: float = Field(description="UTC epoch seconds of the run's clock.")
    type: EventType
    content: str
    participants: list[str] = Field(default_factory=list)
    location: dict[str, Any] | None = None
    importance: float = Field(default=0.0, ge=0, le=1)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("event_id", "agent_id")
    @classmethod
    def _ids(cls, v: str, info) -> str:
        return ids.validate_id(v, info.field_name)

    @field_validator("participants")
    @classmethod
    def _participants(cls, v: list[str]) -> list[str]:
        return [ids.validate_id(p, "participants") for p in v]


class LtmRecord(BaseModel):
    """One long-term record (the notes' LTM schema); ``source_events`` are the STM events it was made from."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    agent_id: str
    created_at: float
    last_accessed: float | None = None
    access_count: int = Field(default=0, ge=0)
    type: LtmType = "episodic"
    content: str
    summary: str = ""
    importance: float = Field(default=0.0, ge=0, le=1)
    tags: list[str] = Field(default_factory=list)
    source_events: list[str] = Field(default_factory=list)
    decay_factor: float = 1.0

    @field_validator("memory_id", "agent_id")
    @classmethod
    def _ids(cls, v: str, info) -> str:
        return ids.validate_id(v, info.field_name)


class SharedMemory(BaseModel):
    """A memory agents of one run share (P7): global (every agent of the run), group (the members of ``group_id``
    when read: membership changes apply), bilateral (exactly the two agents of ``visible_to``). ``author`` and
    ``source_events`` are its provenance; hops of it told from one agent to another are kept beside it."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    run_id: str = DEFAULT_RUN
    author: str
    scope: Scope = "global"
    group_id: str | None = None
    visible_to: list[str] = Field(default_factory=list)
    created_at: float
    content: str
    importance: float = Field(default=0.5, ge=0, le=1)
    tags: list[str] = Field(default_factory=list)
    source_events: list[str] = Field(default_factory=list)


class TellHop(BaseModel):
    """One telling of a memory: ``from_agent`` told ``to_agent`` at ``time`` (in event ``event_id`` if known)."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    from_agent: str
    to_agent: str
    time: float
    event_id: str | None = None


class Retrieved(BaseModel):
    """One retrieval result (P6): the layer it came from, its parts of the score and the events it stands for."""

    model_config = ConfigDict(extra="forbid")

    layer: Literal["wm", "stm", "ltm", "shared"]
    id: str
    content: str
    score: float
    relevance: float = 0.0
    recency: float = 0.0
    importance: float = 0.0
    time: float | None = None
    type: str | None = None
    source_events: list[str] = Field(default_factory=list)
    author: str | None = None
