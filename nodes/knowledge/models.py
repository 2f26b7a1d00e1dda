"""What a knowledge item is (A4 semantic memory): one subject / attribute / value said by the user.

An item never loses its history: a newer fact ends it (``valid_to`` and ``superseded_by``), a restatement is
merged into it, and both stay stored. ``status`` is the item's place in that history; ``polarity`` is what the
sentence claimed ("negative": the user said it is no longer so, e.g. 「もう好きじゃない」).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from lumina_memory.stores.ids import NAMESPACE
from lumina_memory.stores.settings_knowledge import ATTRIBUTES, Attribute  # the vocabulary settings validate against

Polarity = Literal["positive", "negative"]
Status = Literal["current", "superseded", "merged", "coexisting"]
Method = Literal["offline", "llm"]
USER = "user"
"""The subject of facts about the user; any other subject is a named person, pet or relation noun."""


class SourceTurn(TypedDict, total=False):
    """A turn as the extractor reads it (the shape of ``lumina_memory.graphs.state.TurnState`` and ``lumina_memory.stores.models.Turn``)."""

    turn_id: str
    source_id: str
    speaker: str
    text: str
    ts: float


def as_source_turn(turn: Mapping[str, Any] | Any) -> SourceTurn:
    """A TurnState dict or a stored ``Turn`` model, read the same way."""
    get = turn.get if isinstance(turn, Mapping) else (lambda key, default=None: getattr(turn, key, default))
    turn_id = str(get("turn_id", "") or "")
    return SourceTurn(
        turn_id=turn_id, source_id=str(get("source_id", "") or turn_id), speaker=str(get("speaker", "") or ""),
        text=str(get("text", "") or ""), ts=float(get("ts", 0.0) or 0.0),
    )


class KnowledgeItem(BaseModel):
    """One fact with its sources and its place in the fact's history."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = Field(description="Deterministic: the same sentence extracted twice gets the same id.")
    subject: str = Field(description="'user', or the name (or relation noun) of a person or pet in their life.")
    attribute: Attribute
    value: str = Field(description="As the user said it (surface form; a verb in its dictionary form).")
    value_key: str = Field(description="Normalised value for matching: Sudachi normalised forms, English lemmas.")
    polarity: Polarity = "positive"
    detail: str = Field(default="", description="Relation or species (妹, cat), how often (毎朝), or the kind.")
    context: str = Field(default="", description="Where or when the fact holds (週末は, at work); '' = always.")
    category: str = Field(default="", description="The value's kind from the lexicon (drink, food), if known.")
    event_date: date | None = Field(default=None, description="A plan's or event's day, resolved against said_at.")
    when_text: str = Field(default="", description="The date expression as said (12月5日, next Friday).")
    text: str = Field(description="The sentence the item was read from.")
    source_turn_ids: tuple[str, ...]
    source_ids: tuple[str, ...] = ()
    said_at: float = Field(description="Epoch seconds of the (first) source turn.")
    valid_from: float
    valid_to: float | None = None
    superseded_by: str | None = None
    status: Status = "current"
    note: str = Field(default="", description="Why the item is coexisting, merged or superseded.")
    confidence: float = Field(default=0.0, ge=0, le=1, description="0 until validated (ground.py).")
    method: Method = "offline"
    pattern: str = Field(default="", description="The extractor's pattern family (coverage table).")
    derived_from: tuple[str, ...] = Field(default=(), description="Facts this one rests on (F6; dependents.py).")
    contradicts: tuple[str, ...] = Field(default=(), description="Facts it contradicted when said (which won: "
                                                                  "their superseded_by).")

    @property
    def is_current(self) -> bool:
        return self.status in ("current", "coexisting") and self.valid_to is None

    @property
    def slot(self) -> tuple[str, str]:
        """What two items must share to be about the same value: the value, and a plan's day."""
        return self.value_key, self.event_date.isoformat() if self.event_date else ""


def knowledge_item_id(first_turn_id: str, subject: str, attribute: str, value_key: str, polarity: str) -> str:
    """uuid5 of the item's first source turn and its claim; turn ids are already per user, so this is too."""
    return str(uuid.uuid5(NAMESPACE, f"knowledge|{first_turn_id}|{subject}|{attribute}|{value_key}|{polarity}"))
