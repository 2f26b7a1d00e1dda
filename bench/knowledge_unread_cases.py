"""The cases the unread-update detector (``nodes.knowledge.unread``) is judged on: a user turn beside one current
fact of the same user, labelled update (the turn ends that fact) or not.

Two sources, both with a gold history of facts, so the cases do not depend on what the extractor read:

- the held-out timelines (``bench.knowledge_independent``: everyday wording, written without the rules). A user
  fact of a single-valued attribute is known from the first user turn that names its value; an ended fact is ended
  by the first later user turn that names its successor. Each later user turn beside each fact still current then
  is one case: the turn that ends a fact is an update case; the turns beside a fact that stays current to the end
  are non-update cases (the turns between an ended fact and its successor are left out: the gold does not say
  whether one of them already ended it, as "I quit" or "we split up" do).
- the template stories (``bench.knowledge_story``: LoCoMo-style chat with small talk, questions, other people's
  news and quotes as distractors), where the gold says which turn ended which fact.

Facts are the user's own (subject ``user``), of attributes holding one value at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SINGLE = frozenset(("drink", "food", "film", "name", "lives_in", "from", "works_at", "job", "partner", "age"))


@dataclass(frozen=True)
class Case:
    unit: str  # the timeline or story the turn belongs to (the unit of resampling)
    turn: str
    attribute: str
    value: str
    update: bool


def timeline_cases(timeline: Mapping[str, Any]) -> list[Case]:
    user = [t["text"] for t in timeline["turns"] if t["speaker"] == "user"]
    facts = [f for f in timeline["expect"] if f["subject"] == "user" and f["attribute"] in SINGLE]

    def first(value: str, after: int = -1) -> int | None:
        return next((i for i, text in enumerate(user) if i > after and value in text), None)

    spans: list[tuple[Mapping[str, Any], int, int | None]] = []  # fact, turn said, turn that ended it
    for fact in facts:
        said = first(fact["value"])
        if said is None:
            continue
        ended = None
        if not fact["current"]:
            successors = [first(g["value"], said) for g in facts
                          if g["current"] and g["attribute"] == fact["attribute"]]
            ended = min((s for s in successors if s is not None), default=None)
            if ended is None:
                continue  # no later turn names what replaced it: its end is not placed in time
        spans.append((fact, said, ended))
    out = []
    for fact, said, ended in spans:
        if ended is not None:  # the gold does not say when, before its successor is named, the fact ended
            out.append(Case(timeline["id"], user[ended], fact["attribute"], fact["value"], True))
            continue
        for i in range(said + 1, len(user)):
            out.append(Case(timeline["id"], user[i], fact["attribute"], fact["value"], False))
    return out


def story_cases(story) -> list[Case]:
    """``story``: a ``bench.knowledge_records.Story``."""
    facts = [*story.current_facts, *story.superseded_facts]
    out = []
    for turn in story.turns():
        if turn.speaker != "user":
            continue
        for fact in facts:
            if fact.subject != "user" or fact.attribute not in SINGLE or turn.at <= fact.valid_from:
                continue
            ended_by = getattr(fact, "ended_by", None)
            if ended_by is not None and turn.at > fact.valid_to:
                continue
            out.append(Case(story.story_id, turn.text, fact.attribute, fact.value, turn.turn_id == ended_by))
    return out


def heldout_cases(language: str) -> dict[str, list[Case]]:
    """Timeline id → its cases."""
    from bench.knowledge_independent import load

    return {t["id"]: timeline_cases(t) for t in load(language)}


def template_cases(language: str, per_language: int, half: str, seed: int) -> dict[str, list[Case]]:
    from bench.knowledge_story import generate

    return {s.story_id: story_cases(s) for s in generate(per_language, seed, (language,), half=half)}


def even(unit: str) -> bool:
    """Timelines with an even number (en-02, ja-14 …) are the tuning half."""
    return int(unit.rsplit("-", 1)[1]) % 2 == 0


def split(cases: Mapping[str, Sequence[Case]], tuning: bool) -> dict[str, list[Case]]:
    return {u: list(c) for u, c in cases.items() if even(u) == tuning}


def flatten(groups: Iterable[Sequence[Case]]) -> list[Case]:
    return [c for g in groups for c in g]
