"""Agents' memory (PIANO, issue 48; design note P1-P8): env ``LUMINA_AGENTS__<NAME>``.

The defaults are the note's values; every one is a setting.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

NOTE_MODULE_WEIGHTS: dict[str, tuple[float, float, float]] = {
    # (alpha relevance, beta recency, gamma importance): the note's table 4.6.3, also the chat's recall purposes
    "default": (0.5, 0.3, 0.2),
    "talking": (0.3, 0.5, 0.2),
    "social": (0.4, 0.4, 0.2),
    "goals": (0.6, 0.1, 0.3),
    "planning": (0.5, 0.3, 0.2),
    "reflection": (0.3, 0.2, 0.5),
    "cc": (0.4, 0.4, 0.2),
}
_MODULE_TOP_K: dict[str, int] = {"default": 10, "social": 10, "goals": 10, "planning": 15, "reflection": 20,
                                 "talking": 5, "cc": 10}
_MODULE_LAYERS: dict[str, tuple[str, ...]] = {
    "default": ("stm", "ltm"), "social": ("stm", "ltm"), "goals": ("ltm",), "planning": ("stm", "ltm"),
    "reflection": ("ltm",), "talking": ("stm",), "cc": ("wm", "stm"),
}


class AgentParams(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # P1 working memory and the prompt
    prompt_tokens: int = Field(default=4096, ge=256, description="The cognitive controller's whole prompt budget.")
    prompt_shares: dict[str, float] = Field(
        default_factory=lambda: {"system": 0.10, "working_memory": 0.30, "goals": 0.15, "social": 0.15,
                                 "memories": 0.20, "alerts": 0.10},
        description="Share of the prompt per section (renormalised); a call may adjust them.")
    # P2 short-term memory
    stm_base_capacity: int = Field(default=100, ge=1, description="STM capacity of a run under an hour.")
    stm_capacity_per_hour: int = Field(default=100, ge=0, description="Added per whole hour of the run's length.")
    stm_max_capacity: int = Field(default=300, ge=1, description="STM capacity at most.")
    run_hours: float = Field(default=2.5, gt=0, description="The run's planned length (sets STM capacity and the "
                                                             "consolidation cycle).")
    wm_to_stm_min_importance: float = Field(default=0.2, ge=0, le=1,
                                            description="A finished action or conversation enters STM at or above.")
    # P3 importance rules
    base_importance: dict[str, float] = Field(
        default_factory=lambda: {"conversation": 0.5, "action": 0.3, "observation": 0.2, "reflection": 0.6},
        description="Rule-based importance of a new event by type (P3), before modifiers.")
    importance_modifiers: dict[str, float] = Field(
        default_factory=lambda: {"request_or_proposal": 0.2, "emotional": 0.1, "goal_related": 0.3, "failure": 0.2,
                                 "new_agent": 0.3, "threat": 0.4},
        description="Added to the base (capped at 1): a request or proposal and emotional content in a conversation, "
                    "a goal-related or failed action, a new agent or a threat observed.")
    # P4 consolidation
    cluster_cosine: float = Field(default=0.85, ge=-1, le=1, description="Events at or above join one cluster.")
    consolidation_minutes: tuple[float, float, float] = Field(
        default=(10.0, 5.0, 3.0), description="The cycle for runs under 1 h, 1-2 h, over 2 h (the note's table).")
    consolidation_workers: int = Field(default=2, ge=1, description="Threads consolidating in the background.")
    semantic_min_cluster: int = Field(default=3, ge=2, description="A cluster this large becomes a semantic record "
                                                                   "(episodic otherwise).")
    # P5 forgetting
    ltm_cap: int = Field(default=10_000, ge=1, description="LTM records per agent at most.")
    compress_at: float = Field(default=0.8, gt=0, le=1, description="Compression starts at this share of the cap.")
    compress_below_decay: float = Field(default=0.1, ge=0, description="Compression candidates decay below this.")
    delete_below_decay: float = Field(default=0.05, ge=0, description="Never-accessed records below this go.")
    decay_lambda: float = Field(default=0.5, gt=0, description="Per hour of the run: recency = exp(-lambda*hours).")
    # P6 retrieval
    module_weights: dict[str, tuple[float, float, float]] = Field(
        default_factory=lambda: dict(NOTE_MODULE_WEIGHTS),
        description="Per cognitive module (alpha relevance, beta recency, gamma importance); 'default' for others.")
    module_top_k: dict[str, int] = Field(default_factory=lambda: dict(_MODULE_TOP_K),
                                         description="Results per module when a call gives no top_k.")
    module_layers: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(_MODULE_LAYERS),
                                                      description="Layers searched per module when a call names none.")
    candidates_per_layer: int = Field(default=50, ge=1, description="Vector candidates per layer before scoring.")
    # P8 scale
    quantization: Literal["none", "scalar", "binary"] = Field(
        default="none", description="LTM vectors: full float32, scalar int8 or binary (rescored with full vectors).")
    access_flush_records: int = Field(
        default=512, ge=0, description="LTM records with accesses counted in memory before they are written on their "
                                       "own (they also go with every store, maintenance and close); a crash loses "
                                       "at most these. 0 writes each retrieval's accesses at once.")
    access_flush_seconds: float = Field(
        default=30.0, ge=0, description="Pending accesses this old are written at the next access.")
    ltm_cluster_min_rows: int = Field(
        default=50_000, ge=1, description="Embedded (DuckDB): LTM rows written since the table was last ordered by "
                                          "agent before it is ordered again (a read by ids then scans one agent's "
                                          "rows, not every agent's: 1.7x less CPU at 100k rows, bench.agents_hotpaths).")
    ltm_cluster_share: float = Field(
        default=0.5, gt=0, description="...and at least this share of the table: the rewrite (0.8 s CPU per 100k "
                                       "rows) then costs about two row copies per row ever written.")
    memory_model: Literal["piano", "lifecycle"] = Field(
        default="piano", description="Forgetting model of agents: the note's decay (piano) or the chat's "
                                     "emotion-weighted lifecycle (its levels, compression and archiving).")
    lifecycle_day_hours: float = Field(
        default=24.0, gt=0, description="Under memory_model 'lifecycle': game hours of the run's clock to one "
                                        "lifecycle day (24: the chat's day; smaller makes a short run fade).")

    @model_validator(mode="after")
    def _known_modules(self) -> "AgentParams":
        if "default" not in self.module_weights:
            raise ValueError("module_weights needs a 'default' entry")
        if self.stm_base_capacity > self.stm_max_capacity:
            raise ValueError("stm_base_capacity exceeds stm_max_capacity")
        return self
