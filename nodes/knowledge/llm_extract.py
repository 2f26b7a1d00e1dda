"""Knowledge extraction and review with a chat model (A6), beside the offline extractor, never instead of it.

With a model configured, each archived segment's user turns are also read by the model through structured
output; its facts join the offline ones (same ids for the same claim, so the two never duplicate) and go
through the same grounding check. What the offline check cannot confirm (a paraphrased value) is put to the
model's review (the notes' LLM validation); approved items keep confidence 0.7, the rest are rejected.
A failing model is never a silent downgrade: the offline items stand, a warning is logged, and the report's
``path`` says "offline (model failed: …)". And the case the rules cannot decide (A7: a new value of an
attribute that accumulates, beside current ones — another pet, or the one that replaced it?) is the model's to
judge; without a model, or when it fails, the values coexist. Which of the user's current facts a new routine
or plan rests on (F6, nodes.knowledge.dependents) is asked too; the model's answer adds to the rules'.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field

from .en_sentence import en_key
from .extract import is_japanese
from .ja_grammar import key_of
from .models import ATTRIBUTES, Attribute, KnowledgeItem, Polarity, SourceTurn, as_source_turn, knowledge_item_id
from .params import KnowledgeParams

log = logging.getLogger("lumina.knowledge")

_SYSTEM = """You extract durable facts a user states about themselves and the people, pets and things in \
their life, for a memory system. Only what the user said as true of now or of a stated time: never \
questions, hypotheticals ("if I …"), other people's opinions, jokes, or what a character said. \
Each fact: subject ("user", or the name or relation of a person or pet), attribute (one of: {attributes}), \
value (as the user said it, short), polarity (negative when the user says it is no longer so or not so), \
detail (relation or species, how often), context (where/when it holds, '' if always), turn (the number of \
the turn it is in), sentence (copied exactly from that turn)."""

EXTRACT_PROMPT = ChatPromptTemplate.from_messages([
    ("system", _SYSTEM.replace("{attributes}", ", ".join(ATTRIBUTES))),
    ("human", "Turns:\n{turns}"),
])
JUDGE_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "A user told a memory system facts at different times. Decide whether the NEW statement replaces "
               "the KNOWN ones (supersede: they are no longer true, e.g. a pet that died and a new one adopted in "
               "its place) or adds to them (coexist: both hold, e.g. a second pet). When unsure, coexist."),
    ("human", "KNOWN:\n{known}\nNEW (said later): {new}"),
])
DEPENDS_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "A user told a memory system a routine or plan, and earlier some facts about their life. Which of "
               "the FACTS does the ROUTINE rest on: would it probably no longer hold if that fact changed (a commute "
               "from a station rests on where they live; a night shift on their job)? Answer the facts' numbers; "
               "none when it rests on none of them."),
    ("human", "FACTS:\n{facts}\nROUTINE: {routine}"),
])
REVIEW_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "You check one extracted fact against the conversation turns it came from. Answer supported=true "
               "only if the user clearly stated it; false if it is inferred, hypothetical, a question, or about "
               "someone else."),
    ("human", "Fact: {fact}\nTurns:\n{turns}"),
])


class ExtractedFact(BaseModel):
    subject: str = Field(description="'user', or the name / relation of the person or pet")
    attribute: Attribute
    value: str = Field(min_length=1, max_length=200)
    polarity: Polarity = "positive"
    detail: str = ""
    context: str = ""
    turn: int = Field(ge=0, description="index of the turn the fact is in, as numbered in the input")
    sentence: str = Field(description="the sentence, copied exactly from that turn")


class ExtractedFacts(BaseModel):
    """Facts the user stated in these turns (empty when none)."""

    facts: list[ExtractedFact] = Field(default_factory=list)


class Judgement(BaseModel):
    """Whether a new statement replaces what was known (supersede) or adds to it (coexist)."""

    decision: Literal["supersede", "coexist"]
    reason: str = ""


class Dependencies(BaseModel):
    """The numbers of the facts a routine or plan rests on (F6)."""

    rests_on: list[int] = Field(default_factory=list)
    reason: str = ""


class Review(BaseModel):
    """Whether the user's turns support the fact."""

    supported: bool
    reason: str = ""


def value_key(value: str) -> str:
    """The offline extractor's normalised key, so a model's 「珈琲」 and the offline 「コーヒー」 are one value."""
    from lumina_memory.nodes.text.tokenize import morphemes

    text = unicodedata.normalize("NFKC", value).strip()
    return key_of(morphemes(text)) if is_japanese(text) else en_key(text)


def _numbered(turns: Sequence[SourceTurn]) -> str:
    return "\n".join(f"[{i}] {t['speaker']}: {t['text']}" for i, t in enumerate(turns))


class ModelExtractor:
    """Extracts with ``chat_model`` (structured output) and reviews what grounding cannot confirm."""

    def __init__(self, chat_model: BaseChatModel, params: KnowledgeParams | None = None) -> None:
        self.params = params or KnowledgeParams()
        self._extract = EXTRACT_PROMPT | chat_model.with_structured_output(ExtractedFacts, method="function_calling")
        self._review = REVIEW_PROMPT | chat_model.with_structured_output(Review, method="function_calling")
        self._judge = JUDGE_PROMPT | chat_model.with_structured_output(Judgement, method="function_calling")
        self._depends = DEPENDS_PROMPT | chat_model.with_structured_output(Dependencies, method="function_calling")

    def extract(self, turns: Sequence[Mapping[str, Any] | Any]) -> list[KnowledgeItem]:
        """Items from the user's turns (method "llm", unvalidated). Raises when the model fails."""
        source = [t for t in map(as_source_turn, turns) if t["speaker"] in self.params.extract_speakers and t["text"].strip()]
        if not source:
            return []
        answer = self._extract.invoke({"turns": _numbered(source)})
        if not isinstance(answer, ExtractedFacts):
            raise ValueError(f"the model gave no structured facts (got {type(answer).__name__})")
        items = []
        for fact in answer.facts:
            if fact.turn >= len(source):
                log.info("knowledge model: a fact names turn %d of %d; dropped", fact.turn, len(source))
                continue
            turn = source[fact.turn]
            key = value_key(fact.value)
            items.append(KnowledgeItem(
                item_id=knowledge_item_id(turn["turn_id"], fact.subject, fact.attribute, key, fact.polarity),
                subject=fact.subject, attribute=fact.attribute, value=fact.value, value_key=key,
                polarity=fact.polarity, detail=fact.detail, context=fact.context, text=fact.sentence,
                source_turn_ids=(turn["turn_id"],), source_ids=(turn["source_id"],), said_at=turn["ts"],
                valid_from=turn["ts"], method="llm", pattern="model",
            ))
        return items

    def judge(self, known: Sequence[KnowledgeItem], new: KnowledgeItem) -> str:
        """A7's model decision for what the rules cannot decide; "coexist" (the rules' answer) on any failure."""
        lines = "\n".join(f"- {k.subject} / {k.attribute}: {k.value} (「{k.text}」)" for k in known)
        try:
            answer = self._judge.invoke({"known": lines, "new": f"{new.subject} / {new.attribute}: {new.value} (「{new.text}」)"})
        except Exception as exc:  # noqa: BLE001 - the rules stand, loudly
            log.warning("knowledge judge failed (%s); the items coexist", f"{type(exc).__name__}: {exc}"[:200])
            return "coexist"
        return answer.decision if isinstance(answer, Judgement) else "coexist"

    def rests_on(self, item: KnowledgeItem, facts: Sequence[KnowledgeItem]) -> tuple[str, ...]:
        """F6 with a model: the ids of ``facts`` the routine or plan ``item`` rests on. Raises when the model fails
        (the caller keeps the rules' answer and says so)."""
        lines = "\n".join(f"[{i}] {f.attribute}: {f.value} (「{f.text}」)" for i, f in enumerate(facts))
        answer = self._depends.invoke({"facts": lines, "routine": f"{item.attribute}: {item.value} (「{item.text}」)"})
        if not isinstance(answer, Dependencies):
            raise ValueError(f"the model gave no structured answer (got {type(answer).__name__})")
        return tuple(facts[i].item_id for i in dict.fromkeys(answer.rests_on) if 0 <= i < len(facts))

    def review(self, item: KnowledgeItem, turns: Sequence[SourceTurn]) -> bool:
        """The notes' LLM validation of one item; a failed call rejects (nothing unconfirmed becomes knowledge)."""
        fact = f"{item.subject} / {item.attribute} / {'not ' if item.polarity == 'negative' else ''}{item.value}"
        try:
            answer = self._review.invoke({"fact": fact, "turns": _numbered(turns)})
        except Exception as exc:  # noqa: BLE001 - any provider failure: not approved, logged
            log.warning("knowledge review failed (%s); the item is rejected", f"{type(exc).__name__}: {exc}"[:200])
            return False
        return isinstance(answer, Review) and answer.supported
