"""What priming returns: labelled sections of items, each with the pointer read_memory opens."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Origin = Literal["profile", "recent", "semantic", "summary", "knowledge", "procedure", "kb", "activity"]


class PrimedItem(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    source: str = Field(alias="_source")
    """The pointer read_memory opens (ep:, seg:, fact:, proc:, kb:; nodes.tools.pointers), whole."""
    shown: str | None = None
    """The pointer as the primed text shows it: short where the id is long (read_memory opens it too)."""
    origin: Origin
    """S1's layer: where the item came from (recent, semantic, summary …)."""
    kind: str
    text: str
    tokens: int
    date: str | None = None
    similarity: float | None = None
    """Cosine of the item and the message, where measured (presets.py)."""
    source_ids: list[str] = Field(default_factory=list)
    """Every message id behind the item (a summary's: all its segment's)."""
    quoted_source_ids: list[str] = Field(default_factory=list)
    """The message ids whose text is in the item."""
    whole_source_ids: list[str] = Field(default_factory=list)
    """Those of them quoted whole (not an excerpt, nor one part of a chunked message)."""
    segment_id: str | None = None
    """For whole turns of a stored segment: the segment whose time header (``shown``) stands over the item's line
    and its other lines of that day (nodes.priming.assemble)."""
    ts: float | None = None
    """When the item's first quoted message was said (an excerpt's: its long message's); its group's time header
    is its first line's. None for an item shown with its own pointer (a fact, a summary)."""


class Section(BaseModel):
    name: str
    label: str
    budget: int
    """The budget the section was packed into (for episodes: its own plus what the others left)."""
    tokens: int
    items: list[PrimedItem] = Field(default_factory=list)


class Primed(BaseModel):
    message_type: str
    budget: int
    preset: str
    sections: list[Section]
    text: str
    """The labelled sections, ready for a system prompt; within ``budget`` tokens with its labels."""
    tokens: int
    timings: dict[str, float] = Field(default_factory=dict)
    """Milliseconds: each channel's own wall time, and ``total``."""

    def section(self, name: str) -> Section:
        return next(s for s in self.sections if s.name == name)

    def items(self) -> list[PrimedItem]:
        return [i for s in self.sections for i in s.items]

    def covered_source_ids(self) -> set[str]:
        """The message ids whose text the primed context quotes (what an evidence metric may credit)."""
        return {sid for i in self.items() for sid in (i.quoted_source_ids or ())}

    def state(self) -> dict[str, Any]:
        return self.model_dump()
