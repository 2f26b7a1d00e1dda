"""The offline extractor on the two halves of the story templates: rules are written against half ``a`` and
judged on half ``b`` (``bench.knowledge_phrases.user_lines``), per language, with 95% bootstrap intervals over
stories.

    python -m bench.knowledge_halves [--per-language 48] [--half a|b|both] [--out bench/results/knowledge_halves.json]

Each story's user turns go through what learning does to them without the stores (``extract_items`` →
``validate_items`` → ``resolve_all``), and the stored rows are judged by ``bench.knowledge_score.score_story``
(no recall: the figures are the extraction's). Figures per language and half:

- ``precision``: current stored facts about the user that state a gold current fact, over those judged;
- ``recall``: gold current facts a current item states;
- ``current_accuracy``: gold current facts of attributes holding one value (drink, lives_in …) whose value is
  current, over those facts;
- ``stale``: gold superseded values still current, over the gold superseded facts;
- ``stale_plain``: of those, the ones still current as plain fact (not under review: ``nodes.knowledge.unread``).

The interval of a ratio resamples stories (numerator and denominator drawn together).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.knowledge_match import is_current, pet_names, states
from bench.knowledge_phrases import HALVES
from bench.knowledge_records import LANGUAGES, Story
from bench.knowledge_score import score_story
from bench.knowledge_story import DEFAULT_PER_LANGUAGE, DEFAULT_SEED, generate

RESAMPLES = 1000
SEED = 7


def ratio_interval(pairs: Sequence[tuple[float, float]], resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = 0.95) -> dict[str, Any]:
    """sum(part) / sum(whole) over units (stories, timelines) and its percentile bootstrap interval resampling
    units. ``pairs``: (part, whole) per unit."""
    part = np.array([p for p, _ in pairs], dtype=np.float64)
    whole = np.array([w for _, w in pairs], dtype=np.float64)
    if not len(pairs) or whole.sum() == 0:
        return {"value": None, "lo": None, "hi": None, "part": float(part.sum()), "whole": float(whole.sum())}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(pairs), size=(resamples, len(pairs)))
    n = whole[draws].sum(axis=1)
    ok = n > 0
    boot = part[draws].sum(axis=1)[ok] / n[ok]
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return {"value": round(float(part.sum() / whole.sum()), 4), "lo": round(float(lo), 4), "hi": round(float(hi), 4),
            "part": float(part.sum()), "whole": float(whole.sum())}


def learned_rows(turns: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What learning stores from ``turns`` (dicts with turn_id, speaker, text, ts), as table rows: each turn is
    learnt as a segment of its own (resolved, then the review of facts an unread sentence may have made stale)."""
    from lumina_memory.nodes.knowledge import unread
    from lumina_memory.nodes.knowledge.extract import extract_items
    from lumina_memory.nodes.knowledge.ground import validate_items
    from lumina_memory.nodes.knowledge.params import KnowledgeParams
    from lumina_memory.nodes.knowledge.resolve import resolve_all

    params = KnowledgeParams()
    turns = list(turns)
    kept = validate_items(extract_items(turns, params), turns, params).kept
    review = getattr(unread, "review_items", None)  # absent from extractors older than the review state
    items: dict[str, Any] = {}
    for turn in turns:
        said = [i for i in kept if turn["turn_id"] in i.source_turn_ids]
        folded, _ = resolve_all(items.values(), said, params)
        items = {i.item_id: i for i in folded}
        for item in review(items.values(), [turn], said, params) if review else ():
            items[item.item_id] = item
    return [{**item.model_dump(), "needs_review": unread.needs_review(item) if review else False}
            for item in items.values()]


def story_turns(story: Story) -> list[dict[str, Any]]:
    return [{"turn_id": t.turn_id, "source_id": t.turn_id, "speaker": t.speaker, "text": t.text,
             "ts": t.at.timestamp()} for t in story.turns()]


def story_counts(scored: dict[str, Any], story: Story | None = None,
                 rows: Sequence[dict[str, Any]] = ()) -> dict[str, tuple[int, int]]:
    """(part, whole) of each figure for one scored story; ``stale_plain`` (a stale value current and not under
    review) needs the story and its rows."""
    extracted = [e for e in scored["extracted"] if e["verdict"] != "pet_species"]
    single = [c for c in scored["current"] if not c["many"]]
    return {
        "precision": (sum(e["verdict"] == "correct" for e in extracted), len(extracted)),
        "recall": (sum(c["outcome"] == "found" for c in scored["current"]), len(scored["current"])),
        "current_accuracy": (sum(c["outcome"] == "found" for c in single), len(single)),
        "stale": (sum(r["outcome"] == "still_current" for r in scored["superseded"]), len(scored["superseded"])),
        "stale_plain": (_stale_plain(story, rows) if story else 0, len(scored["superseded"])),
    }


def _stale_plain(story: Story, rows: Sequence[dict[str, Any]]) -> int:
    pets = pet_names(rows, [f.value for f in [*story.current_facts, *story.superseded_facts] if f.attribute == "pet"])
    return sum(any(is_current(r) and not r.get("needs_review") and states(r, f.attribute, [f.value, *f.aliases], pets)
                   for r in rows) for f in story.superseded_facts)


FIGURES = ("precision", "recall", "current_accuracy", "stale", "stale_plain")


def summarise(per_unit: Sequence[dict[str, tuple[int, int]]], figures: Sequence[str] = FIGURES) -> dict[str, Any]:
    return {f: ratio_interval([u[f] for u in per_unit]) for f in figures}


def run_half(half: str, per_language: int, seed: int = DEFAULT_SEED,
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for language in LANGUAGES:
        per_story, misses = [], []
        for story in generate(per_language, seed, (language,), half=half):
            rows = learned_rows(story_turns(story))
            scored = score_story(story, {"story_id": story.story_id, "items": rows, "recalls": {}})
            per_story.append(story_counts(scored, story, rows))
            misses += [f"{c['attribute']}: {c['sentence']}" for c in scored["current"] if c["outcome"] != "found"]
        out[language] = {"stories": len(per_story), **summarise(per_story), "misses": misses}
        if progress:
            progress(f"{half} {language} " + line(out[language]))
    return out


def line(report: dict[str, Any], figures: Sequence[str] = FIGURES) -> str:
    def one(f: str) -> str:
        r = report[f]
        return f"{f}=n/a" if r["value"] is None else f"{f}={r['value']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]"
    return " ".join(one(f) for f in figures)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge_halves", description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=DEFAULT_PER_LANGUAGE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--half", choices=(*HALVES, "both"), default="both")
    parser.add_argument("--out", type=Path, default=Path("bench/results/knowledge_halves.json"))
    args = parser.parse_args(argv)
    halves = HALVES if args.half == "both" else (args.half,)
    report = {"per_language": args.per_language, "seed": args.seed,
              "halves": {h: run_half(h, args.per_language, args.seed, lambda s: print(s, file=sys.stderr))
                         for h in halves}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    for h in halves:
        for language in LANGUAGES:
            print(f"RESULT half={h} {language} {line(report['halves'][h][language])}")
    return 0


__all__ = ["FIGURES", "learned_rows", "line", "ratio_interval", "run_half", "story_counts", "summarise"]

if __name__ == "__main__":
    raise SystemExit(main())
