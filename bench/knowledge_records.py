"""The records of the fact-update stories (``bench.knowledge_data``): a story's sessions and turns, and its gold —
current and superseded facts, accumulating facts, distractors, questions. The attribute vocabulary is documented
in ``bench/knowledge_data.py``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ONE, MANY = "one", "many"  # one value at a time (superseded by a new one) / values that accumulate
ATTRIBUTES: dict[str, str] = {
    "name": ONE, "from": ONE, "lives_in": ONE, "works_at": ONE, "drink": ONE, "food": ONE, "film": ONE,
    "pet_age": ONE, "likes": MANY, "dislikes": MANY, "visited": MANY, "habit": MANY, "pet": MANY, "sibling": MANY,
    "plan": MANY,
}
CHARACTERS = ("lumina", "clarisse", "nox")
LANGUAGES = ("ja", "en")
FORMAT = "lumina-knowledge-stories"

Language = Literal["ja", "en"]
Character = Literal["lumina", "clarisse", "nox"]
Speaker = Literal["user", "lumina", "clarisse", "nox"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoryTurn(_Record):
    """One chat message, by the user or by the story's character."""

    turn_id: str = Field(description="D<session>:<n>, both from 1, as LoCoMo's dia_id.")
    speaker: Speaker
    text: str
    at: datetime = Field(description="The session's time + 30 s per earlier turn of the session (UTC).")


class StorySession(_Record):
    number: int
    at: datetime
    turns: list[StoryTurn]


class Fact(_Record):
    """A fact about the user, true from ``valid_from`` (the first turn stating it) to the end of the story."""

    subject: str = "user"
    attribute: str
    value: str = Field(description="The string said in every evidence turn.")
    aliases: list[str] = Field(default_factory=list, description="Other surface forms of the same value.")
    evidence: list[str] = Field(description="Turn ids stating it, first statement first (several after a merge).")
    valid_from: datetime


class SupersededFact(Fact):
    """A fact that stopped being true: replaced by a new value (supersede) or taken back (negate)."""

    valid_to: datetime = Field(description="Time of the turn that ended it.")
    ended_by: str = Field(description="Turn id that ended it.")
    superseded_by: str | None = Field(description="The successor's value; None when negated.")
    how: Literal["supersede", "negate"]


class Distractor(_Record):
    """A value said in a turn that must NOT become a fact about the user."""

    subject: str = Field(description="Who it is really about: sister, friend, a character id, user (not asserted)…")
    attribute: str
    value: str
    turn_id: str
    kind: Literal["other_person", "hypothetical", "question", "quote", "joke", "negated", "character"]


class StoryQuestion(_Record):
    """A question about the user with its answer from the gold (「いいえ」/"no" for a negated value asked "still?")."""

    question: str
    answer: str
    tense: Literal["current", "past"]
    attribute: str
    evidence: list[str]
    category: int = Field(description="LoCoMo category: 1 multi-hop (several evidence turns), 2 temporal (past), 4 single-hop.")


class Story(_Record):
    """One user's sessions with one character, and the gold at the story's end."""

    story_id: str = Field(description="<language>-<index>, e.g. ja-007.")
    language: Language
    character: Character
    character_name: str
    user_name: str
    scenarios: list[str] = Field(description="What the story exercises: supersede:drink, accumulate:likes, …")
    sessions: list[StorySession]
    current_facts: list[Fact]
    superseded_facts: list[SupersededFact]
    accumulating_facts: list[Fact] = Field(description="The current facts of 'many' attributes: must stay current.")
    distractors: list[Distractor]
    questions: list[StoryQuestion]

    def turns(self) -> list[StoryTurn]:
        return [t for s in self.sessions for t in s.turns]

    def turn(self, turn_id: str) -> StoryTurn:
        for t in self.turns():
            if t.turn_id == turn_id:
                return t
        raise KeyError(f"{self.story_id} has no turn {turn_id}")


class StorySet(_Record):
    """What a file holds."""

    format: Literal["lumina-knowledge-stories"] = FORMAT
    version: int = 1
    seed: int
    stories: list[Story]
