"""F2 emotion reading with a chat model (the design notes' LLM JSON prompt), lexicon as fallback.

The model answers through LangChain structured output (tool calling, which OpenAI-compatible
servers support widely). A failed call, or an answer that does not fit the schema, never turns
into a silent downgrade: the lexicon reading is returned with ``fallback`` naming the error and a
warning is logged; ``path`` always says which reader produced the reading.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field, field_validator

from lumina_memory.stores.settings import LuminaSettings

from .emotion_f2 import EMOTION_TAGS, Category, EmotionReading, EmotionTag, Valence, read_emotion

log = logging.getLogger("lumina.emotion")

_SYSTEM = """You analyse the emotion of one conversation turn for a memory system that forgets \
calm, ordinary things sooner than emotional ones. Answer in the requested structure only.

emotional_intensity (0-100): 0-20 indifferent or administrative; 21-40 light interest, ordinary \
work; 41-60 clear interest, intellectual satisfaction; 61-80 strong emotional involvement or an \
important decision; 81-100 intense emotion, a traumatic event.
emotional_valence: positive (glad, success, thanks), negative (failure, "the worst", trouble) or \
neutral (a statement of fact, no emotional words). valence_score: -1..1, same sign as the label, \
near 0 when neutral.
emotional_arousal (0-100): 0-30 calm (long sentences, gentle words, trailing "……"); 31-60 normal; \
61-100 excited or tense (short sentences, many "!", strong words, repetition).
emotional_tags: any of {tags}; none when no emotion shows.
category: casual (small talk, greetings), work (tasks, technical discussion, implementation), \
decision (an important decision or design choice), emotional (an emotional core, a personal topic).

Calibration from the design notes:
「やった、できた！」 positive, arousal 85, tags joy excitement pride
「まあまあかな」 positive, arousal 25, tags satisfaction
「ふざけんな！」 negative, arousal 90, tags anger frustration
「……そう、仕方ないね」 negative, arousal 20, tags sadness resignation
「了解、やっておく」 neutral, arousal 30, no tags"""

EMOTION_PROMPT = ChatPromptTemplate.from_messages(
    [("system", _SYSTEM.replace("{tags}", ", ".join(EMOTION_TAGS))), ("human", "Turn:\n{speaker}: {text}")]
)


class EmotionJudgement(BaseModel):
    """Emotion analysis of one conversation turn (field names follow the design notes' JSON)."""

    emotional_intensity: int = Field(ge=0, le=100, description="0-100, see the scale in the instructions")
    emotional_valence: Valence
    valence_score: float = Field(ge=-1.0, le=1.0, description="-1..1, same sign as emotional_valence")
    emotional_arousal: int = Field(ge=0, le=100, description="0 calm .. 100 excited or tense")
    emotional_tags: list[EmotionTag] = Field(default_factory=list, description="Detailed emotions, strongest first")
    category: Category

    @field_validator("emotional_tags", mode="before")
    @classmethod
    def _known_tags_only(cls, tags: object) -> object:
        # One unlisted tag ("boredom") should not cost the whole reading; it is dropped, visibly.
        if not isinstance(tags, list):
            return tags
        known = [t.strip().lower() for t in tags if isinstance(t, str) and t.strip().lower() in EMOTION_TAGS]
        if len(known) != len(tags):
            log.info("emotion model: dropped tags outside the notes' list: %s", [t for t in tags if t not in known])
        return list(dict.fromkeys(known))

    def to_reading(self) -> EmotionReading:
        # The label is the notes' field; the score is made to agree with it.
        magnitude = abs(self.valence_score) or max(0.2, self.emotional_intensity / 200)
        score = {"positive": magnitude, "negative": -magnitude}.get(self.emotional_valence)
        if score is None:  # neutral: keep a small lean, inside the neutral band
            score = max(-0.11, min(0.11, self.valence_score))
        return EmotionReading(
            intensity=self.emotional_intensity,
            valence=self.emotional_valence,
            valence_score=round(score, 4),
            arousal=self.emotional_arousal,
            tags=tuple(self.emotional_tags),
            category=self.category,
            path="model",
        )


def emotion_chat_model(settings: LuminaSettings) -> BaseChatModel | None:
    """ChatOpenAI at temperature 0 (the notes' setting) when an OpenAI key or base URL is set and
    ``llm`` is not "offline"; None otherwise (the lexicon reads alone)."""
    if settings.llm == "offline" or not settings.use_openai:
        return None
    from .openai_models import chat_model

    return chat_model(settings, temperature=0)


class ModelEmotionReader:
    """Reads turns with a chat model; any failure gives the lexicon reading, logged and marked."""

    def __init__(self, chat_model: BaseChatModel) -> None:
        self._chain = EMOTION_PROMPT | chat_model.with_structured_output(EmotionJudgement, method="function_calling")

    def read(self, text: str, speaker: str = "user") -> EmotionReading:
        try:
            return _judged(self._chain.invoke({"speaker": speaker, "text": text}))
        except Exception as exc:  # noqa: BLE001 - any provider or schema failure falls back, loudly
            return _fallback(text, exc)

    def read_many(self, texts: Sequence[str], speaker: str = "user") -> list[EmotionReading]:
        """One batched call per list; each failed turn falls back on its own."""
        answers = self._chain.batch([{"speaker": speaker, "text": t} for t in texts], return_exceptions=True)
        readings = []
        for text, answer in zip(texts, answers):
            try:
                readings.append(_judged(answer))
            except Exception as exc:  # noqa: BLE001
                readings.append(_fallback(text, exc))
        return readings


def emotion_reader(
    settings: LuminaSettings, chat_model: BaseChatModel | None = None
) -> Callable[[str], EmotionReading]:
    """The per-turn reader the settings ask for: the model's (with lexicon fallback) or the lexicon."""
    model = chat_model if chat_model is not None else emotion_chat_model(settings)
    return read_emotion if model is None else ModelEmotionReader(model).read


def _judged(answer: object) -> EmotionReading:
    if isinstance(answer, Exception):
        raise answer
    if not isinstance(answer, EmotionJudgement):
        # The tool parser gives None when the model answered in prose instead of calling the tool.
        raise ValueError(f"the model gave no structured emotion reading (got {type(answer).__name__})")
    return answer.to_reading()


def _fallback(text: str, exc: BaseException) -> EmotionReading:
    reason = f"{type(exc).__name__}: {exc}"[:300]
    log.warning("emotion model failed (%s); using the lexicon reading for this turn", reason)
    return read_emotion(text).model_copy(update={"fallback": reason})


# --- F2's trigger and content: the notes' analysis JSON gives them with the emotion; a memory here is a segment,
# so they are asked once for the segment's turns rather than once a turn.
TEXTS_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "会話の区切り（ユーザーとキャラクターのターン）を記憶として残します。JSONの形式でのみ答えてください。\n"
               "- trigger: ユーザーの発言・行動の要約。記憶のきっかけとなった出来事（1〜2文）\n"
               "- content: キャラクターの反応・感想の要約（2〜3文）\n"
               "- 固有名詞、数字、場所、具体的なトピックは省略しない"),
    ("human", "ターン:\n{transcript}"),
])


class MemoryTexts(BaseModel):
    """The notes' ``trigger`` and ``content`` of one memory."""

    trigger: str = Field(description="ユーザーの発言・行動の要約。記憶のきっかけとなった出来事")
    content: str = Field(description="キャラクターの反応・感想の要約")


class MemoryTextsReader:
    """A segment's trigger and content by a chat model; raises on any failure (the caller falls back offline)."""

    def __init__(self, chat_model: BaseChatModel) -> None:
        self._chain = TEXTS_PROMPT | chat_model.with_structured_output(MemoryTexts, method="function_calling")

    def read(self, said: Sequence[tuple[str, str]]) -> MemoryTexts:
        answer = self._chain.invoke({"transcript": "\n".join(f"{s}: {t}" for s, t in said)})
        if not isinstance(answer, MemoryTexts) or not (answer.trigger.strip() or answer.content.strip()):
            raise ValueError(f"the model gave no trigger/content (got {type(answer).__name__})")
        return answer
