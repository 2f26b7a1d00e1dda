"""Whether the Japanese dependency parse (``bench.ja_parse``) earns its place: the rules alone (off), the
rules and the parse (union), the parse alone (parse), on one half of the held-out Japanese timelines and on half
``b`` of the story templates, with the parse's load and per-sentence time.

    python -m bench.knowledge_ja_parse [--ids odd] [--per-language 48] [--out bench/results/knowledge_ja_parse.json]

The parse was tuned on the even-numbered timelines; the report half is the odd ones (``--ids odd``). Each mode's
figures carry 95% bootstrap intervals over timelines (stories); the gain of a mode over the rules in ``found`` and
``current_correct`` is paired (``bench.ablation_stats.contribution``: the same resampled timelines for both).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.ablation_stats import ConvSums, contribution
from bench.knowledge_halves import learned_rows, line, story_counts, story_turns, summarise
from bench.knowledge_heldout import FIGURES, in_half, score_timeline, timeline_turns

MODES = ("off", "union", "parse")
"""off: the hand rules alone; union: the rules' drafts and the parse's; parse: the parse's alone."""
PAIRED = ("found", "current_correct")


class UnknownParseMode(ValueError):
    """A mode that is not one of ``MODES``."""


def use(mode: str) -> None:
    """Read Japanese sentences in ``mode`` for the rest of the process: the extractor's Japanese entry point
    (``extract.extract_ja``) is swapped for one that adds or substitutes the parse's drafts; off puts the rules back."""
    from lumina_memory.nodes.knowledge import extract, ja_patterns

    if mode not in MODES:
        raise UnknownParseMode(f"unknown Japanese parse mode {mode!r}; expected one of {MODES}")
    if mode == "off":
        extract.extract_ja = ja_patterns.extract_ja
        return
    from bench.ja_parse import ParserUnavailable, available
    from bench.ja_parse_facts import parsed_drafts

    if not available():
        raise ParserUnavailable("the Japanese parse needs ja-ginza (see bench/ja_parse.py for the install)")

    def extract_ja(text, params, registry, said_at):
        drafts = ja_patterns.extract_ja(text, params, registry, said_at) if mode == "union" else []
        # the parse adds what the rules did not read: a value the rules read keeps the rules' reading only
        read = {(d.subject, d.value_key) for d in drafts}
        return drafts + [d for d in parsed_drafts(text, params, registry, said_at) if (d.subject, d.value_key) not in read]

    extract.extract_ja = extract_ja


def heldout(ids: str) -> dict[str, dict[str, Any]]:
    from bench.knowledge_independent import load

    timelines = [t for t in load("ja") if in_half(t["id"], ids)]
    per_mode: dict[str, list[dict[str, Any]]] = {}
    for mode in MODES:
        use(mode)
        per_mode[mode] = [score_timeline(t, learned_rows(timeline_turns(t))) for t in timelines]
    use("off")
    out: dict[str, dict[str, Any]] = {}
    for mode, scored in per_mode.items():
        out[mode] = {"timelines": len(scored), **summarise([s["counts"] for s in scored], FIGURES)}
        if mode != "off":
            out[mode]["gain_over_rules"] = {f: _paired(per_mode["off"], scored, f) for f in PAIRED}
        out[mode]["current"] = {s["id"]: s["current"] for s in scored}
    return out


def _paired(base: list[dict[str, Any]], other: list[dict[str, Any]], figure: str) -> dict[str, float]:
    def sums(scored):
        return {s["id"]: ConvSums(n=s["counts"][figure][1], recall=float(s["counts"][figure][0])) for s in scored}
    return contribution(sums(other), sums(base), "recall")


def template_half(per_language: int) -> dict[str, dict[str, Any]]:
    from bench.knowledge_score import score_story
    from bench.knowledge_story import DEFAULT_SEED, generate

    out: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        use(mode)
        per_story = []
        for story in generate(per_language, DEFAULT_SEED, ("ja",), half="b"):
            rows = learned_rows(story_turns(story))
            scored = score_story(story, {"story_id": story.story_id, "items": rows, "recalls": {}})
            per_story.append(story_counts(scored, story, rows))
        out[mode] = {"stories": len(per_story), **summarise(per_story)}
    use("off")
    return out


def timing() -> dict[str, float]:
    """Seconds to load the model (first parse) and mean milliseconds per sentence over the held-out user turns."""
    from bench import ja_parse
    from bench.knowledge_independent import load
    from lumina_memory.nodes.knowledge.extract import sentences

    texts = [s for t in load("ja") for turn in t["turns"] if turn["speaker"] == "user" for s in sentences(turn["text"])]
    started = time.perf_counter()
    ja_parse.parse("猫を飼っています")
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts:
        ja_parse.parse(text)
    per = (time.perf_counter() - started) / len(texts)
    return {"first_parse_s": round(loaded, 3), "ms_per_sentence": round(per * 1000, 2), "sentences": len(texts)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge_ja_parse", description=__doc__.splitlines()[0])
    parser.add_argument("--ids", choices=("all", "even", "odd"), default="odd")
    parser.add_argument("--per-language", type=int, default=48)
    parser.add_argument("--out", type=Path, default=Path("bench/results/knowledge_ja_parse.json"))
    args = parser.parse_args(argv)
    report = {"ids": args.ids, "timing": timing(), "heldout": heldout(args.ids),
              "template_b": template_half(args.per_language)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"TIMING {report['timing']}")
    for mode in MODES:
        h = report["heldout"][mode]
        print(f"HELDOUT ids={args.ids} {mode} {line(h, FIGURES)}")
        for f, g in h.get("gain_over_rules", {}).items():
            print(f"  gain {f} {g['delta']:+.3f} [{g['lo']:+.3f}, {g['hi']:+.3f}]")
    for mode in MODES:
        print(f"TEMPLATES half=b {mode} {line(report['template_b'][mode])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
