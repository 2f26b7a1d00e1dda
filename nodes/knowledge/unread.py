"""Statements the rules did not read, and the facts they may have made stale: the review state.

A rule that misses how an update was worded must not leave the old value standing as plain current fact. So a
user's sentence that says one of their current facts changed (``update_signals``: a statement of the user's own
news with a change or a new state in it, whose meaning is close to a change of that fact, "we packed up and now
call Austin home" beside "lives in Portland"), while no item of that attribute came out of it, is an *unread
update*. The fact is put under review: it stays current (nothing was learnt to replace it) with ``confidence``
lowered to ``REVIEW_CONFIDENCE`` and a note quoting the sentence, and recall says it is uncertain. A later
statement of a value (the same one restated, or a new one) ends the review.

Only attributes holding one value at a time are watched: a new value of an accumulating one (another hobby)
leaves the others true.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .extract import sentences
from .models import USER, KnowledgeItem, as_source_turn
from .params import KnowledgeParams
from .update_signals import THRESHOLD, is_user_statement, meaning_scores, says_change

REVIEW = "needs review: "
"""The note of an item under review starts so; the rest quotes the statement that was not understood."""
REVIEW_CONFIDENCE = 0.3
_SAME_ATTRIBUTE = {"job": "works_at"}


@dataclass(frozen=True)
class Unread:
    """A user's sentence, read by no rule, that may have changed the current fact ``item_id``."""

    item_id: str
    text: str
    turn_id: str
    said_at: float


def needs_review(item: KnowledgeItem | Mapping[str, Any]) -> bool:
    """Is the item (a model or a stored row) under review?"""
    note = item.note if isinstance(item, KnowledgeItem) else (item.get("note") or "")
    return note.startswith(REVIEW)


def unread_updates(turns: Iterable[Mapping[str, Any] | Any], read: Sequence[KnowledgeItem],
                   live: Sequence[KnowledgeItem], params: KnowledgeParams) -> list[Unread]:
    """The user's sentences in ``turns`` that say one of the ``live`` facts (current, positive, of single-valued
    attributes) changed, while none of the ``read`` items (what extraction kept from these turns) of that
    attribute came from them. A fact said in the same turn, or after it, is not one the sentence can change."""
    got = {(i.text, _SAME_ATTRIBUTE.get(i.attribute, i.attribute), tid) for i in read for tid in i.source_turn_ids}
    said: list[tuple[str, Any]] = []
    for raw in turns:
        turn = as_source_turn(raw)
        if turn["speaker"] in params.extract_speakers:
            said += [(s, turn) for s in sentences(turn["text"])
                     if is_user_statement(s, params, turn["text"]) and says_change(s)]
    pairs = [(n, item) for n, (s, turn) in enumerate(said) for item in live
             if item.said_at < turn["ts"] and turn["turn_id"] not in item.source_turn_ids
             and (s, _SAME_ATTRIBUTE.get(item.attribute, item.attribute), turn["turn_id"]) not in got]
    if not pairs:
        return []
    facts = list(dict.fromkeys((item.attribute, item.value) for _, item in pairs))
    scores = meaning_scores([s for s, _ in said], facts)
    column = {fact: j for j, fact in enumerate(facts)}
    return [Unread(item.item_id, said[n][0], said[n][1]["turn_id"], said[n][1]["ts"]) for n, item in pairs
            if scores[n, column[(item.attribute, item.value)]] >= THRESHOLD]


def put_under_review(items: Iterable[KnowledgeItem], unread: Sequence[Unread]) -> list[KnowledgeItem]:
    """The items an unread update may have made stale, marked for review (the newest unread sentence quoted)."""
    by_id = {i.item_id: i for i in items}
    out: dict[str, KnowledgeItem] = {}
    for u in sorted(unread, key=lambda u: u.said_at):
        base = out.get(u.item_id, by_id.get(u.item_id))
        if base is not None:
            out[u.item_id] = base.model_copy(update={
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
    live = [i for i in known if i.subject == USER and i.polarity == "positive" and i.is_current
            and params.is_single(i.attribute)]
    return put_under_review(live, unread_updates(turns, kept, live, params)) if live else []
