"""Update resolution (A7) as a pure function: a new item against what is already known about its subject.

Three outcomes besides a plain add, as in the notes, and history is never lost (nothing is deleted):

- supersede: the old item gets ``valid_to`` (when the new one was said), ``superseded_by`` and status
  ``superseded``; the new one is current. For an attribute that holds one value at a time (``policy`` single:
  where she lives, her drink, a pet's age) any new value supersedes; for one that accumulates (likes, pets,
  places she has been) only the same value with the other polarity does — 「もう好きじゃない」 ends the like,
  "I love tea" never ends "I love coffee". An opposite attribute (likes ↔ dislikes) ends the same value.
- merge: the same fact in other words (same normalised value and polarity): the existing item keeps its place
  and gains the new sources; the new item is kept with status ``merged`` and ``superseded_by`` the survivor.
- coexist: both true in their own contexts (平日は東京, 週末は実家): both ``coexisting``, annotated.

Whenever the new item meets a rival (it supersedes it, joins the history behind it, or coexists with it), it
records the rival's id in ``contradicts`` (F6): the graph's contradicts link, whose winner the statuses say.

A negation is stored as an item of polarity ``negative`` (what the user said), never as a positive fact: a
negation that ends nothing is still no false positive. ``current_facts`` lists what holds now.
An item said before the current one it would replace (a batch replayed out of order) goes straight into the
history: superseded by the newer one. Re-resolving an item already known changes nothing (idempotent).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .models import KnowledgeItem
from .params import KnowledgeParams
from .unread import cleared

Action = Literal["add", "supersede", "merge", "coexist", "unchanged"]


class Resolution(BaseModel):
    """What to write: ``item`` (the new item as it is to be stored; None when nothing new) and ``updated``
    (existing items with their new status, validity or sources)."""

    model_config = ConfigDict(frozen=True)

    action: Action
    item: KnowledgeItem | None
    updated: tuple[KnowledgeItem, ...] = ()
    reason: str


def _sources(a: KnowledgeItem, b: KnowledgeItem) -> dict[str, tuple[str, ...]]:
    return {
        "source_turn_ids": tuple(dict.fromkeys((*a.source_turn_ids, *b.source_turn_ids))),
        "source_ids": tuple(dict.fromkeys((*a.source_ids, *b.source_ids))),
    }


def _end(old: KnowledgeItem, by: KnowledgeItem, why: str) -> KnowledgeItem:
    return old.model_copy(update={
        "valid_to": by.said_at, "superseded_by": by.item_id, "status": "superseded", "note": why,
    })


def _ids(new: KnowledgeItem, rivals: Iterable[KnowledgeItem]) -> tuple[str, ...]:
    """``new``'s contradicted items (F6) with these rivals added: which one won is in their ``superseded_by``."""
    return tuple(dict.fromkeys((*new.contradicts, *(e.item_id for e in rivals))))


def _describe(item: KnowledgeItem) -> str:
    value = f"{item.value} ({item.context})" if item.context else item.value
    return value if item.polarity == "positive" else f"not {value}"


def resolve(existing: Sequence[KnowledgeItem], new: KnowledgeItem, params: KnowledgeParams | None = None) -> Resolution:
    """Resolve ``new`` against ``existing`` (any items of the user; those about other subjects or attributes
    are ignored, so passing all of a user's items is fine)."""
    params = params or KnowledgeParams()
    opposite = params.opposites.get(new.attribute)
    related = [e for e in existing if e.subject == new.subject and e.attribute in (new.attribute, opposite)]
    for e in related:
        if e.item_id == new.item_id or (
            e.attribute == new.attribute and e.slot == new.slot and e.polarity == new.polarity
            and set(new.source_turn_ids) <= set(e.source_turn_ids)
        ):
            return Resolution(action="unchanged", item=None, reason=f"already known as {e.item_id}")
    current = [e for e in related if e.is_current]
    same = [e for e in current if e.attribute == new.attribute]

    # merge: the same claim restated
    for e in same:
        if e.slot == new.slot and e.polarity == new.polarity:
            survivor = cleared(e.model_copy(update={**_sources(e, new), "note": e.note or "restated"}), new)
            merged = new.model_copy(update={
                "status": "merged", "superseded_by": e.item_id, "note": f"same fact as {e.item_id}",
            })
            return Resolution(action="merge", item=merged, updated=(survivor,), reason="same value restated")

    # what the new item contradicts
    if params.is_single(new.attribute) and new.polarity == "positive":
        rivals = [e for e in same if not (e.slot != new.slot and e.polarity == "negative")]
    else:
        rivals = [e for e in same if e.slot == new.slot]  # the same value, other polarity
    if opposite is not None and new.polarity == "positive":
        rivals += [e for e in current if e.attribute == opposite and e.value_key == new.value_key
                   and e.polarity == "positive"]
    if not rivals:
        return Resolution(action="add", item=new, reason="nothing known contradicts it")

    # a fact limited to a context (週末は…) sits beside the general one; a general statement replaces all
    in_context = [e for e in rivals if new.context and e.context != new.context and e.polarity == new.polarity == "positive"]
    if in_context and len(in_context) == len(rivals):
        notes = "; ".join(f"coexists with {_describe(e)}" for e in in_context)
        updated = tuple(
            e.model_copy(update={"status": "coexisting", "note": f"coexists with {_describe(new)}"}) for e in in_context
        )
        return Resolution(action="coexist", item=new.model_copy(update={
                              "status": "coexisting", "note": notes, "contradicts": _ids(new, in_context)}),
                          updated=updated, reason="both hold, each in its own context")

    newest = max(rivals, key=lambda e: e.said_at)
    if newest.said_at > new.said_at:
        late = new.model_copy(update={
            "valid_to": newest.valid_from, "superseded_by": newest.item_id, "status": "superseded",
            "note": f"said before {_describe(newest)}", "contradicts": _ids(new, [newest]),
        })
        return Resolution(action="supersede", item=late, reason="an older statement: it joins the history")
    why = f"superseded by {_describe(new)}"
    return Resolution(action="supersede", item=new.model_copy(update={"contradicts": _ids(new, rivals)}),
                      updated=tuple(_end(e, new, why) for e in rivals),
                      reason="negation" if new.polarity == "negative" else "a newer value")


def resolve_all(
    existing: Iterable[KnowledgeItem], new_items: Iterable[KnowledgeItem], params: KnowledgeParams | None = None,
) -> tuple[list[KnowledgeItem], list[Resolution]]:
    """Fold ``new_items`` (in the order said) into ``existing``: every item after resolution, and each step."""
    params = params or KnowledgeParams()
    items = {e.item_id: e for e in existing}
    steps: list[Resolution] = []
    for new in sorted(new_items, key=lambda i: i.said_at):
        step = resolve(list(items.values()), new, params)
        for u in step.updated:
            items[u.item_id] = u
        if step.item is not None:
            items[step.item.item_id] = step.item
        steps.append(step)
    return list(items.values()), steps


def current_facts(items: Iterable[KnowledgeItem]) -> list[KnowledgeItem]:
    """What holds now: current (or coexisting) positive items, newest first."""
    return sorted((i for i in items if i.is_current and i.polarity == "positive"), key=lambda i: -i.said_at)


def history(items: Iterable[KnowledgeItem], subject: str, attribute: str) -> list[KnowledgeItem]:
    """Every item of one subject and attribute, oldest first: how a fact changed."""
    return sorted((i for i in items if i.subject == subject and i.attribute == attribute), key=lambda i: i.said_at)
