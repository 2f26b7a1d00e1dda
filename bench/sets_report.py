"""One report of recall@B over every labelled set, read from bench.locomo's ``--json`` reports: each system's recall
with a 95% bootstrap interval over conversations, and Lumina − plain vectors paired by conversation, overall and per
category (issue 46: "no category below plain vectors"). Then answer@B the same way, for the reports that record it
per conversation: recall@B counts a turn quoted by an excerpt as found, answer@B asks whether the packed text holds
the gold answer, so a packer that quotes the wrong part of a long turn scores on the first and not on the second.

    python -m bench.sets_report NAME=REPORT.json [NAME=REPORT.json …] [--before NAME=OLD.json …] [--out OUT.md]

``--before``: a report of the same set and questions from an earlier version, for Lumina's change (after − before,
paired by conversation) beside its lead over plain vectors.

Each report must come from a bench.locomo run that records per-conversation sums (``by_conversation``); the
resampling unit is the conversation (bench.ablation_stats).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from bench.ablation_stats import ConvSums, contribution

OURS, REFERENCE = "lumina", "vectors"
ORDER = ("lumina", "vectors", "bm25", "rrf", "mem0")


def _sums(raw: dict[str, dict[str, float]]) -> dict[str, ConvSums]:
    return {conv: ConvSums(int(s["n"]), float(s["recall"]), float(s["hit"])) for conv, s in raw.items()}


def _answer_sums(raw: dict[str, dict[str, float]]) -> dict[str, ConvSums] | None:
    """answer@B's sums in ``recall``'s place (over the questions with an answer); None for an older report."""
    if any("answer_n" not in s for s in raw.values()):
        return None
    return {conv: ConvSums(int(s["answer_n"]), float(s["answer"]), 0.0) for conv, s in raw.items()}


def _interval(sums: dict[str, ConvSums]) -> dict[str, float]:
    zero = {c: ConvSums(s.n, 0.0, 0.0) for c, s in sums.items()}
    return contribution(sums, zero, "recall")


def _fmt(ci: dict[str, float], points: bool = False) -> str:
    if points:
        return f"{100 * ci['delta']:+.1f} [{100 * ci['lo']:+.1f}, {100 * ci['hi']:+.1f}]"
    return f"{ci['delta']:.3f} [{ci['lo']:.2f}, {ci['hi']:.2f}]"


def summarise(name: str, report: dict[str, Any], before: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per budget of one report: each system's recall interval, Lumina − vectors overall and per category, and
    with ``before`` (an earlier report of the same questions) Lumina's change since."""
    results = report["results"]
    if REFERENCE not in results or OURS not in results:
        raise ValueError(f"{name}: the report has no {OURS!r} or {REFERENCE!r} results")
    out = []
    for budget in report["budgets"]:
        b = str(budget)
        ours = results[OURS][b]
        if "by_conversation" not in ours:
            raise ValueError(f"{name}: the report has no per-conversation sums; run bench.locomo again")
        row: dict[str, Any] = {"set": name, "budget": int(budget), "questions": ours["n"],
                               "conversations": len(ours["by_conversation"]), "systems": {}, "categories": {}}
        for system in (s for s in ORDER if s in results):
            row["systems"][system] = _interval(_sums(results[system][b]["by_conversation"]))
        row["delta"] = contribution(_sums(ours["by_conversation"]), _sums(results[REFERENCE][b]["by_conversation"]))
        for category, per_conv in ours.get("by_category_conversation", {}).items():
            ref = results[REFERENCE][b]["by_category_conversation"][category]
            n = sum(int(s["n"]) for s in per_conv.values())
            row["categories"][category] = {"n": n, "delta": contribution(_sums(per_conv), _sums(ref))}
        row["answer"] = _answer_row(results, b)
        if before is not None:
            old = before["results"][OURS].get(b)
            if old is None or "by_conversation" not in old:
                raise ValueError(f"{name}: the earlier report has no per-conversation sums at B = {b}")
            row["change"] = contribution(_sums(ours["by_conversation"]), _sums(old["by_conversation"]))
            row["before"] = old["recall"]
        out.append(row)
    return out


def _answer_row(results: dict[str, Any], b: str) -> dict[str, Any] | None:
    """answer@B of each system with its interval, Lumina − vectors overall and per category; None when the report
    has no per-conversation answer sums or no question with an answer."""
    ours = _answer_sums(results[OURS][b]["by_conversation"])
    if ours is None or not sum(s.n for s in ours.values()):
        return None
    row: dict[str, Any] = {"questions": sum(s.n for s in ours.values()), "systems": {}, "categories": {}}
    for system in (s for s in ORDER if s in results):
        sums = _answer_sums(results[system][b]["by_conversation"])
        if sums is not None:
            row["systems"][system] = _interval(sums)
    row["delta"] = contribution(ours, _answer_sums(results[REFERENCE][b]["by_conversation"]))
    for category, per_conv in results[OURS][b].get("by_category_conversation", {}).items():
        mine = _answer_sums(per_conv)
        ref = _answer_sums(results[REFERENCE][b]["by_category_conversation"][category])
        if mine is not None and ref is not None and sum(s.n for s in mine.values()):
            row["categories"][category] = contribution(mine, ref)
    return row


def render(rows: Sequence[dict[str, Any]]) -> str:
    systems = [s for s in ORDER if any(s in r["systems"] for r in rows)]
    changes = any("change" in r for r in rows)
    lines = ["## Recall@B against plain vectors, BM25 and RRF in the same run", "",
             "recall@B [95% bootstrap interval over conversations]; Δ = Lumina − plain vectors in points, paired by "
             "conversation; the last column lists the categories where Lumina is below plain vectors.", "",
             "| set | B | conv. | questions | " + " | ".join(systems) + " | Δ vs vectors | categories below vectors |"
             + (" Lumina before | change |" if changes else ""),
             "|---|---|---|---|" + "---|" * len(systems) + "---|---|" + ("---|---|" if changes else "")]
    for r in rows:
        below = [f"{c} {100 * v['delta']['delta']:+.1f}" for c, v in r["categories"].items() if v["delta"]["delta"] < 0]
        cells = [_fmt(r["systems"][s]) if s in r["systems"] else "" for s in systems]
        lines.append(f"| {r['set']} | {r['budget']} | {r['conversations']} | {r['questions']} | " + " | ".join(cells)
                     + f" | {_fmt(r['delta'], points=True)} | {', '.join(below) or 'none'} |"
                     + ((f" {r['before']:.3f} | {_fmt(r['change'], points=True)} |" if "change" in r else " | |")
                        if changes else ""))
    lines += ["", "## Lumina − plain vectors per category", "", "| set | B | category | questions | Δ [95%] |",
              "|---|---|---|---|---|"]
    for r in rows:
        for c, v in r["categories"].items():
            lines.append(f"| {r['set']} | {r['budget']} | {c} | {v['n']} | {_fmt(v['delta'], points=True)} |")
    answered = [r for r in rows if r.get("answer")]
    if answered:
        lines += ["", "## Answer@B against plain vectors, BM25 and RRF in the same run", "",
                  "answer@B: the share of a question's gold answer found in the packed text (bench.locomo), over the "
                  "questions with an answer, [95% bootstrap interval over conversations]; Δ = Lumina − plain vectors "
                  "in points, paired by conversation. Temporal answers (\"before\", a count of days) are rarely "
                  "written in any turn, so their column says little.", "",
                  "| set | B | questions | " + " | ".join(systems) + " | Δ vs vectors | categories below vectors |",
                  "|---|---|---|" + "---|" * len(systems) + "---|---|"]
        for r in answered:
            a = r["answer"]
            below = [f"{c} {100 * v['delta']:+.1f}" for c, v in a["categories"].items() if v["delta"] < 0]
            cells = [_fmt(a["systems"][s]) if s in a["systems"] else "" for s in systems]
            lines.append(f"| {r['set']} | {r['budget']} | {a['questions']} | " + " | ".join(cells)
                         + f" | {_fmt(a['delta'], points=True)} | {', '.join(below) or 'none'} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sets_report", description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", metavar="NAME=REPORT.json")
    parser.add_argument("--before", action="append", default=[], metavar="NAME=OLD.json",
                        help="an earlier report of set NAME (same questions): Lumina's change since")
    parser.add_argument("--out", default="", help="write the Markdown here as well")
    args = parser.parse_args(argv)

    def named(spec: str) -> tuple[str, dict[str, Any]]:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            parser.error(f"{spec!r}: expected NAME=REPORT.json")
        return name, json.loads(Path(path).read_text(encoding="utf-8"))

    befores = dict(named(spec) for spec in args.before)
    rows: list[dict[str, Any]] = []
    for spec in args.reports:
        name, report = named(spec)
        rows += summarise(name, report, befores.pop(name, None))
    if befores:
        parser.error(f"--before names no report: {', '.join(befores)}")
    text = render(rows)
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
