"""Validation (A6): an item is kept only when its source turns say it. Nothing the user did not say is knowledge.

Offline, an item is grounded when every content word and number of its value, its subject (unless the user),
its detail and its date expression appears among the content words of its source turns (Sudachi normalised
forms for Japanese, lower-cased light stems for English, so 住んでる grounds 住む and "cats" grounds "cat"), and
when a fact about the user comes from a turn the user spoke. Grounded items get ``confidence_offline`` (0.9).

The model path is a seam: an item a chat model extracted (``method="llm"``) that the offline check cannot
ground goes to ``reviewer`` when one is given; approved, it gets ``confidence_llm`` (0.7). Offline items are
never sent there: if the patterns read a word the turn does not hold, the pattern is wrong.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from lumina_memory.nodes.text.tokenize import EN_STOP, morphemes

from ..text.noun_lemma import noun_lemma
from .extract import is_japanese
from .models import USER, KnowledgeItem, SourceTurn, as_source_turn
from .params import KnowledgeParams

Reviewer = Callable[[KnowledgeItem, Sequence[SourceTurn]], bool]
"""Says whether the turns support the item (the A6 LLM review); called only for unsupported model items."""


class Rejection(BaseModel):
    model_config = ConfigDict(frozen=True)

    item: KnowledgeItem
    reason: str


class Validation(BaseModel):
    model_config = ConfigDict(frozen=True)

    kept: list[KnowledgeItem]
    rejected: list[Rejection]


_CONTENT_POS = frozenset(("名詞", "動詞", "形容詞", "形状詞", "副詞"))
_EN_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class _Said:
    """What the source turns hold, in the forms a word can be matched by."""

    text: str
    """NFKC, lower-cased: a value's surface found here is said (猫 in 猫好き, ポチ however Sudachi reads it)."""
    forms: frozenset[str]
    """Sudachi normalised and dictionary forms (住む for 住んでる, 3 for 三)."""
    lemmas: frozenset[str]
    """English lemmas (cat for cats)."""

    @classmethod
    def of(cls, texts: Iterable[str]) -> _Said:
        text = unicodedata.normalize("NFKC", " ".join(texts)).lower()
        forms = {f for m in morphemes(text) for f in (m.normalized.lower(), m.dictionary.lower())}
        return cls(text, frozenset(forms), frozenset(noun_lemma(w) for w in _EN_WORD.findall(text)))


def _words(text: str) -> list[tuple[str, ...]]:
    """A field's content words, each as the forms any one of which grounds it."""
    text = unicodedata.normalize("NFKC", text)
    if not is_japanese(text):
        return [(noun_lemma(w),) for w in _EN_WORD.findall(text.lower()) if w not in EN_STOP]
    out = []
    for m in morphemes(text):
        if m.pos[0] in _CONTENT_POS and m.pos[1] != "非自立可能" and m.surface.strip():
            out.append((m.surface.lower(), m.normalized.lower(), m.dictionary.lower()))
    return out


def _found(form: str, said: _Said) -> bool:
    if form in said.forms or form in said.lemmas:
        return True
    if not form.isascii():
        return form in said.text  # Japanese has no spaces: 猫 is said in 猫好き
    tail = r"\b" if form.isdigit() else ""  # "3" is not said by "30"; "cat" is by "cats"
    return re.search(rf"\b{re.escape(form)}{tail}", said.text) is not None


def _missing(text: str, said: _Said) -> list[str]:
    return [forms[0] for forms in _words(text) if not any(_found(f, said) for f in forms)]


def ungrounded_reason(item: KnowledgeItem, turns: Sequence[SourceTurn], params: KnowledgeParams) -> str | None:
    """Why ``item`` is not supported by ``turns`` (its own source turns), or None when it is."""
    if not turns:
        return f"none of its source turns {list(item.source_turn_ids)} was given"
    if item.subject == USER and not any(t["speaker"] in params.extract_speakers for t in turns):
        return "a fact about the user that the user did not say (source turns are the characters')"
    said = _Said.of(t["text"] for t in turns)
    fields = {"value": item.value, "detail": item.detail, "date": item.when_text}
    if item.subject != USER:
        fields["subject"] = item.subject
    if not _words(item.value):
        return f"value {item.value!r} has no content word to check"
    for name, text in fields.items():
        missing = _missing(text, said)
        if missing:
            return f"{name} word(s) {missing} not in the source turns"
    if item.method == "offline":
        sources = " ".join(unicodedata.normalize("NFKC", t["text"]) for t in turns)
        if item.text not in sources:
            return "its sentence is not in the source turns"
    return None


def validate_items(
    items: Iterable[KnowledgeItem],
    turns: Iterable[Mapping[str, Any] | Any],
    params: KnowledgeParams | None = None,
    *,
    reviewer: Reviewer | None = None,
) -> Validation:
    """Keep the grounded items (with their confidence), reject the others with a reason."""
    params = params or KnowledgeParams()
    by_id = {t["turn_id"]: t for t in map(as_source_turn, turns)}
    kept: list[KnowledgeItem] = []
    rejected: list[Rejection] = []
    for item in items:
        sources = [by_id[i] for i in item.source_turn_ids if i in by_id]
        reason = ungrounded_reason(item, sources, params)
        if reason is None:
            kept.append(item.model_copy(update={"confidence": params.confidence_offline}))
        elif item.method == "llm" and reviewer is not None and sources and reviewer(item, sources):
            kept.append(item.model_copy(update={"confidence": params.confidence_llm}))
        else:
            rejected.append(Rejection(item=item, reason=reason))
    return Validation(kept=kept, rejected=rejected)
