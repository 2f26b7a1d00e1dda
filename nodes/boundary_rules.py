"""L2 segment boundary rules as one pure function; every rule's verdict is recorded."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Sequence


@dataclass(frozen=True)
class BoundaryInput:
    open_turns: int
    """Turns in the open segment before this one."""
    idle_seconds: float
    """Gap between this turn and the segment's last turn, on message timestamps."""
    similarity: float | None
    """Similarity of this turn's context to the open segment; None when not judged."""
    text: str
    speaker: str
    domain_before: str
    domain_now: str


@dataclass(frozen=True)
class BoundaryRules:
    similarity_threshold: float = 0.75
    similarity_min_turns: int = 3
    idle_seconds: float = 600.0
    max_turns: int = 12
    shift_phrases: Sequence[str] = ()


@dataclass
class BoundaryDecision:
    close: bool
    reason: str
    """First rule that fired, or '' when the segment stays open."""
    verdicts: dict[str, bool] = field(default_factory=dict)
    similarity: float | None = None
    idle_seconds: float = 0.0

    def as_dict(self) -> dict:
        # Flat fields: a shallow copy is the same dict as dataclasses.asdict, without its recursive
        # deep copy (a tenth of the boundary step's time, once per ingested turn).
        return {"close": self.close, "reason": self.reason, "verdicts": dict(self.verdicts),
                "similarity": self.similarity, "idle_seconds": self.idle_seconds}


def opens_with_shift_phrase(text: str, phrases: Sequence[str]) -> bool:
    """A shift phrase counts near the start of the message ("そういえば、…", "Anyway, …"), not
    anywhere: "by the way" deep inside a sentence rarely changes the topic."""
    head = unicodedata.normalize("NFKC", text).strip().lower()[:24]
    return any(p.lower() in head for p in phrases)


def decide(inp: BoundaryInput, rules: BoundaryRules) -> BoundaryDecision:
    if inp.open_turns == 0:
        return BoundaryDecision(False, "", {"first_turn": True})
    verdicts = {
        "idle": inp.idle_seconds > rules.idle_seconds,
        "turn_cap": inp.open_turns >= rules.max_turns,
        "shift_phrase": opens_with_shift_phrase(inp.text, rules.shift_phrases),
        "domain_change": bool(inp.domain_before and inp.domain_now and inp.domain_before != inp.domain_now),
        "low_similarity": (
            inp.similarity is not None
            and inp.open_turns >= rules.similarity_min_turns
            and inp.similarity < rules.similarity_threshold
        ),
    }
    reason = next((name for name, fired in verdicts.items() if fired), "")
    return BoundaryDecision(bool(reason), reason, verdicts, inp.similarity, inp.idle_seconds)
