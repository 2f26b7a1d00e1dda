"""The offline extractor on the held-out timelines (``bench.knowledge_independent``: sentences written by someone
who had not read the rules), per language, with 95% bootstrap intervals over timelines.

    python -m bench.knowledge_heldout [--out bench/results/knowledge_heldout.json] [--ja-parse off|union|parse]
                                      [--ids all|even|odd]

``--ja-parse`` chooses how Japanese sentences are read (``bench.knowledge_ja_parse.MODES``: the rules alone, the
rules and the dependency parse, the parse alone); ``--ids even|odd`` scores the timelines of even or odd number
only (tune on one, report on the other).

Each timeline's turns (day n → n days after a fixed start, turns 30 s apart) go through what learning does without
the stores (``bench.knowledge_halves.learned_rows``: extract → validate → resolve). An expected fact is met by a
stored positive item of the same subject (``user``, or the name / relation as written), the same attribute and a
matching value (``bench.knowledge_match.same_value``). Figures per language:

- ``found``: expected facts some stored item states (current or not), over all expected facts;
- ``current_correct``: expected current facts a current item states, over the expected current facts;
- ``stale_current``: expected facts no longer current that a current item still states as plain fact (not marked
  for review), over the expected non-current facts of single-valued attributes;
- ``stale_flagged``: of those, the ones a current item states but marked ``needs_review`` (said uncertain);
- ``precision``: current positive items that state an expected fact, over current positive items;
- ``absent_taken``: values the timeline says must not be learnt that a current item states, over those values.

The last lines printed are ``RESULT <lang> …`` per language; the JSON holds every timeline's misses. The figures
only: the timelines are for scoring, never for tuning rules.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.knowledge_halves import learned_rows, line, summarise
from bench.knowledge_match import is_current, normalise, same_value

START = 1_704_067_200.0  # 2024-01-01 UTC: day 0 of every timeline
FIGURES = ("found", "current_correct", "stale_current", "stale_flagged", "precision", "absent_taken")
SINGLE_VALUED = frozenset(("drink", "food", "film", "name", "lives_in", "from", "works_at", "job", "partner", "age"))


def timeline_turns(timeline: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"turn_id": f"{timeline['id']}:{n}", "source_id": f"{timeline['id']}:{n}", "speaker": t["speaker"],
             "text": t["text"], "ts": START + t["day"] * 86_400.0 + n * 30.0}
            for n, t in enumerate(timeline["turns"])]


def _same_subject(row_subject: str, subject: str) -> bool:
    if subject == "user" or row_subject == "user":
        return subject == row_subject
    a, b = normalise(row_subject), normalise(subject)
    return bool(a) and (a == b or same_value(a, b))


def states(row: Mapping[str, Any], fact: Mapping[str, Any]) -> bool:
    return (row["polarity"] == "positive" and row["attribute"] == fact["attribute"]
            and _same_subject(row["subject"], fact["subject"])
            and any(same_value(said, fact["value"]) for said in (row["value"], row["value_key"]) if said))


def score_timeline(timeline: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    expect = timeline["expect"]
    current_rows = [r for r in rows if is_current(r) and r["polarity"] == "positive"]
    plain = [r for r in current_rows if not r.get("needs_review")]
    flagged = [r for r in current_rows if r.get("needs_review")]
    held = [f for f in expect if f["current"]]
    ended = [f for f in expect if not f["current"] and f["attribute"] in SINGLE_VALUED]
    absent = timeline.get("absent", [])
    found = [f for f in expect if any(states(r, f) for r in rows)]
    counts = {
        "found": (len(found), len(expect)),
        "current_correct": (sum(any(states(r, f) for r in current_rows) for f in held), len(held)),
        "stale_current": (sum(any(states(r, f) for r in plain) for f in ended), len(ended)),
        "stale_flagged": (sum(any(states(r, f) for r in flagged) for f in ended), len(ended)),
        "precision": (sum(any(states(r, f) for f in expect) for r in current_rows), len(current_rows)),
        "absent_taken": (sum(any(states(r, f) for r in current_rows) for f in absent), len(absent)),
    }
    misses = [f"{f['subject']}.{f['attribute']}={f['value']}" for f in expect if f not in found]
    got = [f"{r['subject']}.{r['attribute']}={r['value']}{' (review)' if r.get('needs_review') else ''}"
           for r in current_rows]
    return {"id": timeline["id"], "counts": counts, "misses": misses, "current": got}


def in_half(timeline_id: str, ids: str) -> bool:
    """``ids``: all, even or odd (by the number after the language prefix, ja-07 → 7)."""
    return ids == "all" or (int(timeline_id.rsplit("-", 1)[1]) % 2 == 0) == (ids == "even")


def run(languages: Sequence[str], ids: str = "all") -> dict[str, Any]:
    from bench.knowledge_independent import load

    out: dict[str, Any] = {}
    for language in languages:
        scored = []
        for timeline in (t for t in load(language) if in_half(t["id"], ids)):
            scored.append(score_timeline(timeline, learned_rows(timeline_turns(timeline))))
        out[language] = {"timelines": len(scored), **summarise([s["counts"] for s in scored], FIGURES),
                         "per_timeline": scored}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.knowledge_heldout", description=__doc__.splitlines()[0])
    parser.add_argument("--language", choices=("en", "ja", "both"), default="both")
    parser.add_argument("--out", type=Path, default=Path("bench/results/knowledge_heldout.json"))
    parser.add_argument("--ja-parse", choices=("off", "union", "parse"), default=None,
                        help="how Japanese sentences are read (default: the extractor's rules)")
    parser.add_argument("--ids", choices=("all", "even", "odd"), default="all")
    args = parser.parse_args(argv)
    languages = ("en", "ja") if args.language == "both" else (args.language,)
    if args.ja_parse:
        from bench.knowledge_ja_parse import use

        use(args.ja_parse)
    report = run(languages, args.ids)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    for language in languages:
        print(f"RESULT {language} timelines={report[language]['timelines']} {line(report[language], FIGURES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
