"""Facts that depend on a changed fact (F6): how many dependents a change puts under review, how many it misses,
how many unrelated facts it touches — on the project's own scenarios, Japanese and English.

    python -m bench.dependent_facts [--half dev|report] [--same-turn] [--out bench/results/dependent_facts.json]
    python -m bench.dependent_facts --heldout [--out …]   # facts touched on the held-out timelines

Each scenario (``bench/data/dependent_facts.jsonl``, written by the project) is learnt on a real DuckDB archive
through ``nodes.knowledge.learn.learn_segments``, the path a closed segment takes: the ``before`` turns as one
segment, the ``change`` turns as a second one a month later. Then, of the facts read:

- ``caught``: facts listed as ``dependent`` put under review because a fact they rest on changed;
- ``missed``: the other ``dependent`` facts read;
- ``wrongly_touched``: facts listed as ``untouched`` put under review so;
- ``not_read``: listed facts the extractor did not read (no item's value holds the words), reported, not scored.

A listed fact is the item whose value holds the words. The change itself must supersede the fact it changes
(``change_read``). Rates are sums over scenarios with 95% percentile-bootstrap intervals resampling scenarios.
Halves: scenarios with an odd number are the dev half (looked at while the rules were written), even ones the
report half (run once, at the end).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.knowledge_halves import ratio_interval

DATA = Path(__file__).parent / "data" / "dependent_facts.jsonl"
LANGUAGES = ("en", "ja")
_T0 = 1_767_225_600.0  # a fixed day, so the run is the same every time
_MONTH = 30 * 86_400.0


def scenarios(half: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if (int(r["id"][2:]) % 2 == 1) == (half == "dev")]


def _turns(segment: str, lines: list[str], t0: float) -> list[dict[str, Any]]:
    return [{"turn_id": f"{segment}-{i}", "source_id": f"{segment}:{i}", "speaker": "user", "text": text,
             "ts": t0 + 60.0 * i} for i, text in enumerate(lines)]


def run_scenario(table, scenario: dict[str, Any], params) -> dict[str, Any]:
    from lumina_memory.nodes.knowledge.dependents import RESTS_ON
    from lumina_memory.nodes.knowledge.learn import learn_segments
    from lumina_memory.nodes.knowledge.unread import REVIEW

    user = f"u-{scenario['id']}"
    services = SimpleNamespace(stores=SimpleNamespace(archive=SimpleNamespace(knowledge=table)),
                               settings=SimpleNamespace(knowledge=params))
    first, second = f"{scenario['id']}-a", f"{scenario['id']}-b"
    learn_segments(services, user, [(SimpleNamespace(segment_id=first), _turns(first, scenario["before"], _T0))])
    learn_segments(services, user, [(SimpleNamespace(segment_id=second), _turns(second, scenario["change"], _T0 + _MONTH))])
    rows = table.items(user, history=True)

    def find(words: str) -> dict[str, Any] | None:
        return next((r for r in rows if words.lower() in r["value"].lower() and r["polarity"] == "positive"), None)

    def touched(row: dict[str, Any]) -> bool:
        return (row["note"] or "").startswith(REVIEW + RESTS_ON)

    out: dict[str, Any] = {"id": scenario["id"], "lang": scenario["lang"], "caught": 0, "missed": 0,
                           "wrongly_touched": 0, "untouched_read": 0, "not_read": [], "failures": []}
    for words in scenario["dependent"]:
        row = find(words)
        if row is None:
            out["not_read"].append(words)
        elif touched(row):
            out["caught"] += 1
        else:
            out["missed"] += 1
            out["failures"].append(f"missed: {row['value']} (derived_from={list(row['derived_from'] or [])})")
    for words in scenario["untouched"]:
        row = find(words)
        if row is None:
            out["not_read"].append(words)
            continue
        out["untouched_read"] += 1
        if touched(row):
            out["wrongly_touched"] += 1
            out["failures"].append(f"touched: {row['value']} ({row['note']})")
    out["change_read"] = any(r["status"] == "superseded" for r in rows)
    return out


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    summary = {}
    for lang in (*LANGUAGES, "all"):
        mine = [r for r in results if lang in ("all", r["lang"])]
        summary[lang] = {
            "scenarios": len(mine),
            "caught": ratio_interval([(r["caught"], r["caught"] + r["missed"]) for r in mine]),
            "wrongly_touched": ratio_interval([(r["wrongly_touched"], r["untouched_read"]) for r in mine]),
            "not_read": sum(len(r["not_read"]) for r in mine),
            "changes_read": sum(r["change_read"] for r in mine),
        }
    return summary


def run(half: str, same_turn: bool = False) -> dict[str, Any]:
    from lumina_memory.nodes.knowledge.params import KnowledgeParams
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    params = KnowledgeParams(dependency_same_turn=same_turn)
    with tempfile.TemporaryDirectory() as tmp:
        archive = DuckDBArchive(Path(tmp) / "archive.duckdb")
        try:
            results = [run_scenario(archive.knowledge, s, params) for s in scenarios(half)]
        finally:
            archive.close()
    return {"half": half, "dependency_same_turn": same_turn, "summary": summarise(results), "scenarios": results}


def heldout(same_turn: bool = False) -> dict[str, Any]:
    """On the held-out timelines (``bench/data/knowledge_independent_*.jsonl``, written by someone who had not
    read the rules; no dependents are labelled there): each user turn learnt as its own segment on its day, then
    every fact put under review because a fact it rests on changed, and of those the ones the timeline's gold
    says are still current (``wrongly_touched``: a gold fact of the same subject and attribute whose value is in
    the item's or holds it)."""
    from lumina_memory.nodes.knowledge.dependents import RESTS_ON
    from lumina_memory.nodes.knowledge.learn import learn_segments
    from lumina_memory.nodes.knowledge.params import KnowledgeParams
    from lumina_memory.nodes.knowledge.unread import REVIEW
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    params = KnowledgeParams(dependency_same_turn=same_turn)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        archive = DuckDBArchive(Path(tmp) / "archive.duckdb")
        services = SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace(knowledge=params))
        try:
            for lang in LANGUAGES:
                path = DATA.parent / f"knowledge_independent_{lang}.jsonl"
                timelines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
                reviewed, wrong, linked, facts = [], [], 0, 0
                for t in timelines:
                    user = f"h-{t['id']}"
                    for n, turn in enumerate(t["turns"]):
                        segment = f"{t['id']}-{n}"
                        row = {"turn_id": segment, "source_id": segment, "speaker": turn["speaker"], "text": turn["text"],
                               "ts": _T0 + turn["day"] * 86_400.0 + n}
                        learn_segments(services, user, [(SimpleNamespace(segment_id=segment), [row])])
                    items = archive.knowledge.items(user, history=True)
                    facts += len(items)
                    linked += sum(bool(r["derived_from"]) for r in items)
                    for r in items:
                        if not (r["note"] or "").startswith(REVIEW + RESTS_ON) or r["valid_to"] is not None:
                            continue
                        reviewed.append(f"{t['id']} {r['attribute']}: {r['value']} ({r['note']})")
                        value = r["value"].lower()
                        if any(g["current"] and g["subject"] == r["subject"] and g["attribute"] == r["attribute"]
                               and (g["value"].lower() in value or value in g["value"].lower()) for g in t["expect"]):
                            wrong.append(reviewed[-1])
                out[lang] = {"timelines": len(timelines), "facts": facts, "with_derived_from": linked,
                             "put_under_review": len(reviewed), "wrongly_touched": len(wrong),
                             "reviewed": reviewed, "wrong": wrong}
        finally:
            archive.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dev", "report"), default="dev")
    parser.add_argument("--same-turn", action="store_true", help="with dependency_same_turn on")
    parser.add_argument("--heldout", action="store_true", help="the held-out timelines instead (no dependents labelled)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.heldout:
        report = heldout(args.same_turn)
        for lang, h in report.items():
            sys.stdout.write(f"heldout {lang}: {h['facts']} facts in {h['timelines']} timelines, {h['with_derived_from']} "
                             f"resting on another, {h['put_under_review']} put under review, {h['wrongly_touched']} "
                             "of them still current by the gold\n")
            for line in h["reviewed"]:
                sys.stdout.write(f"  {line}\n")
        if args.out:
            args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return 0
    report = run(args.half, args.same_turn)
    for lang, s in report["summary"].items():
        c, w = s["caught"], s["wrongly_touched"]
        sys.stdout.write(f"{args.half} {lang}: caught {c['part']:.0f}/{c['whole']:.0f} = {c['value']} [{c['lo']}, {c['hi']}]"
                         f"  wrongly touched {w['part']:.0f}/{w['whole']:.0f} = {w['value']} [{w['lo']}, {w['hi']}]"
                         f"  not read {s['not_read']}  changes read {s['changes_read']}/{s['scenarios']}\n")
    for r in report["scenarios"]:
        for failure in r["failures"]:
            sys.stdout.write(f"  {r['id']} {failure}\n")
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
