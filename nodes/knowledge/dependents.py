"""Facts that rest on other facts (F6 derived_from), and what happens to them when the fact they rest on changes.

A routine or plan of the user (``dependent_attributes``: "I take the train from Umeda every morning") may hold
only while a fact it rests on holds (where they live, where they work: the keys of ``dependency_markers``). When
it is learnt, offline, it rests on each of the user's current such facts said no later than it that

- it names ("drive to the Toyota plant" → works at Toyota; 「トヨタの工場まで」), or
- whose kind its words mark (station, commute, 近所, 最寄り → lives_in; colleagues, shift, 出勤 → works_at, job), or
- (``dependency_same_turn``) was said in the same turn.

The ids go in the item's ``derived_from`` (the archive's truth; the graph mirrors it as FACT_DERIVED_FROM).
When a fact is later superseded ("I moved to Fukuoka"), every current fact resting on it that was not said
with the change is put under review, with why: its note quotes the fact that changed and what replaced it,
its confidence drops to the review level, recall marks it uncertain and the profile (priming's current facts)
leaves it out and lists it under review. A restatement of it ends the review (nodes.knowledge.unread.cleared),
and what it rests on is asked again as of the restatement (learn.py): a move after that reaches it again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from .models import USER, KnowledgeItem
from .params import KnowledgeParams
from .unread import REVIEW, REVIEW_CONFIDENCE

RESTS_ON = "rests on "
"""After the review prefix: the note of a fact under review because a fact it rests on changed."""


def _has_marker(text: str, markers: Sequence[str]) -> bool:
    low = text.lower()
    for marker in markers:
        if marker.isascii():
            if re.search(rf"\b{re.escape(marker.lower())}(?:e?s|ing)?\b", low):
                return True
        elif marker in text:
            return True
    return False


def _names(item: KnowledgeItem, anchor: KnowledgeItem) -> bool:
    value = anchor.value.strip()
    if not value:
        return False
    if value.isascii():
        return re.search(rf"\b{re.escape(value.lower())}\b", item.value.lower()) is not None
    return value in item.value


def is_anchor(item: KnowledgeItem, params: KnowledgeParams) -> bool:
    """Can facts rest on this one? A current, positive fact about the user of a kind others rest on."""
    return (item.subject == USER and item.attribute in params.dependency_markers and item.polarity == "positive"
            and item.is_current)


def rests_on(item: KnowledgeItem, anchors: Iterable[KnowledgeItem], params: KnowledgeParams) -> tuple[str, ...]:
    """The ids of the ``anchors`` (the user's current facts) that ``item`` rests on, by the rules above."""
    if item.subject != USER or item.attribute not in params.dependent_attributes or item.polarity != "positive":
        return ()
    out = []
    for anchor in anchors:
        if anchor.item_id == item.item_id or not is_anchor(anchor, params) or anchor.said_at > item.said_at:
            continue
        same_turn = params.dependency_same_turn and bool(set(anchor.source_turn_ids) & set(item.source_turn_ids))
        if same_turn or _names(item, anchor) or _has_marker(item.value, params.dependency_markers[anchor.attribute]):
            out.append(anchor.item_id)
    return tuple(dict.fromkeys((*item.derived_from, *out)))


def why(changed: KnowledgeItem, by: KnowledgeItem) -> str:
    """The review note of a fact resting on ``changed``, which ``by`` replaced."""
    after = f", now {by.value}" if by.polarity == "positive" else ", no longer so"
    return f"{REVIEW}{RESTS_ON}{changed.attribute}: {changed.value}, which changed{after}"


def under_review(items: Iterable[KnowledgeItem], changed: Mapping[str, tuple[KnowledgeItem, KnowledgeItem]],
                 said_with: set[str]) -> list[KnowledgeItem]:
    """Current facts among ``items`` resting on a fact of ``changed`` (its id → (the fact, what replaced it)),
    marked for review with why; facts said in the turns ``said_with`` (those of the change) are left as they are."""
    out = []
    for item in items:
        if not item.is_current or set(item.source_turn_ids) & said_with:
            continue
        hit = next((i for i in item.derived_from if i in changed), None)
        if hit is not None:
            note = why(*changed[hit])
            if item.note != note:
                out.append(item.model_copy(update={"note": note, "confidence": min(item.confidence, REVIEW_CONFIDENCE)}))
    return out
