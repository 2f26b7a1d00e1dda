"""Scoring one story of the knowledge benchmark: what the pipeline stored and recalled (a ``StoryObservation``)
against the story's gold (``bench.knowledge_records.Story``). Pure functions; ``bench.knowledge_totals`` adds the
stories up per language. Matching: ``bench.knowledge_match``.

What is judged, per story:

- ``extracted``: every current stored fact about the user — correct (it states a gold current fact), not judged
  (``pet_species``: a ``pet`` item holding a species, 「うち猫飼ってるの」, which the store's vocabulary allows and the
  gold, naming pets only, does not hold), or why not: ``stale`` (a gold superseded value still current), ``distractor`` (a distractor's value), ``wrong_attribute``
  (a gold current value under another attribute), ``outside_vocabulary`` (an attribute the stories never state
  about the user: job titles, possessions, events…), ``unsupported`` (anything else);
- ``current``: every gold current fact — ``found`` (a current item states it), ``ended`` (stored, but no longer
  current), ``wrong_attribute`` (its value is current under another attribute), ``not_extracted``;
- ``accumulating``: a gold fact of a "many" attribute (likes, visited…) stored but no longer held (ended, or a
  current negative item denies it) is ``over_invalidated``;
- ``superseded``: a gold superseded fact is ``stored_superseded`` when stored and no current item states it,
  ``still_current`` when one does, ``not_extracted`` otherwise; ``linked`` when the ended item points
  (``superseded_by``) at an item holding the gold successor's value;
- ``distractors``: a distractor whose value is stated by a current fact about the user is a false positive;
- ``order``: for each gold superseded fact (a supersession, not a negation) and the story's current-tense question
  about its attribute, where recall puts the old fact and its successor — the value that holds at the story's end
  (for coffee → tea → cocoa, cocoa is the successor of both coffee and tea). A fact is "at" the first recall item
  that is a knowledge item stating it or an episode holding one of its evidence turns. The old fact is ranked below
  its successor when the successor is there and the old one comes later or not at all;
- ``past``: for each past-tense question, whether recall reaches the fact asked about (the last value that ended)
  and whether it comes ahead of the current one;
- ``evidence``: every question's evidence recall within the budget (the share of its evidence turns among the
  source turns of the items packed), as ``bench.locomo`` scores LoCoMo.

Recall is observed twice per question, with the knowledge switch on and off (``recall(..., disabled=["knowledge"])``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from typing_extensions import TypedDict

from bench.knowledge_match import (
    denies, gold_attribute, is_current, is_user_fact, normalise, pet_names, states, value_matches,
)
from bench.knowledge_phrases import PET_KINDS
from bench.knowledge_records import ATTRIBUTES, MANY, Fact, Story, SupersededFact

Row = Mapping[str, Any]


class RecallRun(TypedDict):
    """One question's recall, knowledge on and off: the items as recall returned them (within the budget)."""

    question: str
    on: list[dict[str, Any]]
    off: list[dict[str, Any]]


class StoryObservation(TypedDict):
    """What the pipeline left for one story: every stored knowledge item (``history=True``) and the recalls."""

    story_id: str
    items: list[dict[str, Any]]
    recalls: dict[str, RecallRun]


ROW_FIELDS = ("item_id", "subject", "attribute", "value", "value_key", "polarity", "detail", "status", "valid_to",
              "superseded_by", "source_ids", "text")
RECALL_FIELDS = ("kind", "item_id", "status", "source_ids", "tokens", "text")


def slim_row(row: Row) -> dict[str, Any]:
    out = {k: row.get(k) for k in ROW_FIELDS}
    out["source_ids"] = list(out["source_ids"] or [])
    return out


def slim_recall_item(item: Row) -> dict[str, Any]:
    from lumina_memory.nodes.retrieval.budget import count_tokens

    out = {k: item.get(k) for k in RECALL_FIELDS}
    out["counted_tokens"] = count_tokens(str(item.get("text") or ""))  # the budget's count of the whole text
    out["source_ids"] = list(out["source_ids"] or [])
    out["text"] = str(out["text"] or "")[:160]
    return out


def _values(fact: Fact) -> list[str]:
    return [fact.value, *fact.aliases]


def _brief(row: Row) -> str:
    polarity = "" if row["polarity"] == "positive" else "not "
    subject = "" if row["subject"] == "user" else f"{row['subject']}."
    return f"{subject}{row['attribute']}={polarity}{row['value']} ({row['status']})"


def _got(rows: Sequence[Row], turn_ids: Sequence[str]) -> list[str]:
    """What the extractor made of these turns (any subject, polarity or status), for the misses' examples."""
    wanted = set(turn_ids)
    return [_brief(r) for r in rows if wanted & set(r["source_ids"] or ())]


def _text(story: Story, turn_id: str) -> str:
    try:
        return story.turn(turn_id).text
    except KeyError:
        return ""


def _pets(story: Story, rows: Sequence[Row]) -> set[str]:
    gold = [f.value for f in [*story.current_facts, *story.superseded_facts] if f.attribute == "pet"]
    return pet_names(rows, gold)


def _species(language: str) -> set[str]:
    return {normalise(kind) for kind in PET_KINDS[language]}


def _extracted(story: Story, rows: Sequence[Row], pets: set[str]) -> list[dict[str, Any]]:
    out = []
    claimed: dict[int, int] = {}
    for row in rows:
        if not (is_current(row) and is_user_fact(row, pets)):
            continue
        attribute = gold_attribute(row, pets)
        hit = next((n for n, f in enumerate(story.current_facts)
                    if f.attribute == attribute and value_matches(row, _values(f))), None)
        if hit is not None:
            verdict = "correct"
            claimed[hit] = claimed.get(hit, 0) + 1
        elif attribute == "pet" and normalise(row["value"]) in _species(story.language):
            verdict = "pet_species"  # 「うち猫飼ってるの」: the store's pet holds a species kept; the gold only names
        elif any(f.attribute == attribute and value_matches(row, _values(f)) for f in story.superseded_facts):
            verdict = "stale"
        elif any(value_matches(row, [d.value]) for d in story.distractors):
            verdict = "distractor"
        elif any(value_matches(row, _values(f)) for f in story.current_facts):
            verdict = "wrong_attribute"
        elif attribute not in ATTRIBUTES:
            verdict = "outside_vocabulary"
        else:
            verdict = "unsupported"
        out.append({"attribute": attribute, "stored_attribute": row["attribute"], "value": row["value"],
                    "verdict": verdict, "duplicate": hit is not None and claimed[hit] > 1,
                    "turn_ids": list(row["source_ids"] or []), "sentence": row["text"]})
    return out


def _current(story: Story, rows: Sequence[Row], pets: set[str]) -> list[dict[str, Any]]:
    out = []
    for fact in story.current_facts:
        values = _values(fact)
        stored = [r for r in rows if states(r, fact.attribute, values, pets)]
        if any(is_current(r) for r in stored):
            outcome = "found"
        elif stored:
            outcome = "ended"
        elif any(is_current(r) and is_user_fact(r, pets) and value_matches(r, values) for r in rows):
            outcome = "wrong_attribute"
        else:
            outcome = "not_extracted"
        out.append({"attribute": fact.attribute, "value": fact.value, "outcome": outcome,
                    "many": ATTRIBUTES[fact.attribute] == MANY, "turn_ids": list(fact.evidence),
                    "sentence": _text(story, fact.evidence[0]), "got": _got(rows, fact.evidence)})
    return out


def _accumulating(story: Story, rows: Sequence[Row], pets: set[str]) -> list[dict[str, Any]]:
    by_id = {r["item_id"]: r for r in rows}
    out = []
    for fact in story.accumulating_facts:
        values = _values(fact)
        stored = [r for r in rows if states(r, fact.attribute, values, pets)]
        denied = [r for r in rows if denies(r, fact.attribute, values, pets)]
        held = any(is_current(r) for r in stored) and not denied
        outcome = "not_extracted" if not stored else "kept" if held else "over_invalidated"
        ended_by = [by_id[r["superseded_by"]] for r in stored if r["superseded_by"] in by_id] + denied
        out.append({"attribute": fact.attribute, "value": fact.value, "outcome": outcome,
                    "turn_ids": list(fact.evidence), "sentence": _text(story, fact.evidence[0]),
                    "ended_by": [f"{_brief(r)} from {r['text']!r}" for r in ended_by]})
    return out


def _superseded(story: Story, rows: Sequence[Row], pets: set[str]) -> list[dict[str, Any]]:
    by_id = {r["item_id"]: r for r in rows}
    out = []
    for fact in story.superseded_facts:
        stored = [r for r in rows if states(r, fact.attribute, _values(fact), pets)]
        current = [r for r in stored if is_current(r)]
        outcome = "not_extracted" if not stored else "still_current" if current else "stored_superseded"
        linked = None
        if fact.how == "supersede" and outcome == "stored_superseded":
            successors = [by_id.get(r["superseded_by"]) for r in stored]
            linked = any(s is not None and value_matches(s, [fact.superseded_by]) for s in successors)
        out.append({"attribute": fact.attribute, "value": fact.value, "how": fact.how, "outcome": outcome,
                    "linked": linked, "superseded_by": fact.superseded_by, "ended_by": fact.ended_by,
                    "sentence": _text(story, fact.ended_by), "got": [_brief(r) for r in current]})
    return out


def _distractors(story: Story, rows: Sequence[Row], pets: set[str]) -> list[dict[str, Any]]:
    out = []
    for d in story.distractors:
        taken = [r for r in rows if is_current(r) and is_user_fact(r, pets) and value_matches(r, [d.value])]
        out.append({"attribute": d.attribute, "value": d.value, "kind": d.kind, "subject": d.subject,
                    "false_positive": bool(taken), "turn_ids": [d.turn_id], "sentence": _text(story, d.turn_id),
                    "got": [_brief(r) for r in taken]})
    return out


def position(items: Sequence[Row], fact: Fact, rows_by_id: Mapping[str, Row], pets: set[str]) -> int | None:
    """Where recall puts a fact: the first item that is a knowledge item stating it, or an episode holding one of
    its evidence turns (None: not in the recalled items)."""
    evidence = set(fact.evidence)
    for n, item in enumerate(items):
        if item.get("kind") == "knowledge":
            row = rows_by_id.get(item.get("item_id"))
            if row is not None and row["polarity"] == "positive" and \
                    gold_attribute(row, pets) == fact.attribute and value_matches(row, _values(fact)):
                return n
        elif evidence & set(item.get("source_ids") or ()):
            return n
    return None


def _current_successor(story: Story, old: SupersededFact) -> Fact | None:
    """The value that holds at the story's end in place of ``old``: its successor, or the successor's successor
    (coffee → tea → cocoa: cocoa for both coffee and tea); None when the chain ends in a negation."""
    fact: Fact = old
    for _ in range(len(story.superseded_facts) + 1):
        if not isinstance(fact, SupersededFact) or fact.superseded_by is None:
            return None
        ended = fact
        fact = next((f for f in [*story.current_facts, *story.superseded_facts]
                     if f.attribute == ended.attribute and f.value == ended.superseded_by
                     and ended.ended_by in f.evidence), None)
        if fact is None:
            return None
        if not isinstance(fact, SupersededFact):
            return fact
    return None


def _order(story: Story, obs: StoryObservation, rows_by_id, pets) -> list[dict[str, Any]]:
    out = []
    for old in story.superseded_facts:
        question = next((q for q in story.questions if q.tense == "current" and q.attribute == old.attribute), None)
        new = _current_successor(story, old) if old.how == "supersede" else None
        if question is None or new is None or question.question not in obs["recalls"]:
            continue
        run = obs["recalls"][question.question]
        row: dict[str, Any] = {"attribute": old.attribute, "old": old.value, "new": new.value,
                               "question": question.question}
        for switch in ("on", "off"):
            at_old = position(run[switch], old, rows_by_id, pets)
            at_new = position(run[switch], new, rows_by_id, pets)
            row[switch] = {"old_at": at_old, "new_at": at_new,
                           "below": at_new is not None and (at_old is None or at_old > at_new)}
        out.append(row)
    return out


def _past(story: Story, obs: StoryObservation, rows_by_id, pets) -> list[dict[str, Any]]:
    out = []
    for question in story.questions:
        if question.tense != "past" or question.question not in obs["recalls"]:
            continue
        old = next((f for f in story.superseded_facts
                    if f.attribute == question.attribute and f.value == question.answer), None)
        if old is None:
            continue
        now = [f for f in story.current_facts if f.attribute == question.attribute]
        run = obs["recalls"][question.question]
        row: dict[str, Any] = {"attribute": question.attribute, "answer": old.value, "question": question.question}
        for switch in ("on", "off"):
            at_old = position(run[switch], old, rows_by_id, pets)
            at_now = [p for f in now if (p := position(run[switch], f, rows_by_id, pets)) is not None]
            row[switch] = {"old_at": at_old, "reached": at_old is not None,
                           "old_first": at_old is not None and all(at_old < p for p in at_now)}
        out.append(row)
    return out


def _evidence(story: Story, obs: StoryObservation) -> list[dict[str, Any]]:
    out = []
    for question in story.questions:
        run = obs["recalls"].get(question.question)
        if run is None:
            continue
        row: dict[str, Any] = {"question": question.question, "tense": question.tense, "attribute": question.attribute}
        for switch in ("on", "off"):
            covered = {s for item in run[switch] for s in item.get("source_ids") or ()}
            found = sum(1 for e in question.evidence if e in covered)
            row[switch] = {"recall": found / len(question.evidence), "hit": found == len(question.evidence)}
        out.append(row)
    return out


def score_story(story: Story, obs: StoryObservation) -> dict[str, Any]:
    """Every judgement on one story (see the module docstring), each row with the turns and sentence behind it."""
    rows = obs["items"]
    pets = _pets(story, rows)
    rows_by_id = {r["item_id"]: r for r in rows}
    return {
        "story_id": story.story_id, "language": story.language, "turns": len(story.turns()),
        "extracted": _extracted(story, rows, pets),
        "current": _current(story, rows, pets),
        "accumulating": _accumulating(story, rows, pets),
        "superseded": _superseded(story, rows, pets),
        "distractors": _distractors(story, rows, pets),
        "order": _order(story, obs, rows_by_id, pets),
        "past": _past(story, obs, rows_by_id, pets),
        "evidence": _evidence(story, obs),
    }


__all__ = ["RecallRun", "StoryObservation", "normalise", "position", "score_story", "slim_recall_item", "slim_row"]
