"""Importance by kind of memory (P3), beside L8's importance of episodes (nodes.text.importance).

The notes' rule-based scores, with their event types mapped onto our kinds of memory:

| notes' event | our kind | base | modifiers |
|---|---|---|---|
| conversation | episode | 0.5 | +0.2 a request or proposal, +0.1 emotional (intensity > 50 of 100) |
| action | procedure | 0.3 | +0.3 goal-related (the user asked how), +0.2 it failed |
| observation | knowledge item | 0.2 | +0.3 a new person or pet in their life, +0.4 a danger or health matter |
| reflection | semantic memory | 0.6 | (the notes: higher-order results are always important) |

Capped at 1.0. The notes re-rate with a model (1–10) at consolidation; with no model, the rule stands.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["episode", "procedure", "knowledge", "semantic"]

BASE: dict[str, float] = {"episode": 0.5, "procedure": 0.3, "knowledge": 0.2, "semantic": 0.6}
MODIFIERS: dict[str, dict[str, float]] = {
    "episode": {"request": 0.2, "emotional": 0.1},
    "procedure": {"goal": 0.3, "failure": 0.2},
    "knowledge": {"new_person": 0.3, "danger": 0.4},
    "semantic": {},
}
PEOPLE_AND_PETS = frozenset({"sibling", "parent", "child", "partner", "friend", "pet"})
DANGER_WORDS = ("病院", "病気", "入院", "手術", "アレルギー", "怪我", "事故", "hospital", "allergy", "allergic",
                "surgery", "illness", "injury", "accident")


def importance(kind: Kind, **flags: bool) -> float:
    """The notes' score for ``kind`` with the modifiers whose flag is true (unknown flags are an error)."""
    if kind not in BASE:
        raise ValueError(f"kind must be one of {sorted(BASE)}, got {kind!r}")
    unknown = set(flags) - set(MODIFIERS[kind])
    if unknown:
        raise ValueError(f"{kind} has no modifiers {sorted(unknown)}; it has {sorted(MODIFIERS[kind])}")
    return round(min(1.0, BASE[kind] + sum(MODIFIERS[kind][f] for f, on in flags.items() if on)), 4)


def knowledge_importance(attribute: str, value: str, text: str) -> float:
    """An item about a new person or pet, or about health and danger, matters more than a passing taste."""
    lowered = f"{value} {text}".lower()
    return importance("knowledge", new_person=attribute in PEOPLE_AND_PETS,
                      danger=any(w in lowered for w in DANGER_WORDS))
