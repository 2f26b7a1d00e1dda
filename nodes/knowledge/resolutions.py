"""A5's resolution propagation into knowledge: the notes' third layer, where the daily consolidation reads the
resolved events and turns what knowledge calls open into resolved.

Daily (``knowledge_daily``), per user with new episodes, from the activity log's ``issue_opened`` and
``issue_resolved`` events (nodes.issues records them when segments become memories):

- every item the user raised (a problem, a worry, a task still pending) is a knowledge item of attribute
  ``issue`` about the user: the opening sentence as its text and its value (cut at ``max_value_chars``), the
  item's terms as its ``value_key``, its turn and segment as its sources. While open it is current, so the profile and priming present it.
- its resolution ends it, history kept ("had a cold → recovered"): a new item of the same slot with polarity
  ``negative`` (the resolving sentence, "no longer so") supersedes it; the ended item keeps its row with
  ``valid_to`` (when the resolving turn was said), ``superseded_by`` and ``note`` ``resolved: <that sentence>``,
  and recall lists it as resolved (nodes.knowledge.recall_items).
- the user's current plans about the item end with it, the same way: a plan said before the resolution, every
  term of whose value the item or its resolving sentence names, and at least one the resolving sentence names
  (「来月大阪に引っ越す予定」 ends with 「大阪への引っ越し終わった」; "visit Osaka" does not end when "the move to
  Osaka" is done). A plan sharing only a term with the item stays: which of two plans an item was about is not
  told by one shared noun (tests/test_issue_resolution_rule.py measures the rule on a ja+en set).

Item ids are deterministic (the opening or resolving turn and the slot), so a re-run writes nothing new.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from lumina_memory.nodes.activity import activity_log
from lumina_memory.nodes.issues import OPENED, RESOLVED, item_terms
from lumina_memory.stores.ids import validate_id

from .learn import item_of, params_of, row_of
from .models import USER, KnowledgeItem, knowledge_item_id

ISSUE = "issue"
RESOLVED_NOTE = "resolved: "
"""The ``note`` of an item a resolution ended, before the resolving sentence."""
ENDS_WITH_ISSUE = ("plan",)
"""Attributes of the current items a resolution may end besides the issue's own item."""


def _events(services, user_id: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(item id -> issue_opened event, item id -> its first issue_resolved event)."""
    opened: dict[str, dict[str, Any]] = {}
    resolved: dict[str, dict[str, Any]] = {}
    for event in activity_log(services.settings).events(user_id):
        item_id = event.get("item_id")
        if event.get("event") == OPENED and item_id:
            opened[item_id] = event
        elif event.get("event") == RESOLVED and item_id:
            resolved.setdefault(item_id, event)
    return opened, resolved


def _value(sentence: str, limit: int) -> str:
    """The opening sentence as a fact's value: cut at ``max_value_chars`` (its whole text stays the item's text)."""
    sentence = " ".join(sentence.split())
    return sentence if len(sentence) <= limit else sentence[: max(1, limit - 1)].rstrip() + "…"


def _issue_item(opened: Mapping[str, Any], source_ids: Mapping[str, str], confidence: float, limit: int, *,
                polarity: str = "positive", turn_id: str | None = None, text: str | None = None,
                ts: float | None = None) -> KnowledgeItem:
    """The open item's knowledge item, or (``polarity`` negative, with the resolving turn) its resolution."""
    key = " ".join(opened.get("terms") or item_terms(opened["text"]))
    turn = turn_id or opened["item_id"]
    said = float(opened["ts"] if ts is None else ts)
    return KnowledgeItem(
        item_id=knowledge_item_id(turn, USER, ISSUE, key, polarity), subject=USER, attribute=ISSUE,
        value=_value(opened["text"], limit), value_key=key, polarity=polarity, text=text or opened["text"],
        source_turn_ids=(turn,), source_ids=(source_ids.get(turn, turn),), said_at=said, valid_from=said,
        confidence=confidence, method="offline", pattern=ISSUE, note="" if polarity == "positive" else "resolved")


def _about(item: KnowledgeItem, issue_terms: set[str], resolution_terms: set[str], resolved_at: float) -> bool:
    """Whether a current item of the user is about the resolved issue (see the module docstring)."""
    if item.attribute not in ENDS_WITH_ISSUE or item.subject != USER or item.polarity != "positive":
        return False
    words = set(item_terms(item.value))
    return (bool(words) and item.said_at <= resolved_at and words <= issue_terms | resolution_terms
            and bool(words & resolution_terms))


def _ended(item: KnowledgeItem, by: KnowledgeItem, sentence: str) -> KnowledgeItem:
    return item.model_copy(update={"valid_to": by.said_at, "superseded_by": by.item_id, "status": "superseded",
                                   "note": RESOLVED_NOTE + sentence})


def propagate_resolutions(services, user_id: str, *, now: float | None = None) -> dict[str, int]:
    """Open items as current ``issue`` facts, resolved ones ended with their plans (module docstring); counts."""
    user_id = validate_id(user_id, "user_id")
    counts = {"issues": 0, "resolved": 0, "ended": 0}
    table = getattr(services.stores.archive, "knowledge", None)
    if table is None:
        return counts
    opened, resolved = _events(services, user_id)
    if not opened:
        return counts
    now = time.time() if now is None else now
    params = params_of(services)
    confidence, limit = params.confidence_offline, params.max_value_chars
    rows = {r["item_id"]: r for r in table.items(user_id, history=True)}
    turns = {*opened, *(e.get("resolved_turn") for e in resolved.values() if e.get("resolved_turn"))}
    source_ids = {t.turn_id: t.source_id for t in services.stores.archive.get_turns(user_id, sorted(turns))}
    written: dict[str, dict[str, Any]] = {}

    def write(item: KnowledgeItem, episodes) -> None:
        written[item.item_id] = rows[item.item_id] = row_of(item, user_id, episodes, now)

    for item_id, event in sorted(opened.items(), key=lambda kv: float(kv[1].get("ts") or 0.0)):
        issue = _issue_item(event, source_ids, confidence, limit)
        if issue.item_id not in rows:
            write(issue, [event["segment_id"]] if event.get("segment_id") else [])
            counts["issues"] += 1
        done = resolved.get(item_id)
        stored = item_of(rows[issue.item_id])
        if done is None or not stored.is_current or not done.get("resolved_turn"):
            continue
        sentence = str(done.get("text") or "")
        resolution = _issue_item(event, source_ids, confidence, limit, polarity="negative",
                                 turn_id=done["resolved_turn"], text=sentence, ts=float(done.get("ts") or now))
        episodes = [done["resolved_segment"]] if done.get("resolved_segment") else []
        write(resolution, episodes)
        write(_ended(stored, resolution, sentence), rows[issue.item_id]["episode_ids"])
        counts["resolved"] += 1
        issue_terms, resolution_terms = set(issue.value_key.split()), set(item_terms(sentence))
        for row in list(rows.values()):
            other = item_of(row)
            if other.is_current and other.item_id != resolution.item_id and _about(
                    other, issue_terms, resolution_terms, resolution.said_at):
                write(_ended(other, resolution, sentence), row["episode_ids"])
                counts["ended"] += 1
    table.upsert(list(written.values()))
    return counts
