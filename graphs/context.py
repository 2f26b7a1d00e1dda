"""Per-run settings (LangGraph ``context_schema``); Studio shows these as the run's configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Purpose = Literal["talking", "social", "planning", "reflection", "goals", "question"]


@dataclass(kw_only=True)
class RunContext:
    user_id: str
    """Whose memory this run reads and writes. Required; letters, digits and _ . : @ - only."""
    character: Literal["lumina", "clarisse", "nox"] | None = None
    """Who answers; unset: the character the user names, else the one who has spoken least."""
    respond: bool = True
    """Produce a character's reply to user turns (off when replaying a transcript)."""
    purpose: Purpose = "talking"
    """Retrieval weight preset (P6)."""
    similarity_threshold: float | None = None
    """Override of the boundary similarity threshold (default 0.75)."""
    idle_seconds: float | None = None
    """Override of the idle gap that closes a segment (default 600 s)."""
    max_turns: int | None = None
    """Override of the segment turn cap (default 12)."""
