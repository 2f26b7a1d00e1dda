"""`lumina-memory report [--since DAYS] [--json]`: what each write, flush, recall, priming and reply cost (issue 49):
per operation and per stage p50/p95/mean milliseconds, model calls and tokens per operation, and the paths that ran
(nodes.costs_summary over the records nodes.costs keeps). ``--json`` prints the summary itself (fields fixed)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .cli_admin import _services as _open

console = Console(emoji=False, soft_wrap=True)


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--since takes a number of days, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--since takes a number of days above 0, got {text!r}")
    return value


def cmd_report(args) -> int:
    from lumina_memory.nodes.costs_summary import cost_summary

    services = _open()
    try:
        summary = cost_summary(services, args.since)
    finally:
        services.close()
    if args.json:
        sys.stdout.write(json.dumps(summary, ensure_ascii=False, indent=1) + "\n")
        return 0
    print_report(summary)
    return 0


def _ms(spread: dict[str, float]) -> tuple[str, str, str]:
    return f"{spread['p50']:.1f}", f"{spread['p95']:.1f}", f"{spread['mean']:.1f}"


def print_report(summary: dict[str, Any]) -> None:
    days = summary["since_days"]
    if not summary["operations"]:
        console.print(f"No operation recorded in the last {days:g} days"
                      f"{'' if summary['recording'] else ' (recording is off: LUMINA_COSTS_RECORD)'}.")
        return
    table = Table(title=f"What each operation cost, last {days:g} days ({summary['operations']} operations)",
                  caption="calls, tok in, tok out: model calls and tokens per operation")
    rows, notes = [], []
    for op, one in summary["by_op"].items():
        rows.append((f"[bold]{op}[/bold]", str(one["count"]), *_ms(one["ms"]), f"{one['calls_per_op']:g}",
                     f"{one['input_tokens_per_op']:g}", f"{one['output_tokens_per_op']:g}"))
        for stage, spread in one["stages"].items():
            used = one["stage_calls"].get(stage)
            rows.append((f"  {escape(stage)}", str(spread["n"]), *_ms(spread),
                         *((f"{used['calls_per_op']:g}", f"{used['input_tokens_per_op']:g}",
                            f"{used['output_tokens_per_op']:g}") if used else ("", "", ""))))
        paths = ", ".join(f"{path} {n}" for path, n in one["paths"].items())
        errors = "; ".join(f"{name} {n}" for name, n in one["errors"].items())
        notes.append(f"{op}: paths {paths}" + (f"; errors {errors}" if errors else ""))
    # A narrow terminal shortens the stage names, never a figure: each figure column is as wide as its widest cell
    # or its heading, and the names get what is left (each column pads 1 a side; 9 rules bound 8 columns).
    headings = ("n", "p50 ms", "p95 ms", "mean ms", "calls", "tok in", "tok out")
    widths = [max(len(heading), *(len(row[i]) for row in rows)) for i, heading in enumerate(headings, 1)]
    table.add_column("operation / stage", no_wrap=True, overflow="ellipsis",
                     max_width=max(12, console.width - sum(widths) - 2 * (len(headings) + 1) - (len(headings) + 2)))
    for heading, width in zip(headings, widths):
        table.add_column(heading, justify="right", no_wrap=True, min_width=width)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in notes:
        console.print(line, markup=False)
    if not summary["recording"]:
        console.print("Recording is off (LUMINA_COSTS_RECORD=false): these are the records kept from before.")


def cost_lines(summary: dict[str, Any] | str) -> list[str]:
    """``stats``' lines: per operation its count, mean and p95 ms, model calls and tokens per operation, and its
    three slowest stages by mean (a string: the archive's answer when it is down)."""
    if isinstance(summary, str):
        return [f"costs: {summary}"]
    if not summary["operations"]:
        return [f"costs: no operation recorded in the last {summary['since_days']:g} days"
                f"{'' if summary['recording'] else ' (LUMINA_COSTS_RECORD is off)'}"]
    lines = [f"costs, last {summary['since_days']:g} days, every user (`lumina-memory report` per stage):"]
    for op, one in summary["by_op"].items():
        slowest = sorted(one["stages"].items(), key=lambda kv: -kv[1]["mean"])[:3]
        lines.append(f"  {op}: {one['count']} ops, mean {one['ms']['mean']:.1f} ms, p95 {one['ms']['p95']:.1f} ms, "
                     f"{one['calls_per_op']:g} model calls/op, tokens in/out per op {one['input_tokens_per_op']:g}/"
                     f"{one['output_tokens_per_op']:g}, paths {', '.join(one['paths'])}"
                     + (f", errors {sum(one['errors'].values())}" if one["errors"] else "")
                     + "; slowest stages " + ", ".join(f"{name} {s['mean']:.1f}/{s['p95']:.1f} ms" for name, s in slowest))
    return lines


def register(sub) -> None:
    report = sub.add_parser("report", help="what each write and recall cost: per-stage ms, model calls and tokens")
    report.add_argument("--since", type=_days, default=None, metavar="DAYS",
                        help="the last DAYS days (default: every record kept, LUMINA_COSTS_KEEP_DAYS)")
    report.add_argument("--json", action="store_true", help="the summary as JSON")
    report.set_defaults(func=cmd_report)
