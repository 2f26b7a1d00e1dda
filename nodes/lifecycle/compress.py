"""Text compression when a memory's level falls (F4): level 2 a summary, level 3 keywords; the memory's text
and its trigger and content (F2) both.

With a chat model configured, the notes' prompts (trigger = what the user said, content = how the characters
answered; JSON out) through structured output, whose answer is the new trigger and content, and the text their
"trigger / content"; a failing call falls back to the offline ones, logged. Offline: level 2's text is the
segment's summary (extractive, made at flush), level 3's its keywords plus the emotion tags; trigger and content
are the sides' fewer central turns at level 2 and their keywords at level 3 (nodes.lifecycle.trigger_content).
Level 4 keeps level 3's (an archived memory is frozen).
"""

from __future__ import annotations

import logging
from typing import Callable, NamedTuple

from langchain_core.language_models import BaseChatModel
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field

from .trigger_content import offline_sides, segment_lines

log = logging.getLogger("lumina.lifecycle")

SUMMARY_PROMPT = ChatPromptTemplate.from_template(
    "以下の記憶を要約してください。\n\n## 要約の方針\n"
    "- triggerは「何がきっかけだったか」を1〜2文で要約（具体的な話題や質問内容を残す）\n"
    "- contentは「どう反応したか」を2〜3文で要約（説明した内容、ユーザーの反応も残す）\n"
    "- 固有名詞、数字、場所、技術用語、具体的なトピックは省略しない\n- 感情的なニュアンスがあれば残す\n\n"
    "## 元の記憶\nきっかけ（trigger）:\n{trigger}\n\n反応（content）:\n{content}\n\n"
    "## 出力形式（JSONのみ、説明不要）\n{{\"trigger\": \"<きっかけの要約>\", \"content\": \"<反応の要約>\"}}")
KEYWORD_PROMPT = ChatPromptTemplate.from_template(
    "以下の記憶から重要なキーワードを抽出してください。\n- triggerからキーワードを2〜3個抽出\n"
    "- contentからキーワードを2〜3個抽出\n- 固有名詞、技術用語、重要な概念を優先\n\n"
    "きっかけ（trigger）:\n{trigger}\n\n反応（content）:\n{content}\n\n"
    "出力形式（JSONのみ、説明不要）:\n{{\"trigger\": \"<キーワードをカンマ区切りで>\", \"content\": \"<キーワードをカンマ区切りで>\"}}")


class Compressed(BaseModel):
    """The notes' JSON: the memory's trigger and content at the new level."""

    trigger: str = Field(description="what started it")
    content: str = Field(description="how it was answered")


def trigger_and_content(text: str) -> tuple[str, str]:
    """A segment's 'speaker: text' lines split into what the user said and what the characters said."""
    user, others = [], []
    for line in text.splitlines():
        speaker, _, said = line.partition(": ")
        (user if speaker == "user" else others).append(said or line)
    return "\n".join(user), "\n".join(others)


def offline_text(record, tags: list[str], level: int) -> str | None:
    if level <= 1:
        return None
    if level == 2:
        return record.summary
    return " ".join([*record.keywords, *(f"#{t}" for t in tags)]).strip() or record.summary


class CompressedMemory(NamedTuple):
    """A memory at its new level: its text, trigger and content (None at level 1: its turns are its text)."""

    text: str | None
    trigger: str | None
    content: str | None


class Compressor:
    """``compress(record, tags, level)``: the memory at ``level`` (``text`` its text alone); ``paths`` counts
    which ran. ``embedder`` and ``params`` (LifecycleParams) make the offline trigger and content."""

    def __init__(self, chat_model: BaseChatModel | None = None, embedder=None, params=None) -> None:
        self.chains = None
        if chat_model is not None:
            structured = chat_model.with_structured_output(Compressed, method="function_calling")
            self.chains = {2: SUMMARY_PROMPT | structured, 3: KEYWORD_PROMPT | structured}
        self.embedder = embedder
        if params is None:
            from lumina_memory.stores.settings_lifecycle import LifecycleParams

            params = LifecycleParams()
        self.params = params
        self.paths: dict[str, int] = {}

    def text(self, record, tags: list[str], level: int) -> str | None:
        return self.compress(record, tags, level).text

    def _offline(self, record, tags: list[str], level: int) -> CompressedMemory:
        if level <= 1:
            return CompressedMemory(None, None, None)
        sides = offline_sides(self.embedder, segment_lines(record.text), level, self.params)
        return CompressedMemory(offline_text(record, tags, level), sides.trigger, sides.content)

    def compress(self, record, tags: list[str], level: int) -> CompressedMemory:
        if level <= 1 or self.chains is None:
            self._count("offline")
            return self._offline(record, tags, level)
        trigger, content = trigger_and_content(record.text or record.summary)
        try:
            out = self.chains[min(level, 3)].invoke({"trigger": trigger, "content": content})
            if not isinstance(out, Compressed):
                raise ValueError("the model answered without the JSON")
        except Exception as exc:  # noqa: BLE001 - any provider or schema failure: the offline text, loudly
            log.warning("compression by the model failed (%s: %s); offline text used", type(exc).__name__, exc)
            self._count("offline (model failed)")
            return self._offline(record, tags, level)
        self._count("model")
        text = f"{out.trigger} / {out.content}".strip(" /")
        text += "" if level < 3 or not tags else " " + " ".join(f"#{t}" for t in tags)
        return CompressedMemory(text, out.trigger.strip(), out.content.strip())

    def _count(self, path: str) -> None:
        self.paths[path] = self.paths.get(path, 0) + 1


def compressor_for(services) -> Compressor:
    """The model's compressor when one is configured for the LLM paths, else offline (stats say which)."""
    model = services.chat_model if services.paths.get("summary") == "llm" else None
    if model is None and services.paths.get("summary") == "llm":
        from lumina_memory.nodes.text.emotion_model import emotion_chat_model

        model = emotion_chat_model(services.settings)
    return Compressor(model, services.embedder, services.settings.lifecycle)


TextFor = Callable[[object, list, int], "str | None"]
