"""The review state end to end: what learning keeps (``bench.knowledge_halves.learned_rows``: extract → validate
→ resolve → review, turn by turn), judged against the gold of the held-out timelines and the template stories.

Per unit (timeline or story), counts over the user's facts of attributes holding one value at a time (the ones
the review state watches):
- ``stale_left``: facts that ended (single-valued) but that a current item still states;
- ``stale_flagged``: of those, the ones stated only by items under review (said uncertain, not plain current);
- ``held``: facts still current that a current item states;
- ``held_flagged``: of those, the ones stated only by items under review (a review for nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.knowledge_halves import learned_rows, ratio_interval, story_turns
from bench.knowledge_heldout import states, timeline_turns
from bench.knowledge_match import is_current, pet_names
from bench.knowledge_match import states as story_states
from bench.knowledge_unread_cases import SINGLE

FIGURES = ("stale_flagged", "held_flagged")


def _counts(rows: Sequence[Mapping[str, Any]], ended: Sequence[Any], held: Sequence[Any],
            says: Callable[[Mapping[str, Any], Any], bool]) -> dict[str, int]:
    current = [r for r in rows if is_current(r) and r["polarity"] == "positive"]

    def only_flagged(fact) -> bool | None:
        stating = [r for r in current if says(r, fact)]
        return None if not stating else all(r.get("needs_review") for r in stating)

    stale = [only_flagged(f) for f in ended]
    kept = [only_flagged(f) for f in held]
    return {"stale_left": sum(s is not None for s in stale), "stale_flagged": sum(bool(s) for s in stale),
            "held": sum(k is not None for k in kept), "held_flagged": sum(bool(k) for k in kept)}


def timeline_counts(timeline: Mapping[str, Any]) -> dict[str, int]:
    rows = learned_rows(timeline_turns(timeline))
    facts = [f for f in timeline["expect"] if f["subject"] == "user" and f["attribute"] in SINGLE]
    ended = [f for f in facts if not f["current"]]
    held = [f for f in facts if f["current"]]
    return _counts(rows, ended, held, states)


def story_counts(story) -> dict[str, int]:
    rows = learned_rows(story_turns(story))
    pets = pet_names(rows, [f.value for f in [*story.current_facts, *story.superseded_facts] if f.attribute == "pet"])
    ended = [f for f in story.superseded_facts if f.subject == "user" and f.attribute in SINGLE]
    held = [f for f in story.current_facts if f.subject == "user" and f.attribute in SINGLE]
    return _counts(rows, ended, held,
                   lambda r, f: story_states(r, f.attribute, [f.value, *f.aliases], pets))


def summary(per_unit: Sequence[Mapping[str, int]]) -> dict[str, Any]:
    """stale_flagged over stale_left, held_flagged over held, with intervals over units."""
    return {"stale_flagged": ratio_interval([(u["stale_flagged"], u["stale_left"]) for u in per_unit]),
            "held_flagged": ratio_interval([(u["held_flagged"], u["held"]) for u in per_unit])}
