"""Statements the rules did not read, and the facts they may have made stale: the review state.

A rule that misses how an update was worded must not leave the old value standing as plain current fact. So a
user's sentence that is about an attribute holding one value at a time (cue words: "flat", "relocated", 引っ越し
for where the user lives; "coffee", "drink", 飲む, any word the lexicon files as a drink, for the drink …) and
says that something changed (a change word: now, new, finally, gave up, 最近, やめ …, or the current value itself
named), while no item of that attribute came out of it, is an *unread update*. The user's current value of that
attribute, said before it, is put under review: it stays current (nothing was learnt to replace it) with
``confidence`` lowered to ``REVIEW_CONFIDENCE`` and a note quoting the sentence, and recall says it is
uncertain. A later statement of a value (the same one restated, or a new one) ends the review.

Questions, wishes and sentences about someone else (my sister, a friend …) are no update of the user's facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .en_sentence import en_key
from .extract import is_japanese, sentences
from .models import USER, KnowledgeItem, as_source_turn
from .params import KnowledgeParams

REVIEW = "needs review: "
"""The note of an item under review starts so; the rest quotes the statement that was not understood."""
REVIEW_CONFIDENCE = 0.3

# attribute → words that say a sentence is about it (English: lemmas of words; Japanese: substrings)
CUES_EN: dict[str, frozenset[str]] = {
    "lives_in": frozenset("live move moving moved relocate relocated relocating flat apartment house home place "
                          "city town neighbourhood neighborhood rent lease landlord key unpack box address settle "
                          "settled settling suburb street mortgage flatmate roommate commute".split()),
    "drink": frozenset("drink drinking drank coffee tea cup mug caffeine decaf latte espresso brew kettle".split()),
    "works_at": frozenset("job work working office boss manager colleague coworker employer company hired hire "
                          "resign resigned quit notice shift team onboarding position role offer contract internship "
                          "workplace".split()),
    "food": frozenset("food dish meal eat eating favourite favorite".split()),
    "film": frozenset("film movie favourite favorite".split()),
}
CUES_JA: dict[str, tuple[str, ...]] = {
    "lives_in": ("引っ越", "住ん", "住む", "住ま", "部屋", "新居", "家賃", "転居", "マンション", "アパート", "荷ほどき"),
    "drink": ("飲み", "飲む", "飲ん", "コーヒー", "紅茶", "お茶", "カフェイン"),
    "works_at": ("仕事", "職場", "転職", "会社", "勤め", "退職", "辞め", "バイト", "上司"),
    "food": ("食べ物", "料理", "好物"),
    "film": ("映画",),
}
CHANGE_EN = re.compile(
    r"\b(?:now|new|newly|finally|lately|these days|nowadays|anymore|any more|no longer|gave up|given up|give up|"
    r"quit|stopped|switched|swapped|changed|instead|moved|relocated|left|started|since|just|got the keys|"
    r"signed|last (?:week|month|year)|this (?:week|month))\b", re.I)
CHANGE_JA = re.compile(r"今は|今の|最近|新しい|新居|引っ越|やめ|辞め|変え|替え|乗り換え|もう|先月|先週|やっと|ようやく|転職|から")
_FIRST_PERSON_EN = re.compile(r"\b(?:I|I'm|I've|I'd|we|we're|we've|my|our|us|me)\b|^[A-Z][a-z]+ed\b", re.I)
_NOT_A_STATEMENT_EN = re.compile(
    r"\?|^\s*(?:do|does|did|are|is|can|could|would|will|should|shall|what|who|where|when|why|how)\b|"
    r"\b(?:if|would|wish|might|maybe|someday|one day|thinking about|thinking of|want to|wanna|hope to|said|says|told me)\b",
    re.I)
_NOT_A_STATEMENT_JA = re.compile(r"[?？]|かな|たい|なら|かも|って言|そうだ")
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_SAME_ATTRIBUTE = {"job": "works_at"}


@dataclass(frozen=True)
class Unread:
    """A user's sentence about ``attribute`` of ``subject`` that said something changed, read by no rule."""

    subject: str
    attribute: str
    text: str
    turn_id: str
    said_at: float


def needs_review(item: KnowledgeItem | Mapping[str, Any]) -> bool:
    """Is the item (a model or a stored row) under review?"""
    note = item.note if isinstance(item, KnowledgeItem) else (item.get("note") or "")
    return note.startswith(REVIEW)


def cued_attributes(sentence: str, params: KnowledgeParams, values: Iterable[str] = (), turn: str = "") -> set[str]:
    """Single-valued attributes the (NFKC) sentence speaks of with a change: none for a question, a wish, or a
    sentence about someone else. ``values``: the user's current values, a change word when one is named;
    ``turn``: the whole turn (a fragment such as "New job!" is the user's when the turn speaks in the first person)."""
    named = [v for v in values if v and v.lower() in sentence.lower()]
    if is_japanese(sentence):
        if _NOT_A_STATEMENT_JA.search(sentence) or any(r in sentence for r in params.relations if not r.isascii()):
            return set()
        changed = bool(CHANGE_JA.search(sentence) or named)
        return {a for a, cues in CUES_JA.items() if changed and any(c in sentence for c in cues)}
    if _NOT_A_STATEMENT_EN.search(sentence) or not _FIRST_PERSON_EN.search(sentence if not turn else f"{sentence} {turn}"):
        return set()
    words = [w.lower() for w in _WORD.findall(sentence)]
    if any(params.relations.get(w) for w in words if w not in ("place",)) and not re.match(r"\s*(?:I|we)\b", sentence, re.I):
        return set()  # "my sister relocated …": her news, not the user's
    if not (CHANGE_EN.search(sentence) or named):
        return set()
    lemmas = {en_key(w) for w in words} | set(words)
    cued = {a for a, cues in CUES_EN.items() if lemmas & cues}
    if any(params.categories.get(k) == "drink" for k in lemmas):
        cued.add("drink")
    return cued


def unread_updates(turns: Iterable[Mapping[str, Any] | Any], read: Sequence[KnowledgeItem], params: KnowledgeParams,
                   current: Mapping[str, Sequence[str]] | None = None) -> list[Unread]:
    """The user's sentences in ``turns`` that speak of a single-valued attribute with a change while none of
    the ``read`` items (what extraction kept from these turns) of that attribute came from them.
    ``current``: attribute → the user's current values (a sentence naming one is about it)."""
    current = current or {}
    got = {(i.text, _SAME_ATTRIBUTE.get(i.attribute, i.attribute), tid) for i in read for tid in i.source_turn_ids}
    out: list[Unread] = []
    for raw in turns:
        turn = as_source_turn(raw)
        if turn["speaker"] not in params.extract_speakers:
            continue
        for sentence in sentences(turn["text"]):
            values = [v for vs in current.values() for v in vs]
            for attribute in sorted(cued_attributes(sentence, params, values, turn["text"])):
                if params.is_single(attribute) and (sentence, attribute, turn["turn_id"]) not in got:
                    out.append(Unread(USER, attribute, sentence, turn["turn_id"], turn["ts"]))
    return out


def put_under_review(items: Iterable[KnowledgeItem], unread: Sequence[Unread]) -> list[KnowledgeItem]:
    """The current positive items an unread update may have made stale, marked for review (the newest unread
    sentence quoted). An item said in the same turn, or after the sentence, is not touched."""
    out: dict[str, KnowledgeItem] = {}
    for u in sorted(unread, key=lambda u: u.said_at):
        for item in items:
            attribute = _SAME_ATTRIBUTE.get(item.attribute, item.attribute)
            if (item.subject == u.subject and attribute == u.attribute and item.is_current
                    and item.polarity == "positive" and item.said_at < u.said_at
                    and u.turn_id not in item.source_turn_ids):
                base = out.get(item.item_id, item)
                out[item.item_id] = base.model_copy(update={
                    "confidence": min(base.confidence, REVIEW_CONFIDENCE), "note": f"{REVIEW}{u.text[:200]}"})
    return list(out.values())


def cleared(survivor: KnowledgeItem, by: KnowledgeItem) -> KnowledgeItem:
    """A fact under review said again: the review ends, with the restatement's confidence."""
    if not needs_review(survivor):
        return survivor
    return survivor.model_copy(update={"note": "restated", "confidence": max(survivor.confidence, by.confidence)})


def review_items(known: Iterable[KnowledgeItem], turns: Sequence[Mapping[str, Any] | Any],
                 kept: Sequence[KnowledgeItem], params: KnowledgeParams) -> list[KnowledgeItem]:
    """After ``turns`` were learnt (``kept``: what extraction kept from them): the user's current facts among
    ``known`` that a sentence of theirs no rule read may have made stale, marked for review."""
    live = [i for i in known if i.subject == USER and i.polarity == "positive" and i.is_current]
    values: dict[str, list[str]] = {}
    for item in live:
        values.setdefault(item.attribute, []).append(item.value)
    unread = unread_updates(turns, kept, params, values) if live else []
    return put_under_review(live, unread) if unread else []
