"""What a procedure is (A8 procedural memory): how to do something, learnt from a conversation, with outcomes.

A procedure is distilled from one procedural episode (a segment whose turns teach a recipe, a how-to, ordered
steps) into a ``ProcedureDraft``: a title (the task: チーズケーキ, pancakes), a description (the phrase that
named it: 「チーズケーキのレシピ」, "how to make pancakes"), and its steps — the step sentences themselves, in
order (extractive: nothing the conversation did not say). Stored, a draft becomes a version of a procedure
(``lumina_memory.stores.procedures_duckdb``): version 1 with no outcomes and the notes' initial confidence 0.4; the
outcomes the user reports move ``confidence = s / max(1, s + f)``; an episode that contradicts it makes a
new version (the old kept, superseded) with counts reset and confidence 0.5.
"""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field

from lumina_memory.stores.ids import NAMESPACE
from lumina_memory.stores.settings_procedures import ProcedureParams

__all__ = ["ProcedureDraft", "ProcedureParams", "Step", "confidence_of", "procedure_id"]


def confidence_of(success_count: int, failure_count: int) -> float:
    """The notes' formula, once outcomes exist."""
    return success_count / max(1, success_count + failure_count)


class Step(BaseModel):
    """One step sentence and the turn it was said in."""

    model_config = ConfigDict(frozen=True)

    text: str
    turn_id: str
    source_id: str
    speaker: str


class ProcedureDraft(BaseModel):
    """A procedure as read from one episode's turns, before it meets the stored ones."""

    model_config = ConfigDict(frozen=True)

    title: str = Field(description="The task as said (チーズケーキ, pancakes); '' when nothing named it.")
    task_key: str = Field(description="The title normalised (Sudachi normalised forms, English lemmas): two "
                                      "episodes about the same task share it.")
    description: str = Field(description="The phrase that named the procedure, else its first step.")
    steps: tuple[Step, ...]
    keywords: tuple[str, ...] = Field(description="Trigger words: the title's, then the steps' frequent nouns.")
    language: str = Field(description="'ja' or 'en'.")
    source_turn_ids: tuple[str, ...]
    source_ids: tuple[str, ...]
    said_at: float = Field(description="Epoch seconds of the first step's turn.")

    @property
    def step_texts(self) -> list[str]:
        return [s.text for s in self.steps]

    @property
    def text(self) -> str:
        """What is embedded (near-duplicates, vector matching): the description and the steps."""
        return "\n".join((self.description, *self.step_texts))


def procedure_id(first_turn_id: str, task_key: str) -> str:
    """uuid5 of the draft's first source turn and its task; turn ids are already per user, so this is too."""
    return str(uuid.uuid5(NAMESPACE, f"procedure|{first_turn_id}|{task_key}"))
