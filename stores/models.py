"""Records that cross tier boundaries. Stores persist these; nodes build them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Turn(BaseModel):
    """One utterance, by the user or one of the characters."""

    model_config = ConfigDict(frozen=True)

    turn_id: str = Field(description="Deterministic uuid5 of user and source id.")
    source_id: str = Field(description="Caller's id for the turn (e.g. LoCoMo dia_id); defaults to turn_id.")
    user_id: str
    speaker: str = Field(description="user, lumina, clarisse or nox.")
    text: str
    ts: float = Field(description="Message time, epoch seconds (the conversation's own clock).")
    segment_id: str = ""


class SegmentRecord(BaseModel):
    """A closed topic segment (the design notes' "thread") as stored in the mid-term tier and below."""

    segment_id: str
    user_id: str
    turn_ids: list[str]
    source_ids: list[str] = Field(description="Caller's ids of the turns this segment was built from.")
    characters: list[str] = Field(default_factory=list, description="Characters who spoke in it.")
    start_ts: float
    end_ts: float
    summary: str
    keywords: list[str] = Field(default_factory=list)
    embedding: list[float] = Field(default_factory=list)
    importance: float = 0.0
    valence: float = 0.0
    domain: str = ""
    close_reason: str = ""
    text: str = Field(default="", description="The segment's turns as 'speaker: text' lines.")
    summary_method: str = Field(default="", description="Which path made the summary (offline or llm).")

    def payload(self) -> dict[str, Any]:
        """What the vector tier stores beside the vector (everything but the vector itself)."""
        return self.model_dump(exclude={"embedding"})


class VectorHit(BaseModel):
    point_id: str
    score: float
    payload: dict[str, Any]


class GraphCounts(BaseModel):
    nodes: dict[str, int]
    edges: dict[str, int]
