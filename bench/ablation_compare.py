"""Before and after a change to recall, from two saved ablation runs (bench.ablation's JSON): per set and budget,
full recall before and after with the paired difference, plain's recall in each, and full − plain in each run,
with 95% bootstrap intervals over conversations (bench.ablation_stats).

    python -m bench.ablation_compare BEFORE.json AFTER.json [--md OUT.md]

Both runs must hold the same sets, conversations and questions (the same commands before and after the change).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from bench.ablation_stats import ConvSums, contribution

FULL, PLAIN = "full", "plain"


def _sums(report_set: dict[str, Any], config: str, budget: str) -> dict[str, ConvSums]:
    return {conv: ConvSums(int(s["n"]), float(s["recall"]), float(s["hit"]))
            for conv, s in report_set["sums"][config][budget].items()}


def _mean(sums: dict[str, ConvSums]) -> float:
    n = sum(s.n for s in sums.values())
    return sum(s.recall for s in sums.values()) / n if n else float("nan")


def _ci(x: dict[str, float]) -> str:
    return f"{x['delta'] * 100:+.2f} [{x['lo'] * 100:+.2f}, {x['hi'] * 100:+.2f}]"


def rows(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per set and budget both runs hold: full before/after, after − before, full − plain in each."""
    out = []
    later = {s["set"]: s for s in after["sets"]}
    for b_set in before["sets"]:
        a_set = later.get(b_set["set"])
        if a_set is None:
            continue
        for budget in map(str, b_set["budgets"]):
            if budget not in a_set["sums"][FULL]:
                continue
            full_b, full_a = _sums(b_set, FULL, budget), _sums(a_set, FULL, budget)
            row = {"set": b_set["set"], "budget": int(budget), "full_before": _mean(full_b), "full_after": _mean(full_a),
                   "after_minus_before": contribution(full_a, full_b, "recall")}
            if PLAIN in b_set["sums"] and PLAIN in a_set["sums"]:
                row["plain_before"], row["plain"] = _mean(_sums(b_set, PLAIN, budget)), _mean(_sums(a_set, PLAIN, budget))
                row["minus_plain_before"] = contribution(full_b, _sums(b_set, PLAIN, budget), "recall")
                row["minus_plain_after"] = contribution(full_a, _sums(a_set, PLAIN, budget), "recall")
            out.append(row)
    return out


def render(table: Sequence[dict[str, Any]]) -> str:
    lines = ["| set | budget | full before | full after | after − before [95% CI] | plain before → after | "
             "full − plain before | full − plain after |", "|---|---|---|---|---|---|---|---|"]
    for r in table:
        plain = (f"{r['plain_before']:.3f} → {r['plain']:.3f}", _ci(r["minus_plain_before"]),
                 _ci(r["minus_plain_after"])) if "plain" in r else ("", "", "")
        lines.append(f"| {r['set']} | {r['budget']} | {r['full_before']:.3f} | {r['full_after']:.3f} | "
                     f"{_ci(r['after_minus_before'])} | {' | '.join(plain)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ablation_compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--md", default="", help="also write the table here")
    args = parser.parse_args(argv)
    table = render(rows(*(json.loads(Path(p).read_text(encoding="utf-8")) for p in (args.before, args.after))))
    print(table)
    if args.md:
        Path(args.md).write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
