"""The unread-update detector (``nodes.knowledge.update_signals``) on the held-out timelines and the template
stories: updates caught and false reviews, the threshold tuned on one half and reported on the other, with 95%
bootstrap intervals over timelines / stories.

    python -m bench.knowledge_unread [--stories 24] [--out bench/results/knowledge_unread.json]

Cases (``bench.knowledge_unread_cases``): a user turn beside one current fact of the same user, labelled by the
gold as the turn that ends the fact (an update) or not. A turn flags a fact when one of its sentences is a user
statement saying a change (structure) and its meaning score for the fact reaches the threshold. Figures per
language and source (held-out timelines, template stories):

- ``caught``: update cases flagged, over update cases (the detector's recall, whatever the rules read);
- ``false_review``: non-update cases flagged, over non-update cases (a fact that would be put under review
  for nothing, were the sentence unread by the rules).

Tuning: the threshold is the one with the most right reviews less wrong ones (flagged update cases − flagged
non-update cases) on the tuning half (timelines with an even number, template stories of phrase half ``a``),
pooled over both languages; the report is on the other half
(odd timelines, half ``b``) at that threshold and at the one the code ships (``update_signals.THRESHOLD``).
The ``LEARNT`` lines are the review state after learning (``bench.knowledge_unread_e2e``): of the ended facts a
current item still states, the share said uncertain (``stale_flagged``), and of the facts still current, the
share put under review for nothing (``held_flagged``). Only sentences no rule read are reviewed there.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.knowledge_halves import ratio_interval
from bench.knowledge_story import DEFAULT_SEED
from bench.knowledge_unread_cases import Case, heldout_cases, split, template_cases

LANGUAGES = ("en", "ja")
GRID = tuple(round(t, 2) for t in np.arange(0.0, 0.41, 0.01))


def case_scores(cases: Sequence[Case], params=None) -> np.ndarray:
    """Per case, the best meaning score among the turn's sentences that have an update's structure (-1: none)."""
    from lumina_memory.nodes.knowledge.extract import sentences
    from lumina_memory.nodes.knowledge.params import KnowledgeParams
    from lumina_memory.nodes.knowledge.update_signals import is_user_statement, meaning_scores, says_change

    params = params or KnowledgeParams()
    out = np.full(len(cases), -1.0)
    for n, case in enumerate(cases):
        said = [s for s in sentences(case.turn) if is_user_statement(s, params, case.turn) and says_change(s)]
        if said:
            out[n] = float(meaning_scores(said, [(case.attribute, case.value)]).max())
    return out


def figures(units: Mapping[str, Sequence[Case]], scores: Mapping[str, np.ndarray], threshold: float) -> dict[str, Any]:
    caught, false = [], []
    for unit, cases in units.items():
        flagged = scores[unit] >= threshold
        update = np.array([c.update for c in cases], dtype=bool)
        caught.append((int((flagged & update).sum()), int(update.sum())))
        false.append((int((flagged & ~update).sum()), int((~update).sum())))
    return {"caught": ratio_interval(caught), "false_review": ratio_interval(false)}


def tune(sets: Sequence[tuple[Mapping[str, Sequence[Case]], Mapping[str, np.ndarray]]]) -> tuple[float, list]:
    """The grid threshold with the most right reviews less wrong ones (update cases flagged − non-update cases
    flagged, pooled over ``sets``; ties: the higher). Counts, not rates: a fact meets many more turns that do
    not change it than turns that do, and every flagged case is one review, right or wrong."""
    curve = []
    for t in GRID:
        parts = [figures(units, scores, t) for units, scores in sets]
        right = sum(p["caught"]["part"] for p in parts)
        wrong = sum(p["false_review"]["part"] for p in parts)
        curve.append((t, int(right), int(wrong)))
    best = max(curve, key=lambda c: (c[1] - c[2], c[0]))
    return best[0], curve


def run(stories: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    from lumina_memory.nodes.knowledge.update_signals import THRESHOLD

    halves: dict[str, dict[str, Any]] = {"tuning": {}, "report": {}}
    for language in LANGUAGES:
        held = heldout_cases(language)
        sources = {
            "tuning": {"timelines": split(held, True), "stories": template_cases(language, stories, "a", seed)},
            "report": {"timelines": split(held, False), "stories": template_cases(language, stories, "b", seed)},
        }
        for half, by_source in sources.items():
            for source, units in by_source.items():
                halves[half][f"{language}/{source}"] = (units, {u: case_scores(c) for u, c in units.items()})
    tuned, curve = tune(list(halves["tuning"].values()))
    report: dict[str, Any] = {"tuned_threshold": tuned, "shipped_threshold": THRESHOLD, "curve_tuning": curve}
    for half, sets in halves.items():
        report[half] = {name: {"at_tuned": figures(u, s, tuned), "at_shipped": figures(u, s, THRESHOLD),
                               "units": len(u), "cases": sum(len(c) for c in u.values())}
                        for name, (u, s) in sets.items()}
    report["end_to_end"] = end_to_end(stories, seed)
    report["report_misses"] = {name: [f"{c.attribute}={c.value}: {c.turn[:120]}" for unit, cases in u.items()
                                      for c, sc in zip(cases, s[unit]) if c.update and sc < THRESHOLD]
                               for name, (u, s) in halves["report"].items()}
    return report


def end_to_end(stories: int, seed: int) -> dict[str, Any]:
    """The review state after learning (``bench.knowledge_unread_e2e``), on each half."""
    from bench.knowledge_independent import load
    from bench.knowledge_story import generate
    from bench.knowledge_unread_cases import even
    from bench.knowledge_unread_e2e import story_counts, summary, timeline_counts

    out: dict[str, Any] = {}
    for language in LANGUAGES:
        timelines = load(language)
        for half, tuning, phrases in (("tuning", True, "a"), ("report", False, "b")):
            out[f"{half} {language}/timelines"] = summary(
                [timeline_counts(t) for t in timelines if even(t["id"]) == tuning])
            out[f"{half} {language}/stories"] = summary(
                [story_counts(s) for s in generate(stories, seed, (language,), half=phrases)])
    return out


def _one(r: Mapping[str, Any]) -> str:
    if r["value"] is None:
        return "n/a"
    return f"{r['value']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] ({r['part']:.0f}/{r['whole']:.0f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge_unread", description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=24, help="template stories per language and half")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=Path("bench/results/knowledge_unread.json"))
    args = parser.parse_args(argv)
    report = run(args.stories, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"threshold tuned={report['tuned_threshold']} shipped={report['shipped_threshold']}")
    for half in ("tuning", "report"):
        for name, r in report[half].items():
            at = r["at_shipped"]
            print(f"RESULT {half} {name} units={r['units']} cases={r['cases']} caught={_one(at['caught'])} "
                  f"false_review={_one(at['false_review'])}")
    for name, r in report["end_to_end"].items():
        print(f"LEARNT {name} stale_flagged={_one(r['stale_flagged'])} held_flagged={_one(r['held_flagged'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
