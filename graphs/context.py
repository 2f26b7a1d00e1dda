"""Per-run settings (LangGraph ``context_schema``); Studio shows these as the run's configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lumina_memory.nodes.characters import CharacterId

Purpose = Literal["talking", "social", "planning", "reflection", "goals", "question"]
MessageType = Literal["greeting", "question", "request", "heartbeat", "default"]


@dataclass(kw_only=True)
class RunContext:
    user_id: str
    """Whose memory this run reads and writes. Required; letters, digits and _ . : @ - only."""
    character: CharacterId | None = None
    """Who answers; unset: the character the user names, else the one who has spoken least."""
    respond: bool = True
    """Produce a character's reply to user turns (off when replaying a transcript)."""
    purpose: Purpose = "talking"
    """Retrieval weight preset (P6)."""
    message_type: MessageType | None = None
    """Priming budget by message type (A1: greeting 500, question 1,500, request 3,000, heartbeat 200 tokens);
    unset: detected from the message (nodes.priming.message_type)."""
    priming_preset: Literal["default", "precise", "exploratory", "hierarchical"] = "default"
    """Priming preset (nodes.priming.presets): S2's similarity threshold 0.7 / 0.8 / 0.6, or S1's shape."""
    similarity_threshold: float | None = None
    """Override of the boundary similarity threshold (default 0.75)."""
    idle_seconds: float | None = None
    """Override of the idle gap that closes a segment (default 600 s)."""
    max_turns: int | None = None
    """Override of the segment turn cap (default 12)."""
