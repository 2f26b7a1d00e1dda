"""`lumina-memory undo | forget-preview | capacity`: forgetting undone, previewed and foreseen (issue 49).

- ``undo --user U [--memory ID | --step compress|archive|delete|knowledge|merge|procedure] [--since YYYY-MM-DD]``:
  put back what the lifecycle forgot within ``LUMINA_LIFECYCLE__UNDO_WINDOW_DAYS`` (nodes.lifecycle.undo); an
  erasure or a deliberate ``forget`` is never undoable.
- ``forget-preview --user U``: what the user's next batch day would compress, archive or delete, and the episode
  merges A9 would make, nothing written (nodes.lifecycle.forget_preview). A command of its own rather than
  ``maintain --preview``: ``maintain`` runs every maintenance step for every user, a preview concerns one user's
  forgetting only.
- ``capacity --user U``: memories per level against the 15/30/35 % targets, protected ones against the cap, and a
  WARNING before the caps force compression (nodes.lifecycle.capacity).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lumina_memory.stores.undo_steps import STEPS

from . import cli_args
from .cli_admin import _services as _open
from .cli_text import cells

console = Console(emoji=False, soft_wrap=True)


def _day(value: str) -> int:
    """A local date (YYYY-MM-DD) as the batch day number the undo log keeps (a date ordinal)."""
    try:
        return date.fromisoformat(value).toordinal()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def _now(args) -> float:
    """``--now`` (a simulated clock, as `maintain --now` runs the batch) or the clock."""
    from datetime import datetime

    return datetime.fromisoformat(args.now).timestamp() if args.now else time.time()


def _json(value) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def cmd_undo(args) -> int:
    from lumina_memory.nodes.lifecycle.undo import undo_forgetting

    services = _open()
    try:
        report = undo_forgetting(services, args.user, memory_id=args.memory, step=args.step, since_day=args.since,
                                 now=_now(args), actor="cli")
    finally:
        services.close()
    if args.json:
        _json(report)
        return 0
    for m in report["memories"]:
        console.print(escape(f"{m['memory_id']}: {m['step']} undone, level {m['level']}"))
    for item in report["facts"]:
        console.print(escape(f"{item}: remembered again"))
    for lineage in report["procedures"]:
        console.print(escape(f"procedure {lineage}: back with its versions and outcomes"))
    return 0


def cmd_forget_preview(args) -> int:
    from lumina_memory.nodes.lifecycle.forget_preview import forget_preview

    services = _open()
    try:
        report = forget_preview(services, args.user, now=_now(args))
    finally:
        services.close()
    if args.json:
        _json(report)
        return 0
    counts = ", ".join(f"{k} {v}" for k, v in report["counts"].items())
    table = Table(title=escape(f"next batch day of {args.user} (day {report['day']}; {counts})"))
    for column in ("memory", "step", "level", "retention", "text"):
        table.add_column(column, overflow="fold")
    for c in report["changes"]:
        to = "deleted" if c["step"] == "delete" else str(c["level_to"])
        table.add_row(*cells(c["memory_id"], c["step"], f"{c['level_from']} → {to}",
                             f"{c['retention_from']:.1f} → {c['retention_to']:.1f}", c["text"][:60]))
    console.print(table)
    for m in report["merges"]:
        console.print(escape(f"merge: {', '.join(m['folded'])} would fold into {m['survivor']}: {m['text'][:60]}"))
    console.print(escape(f"facts of low activity (the monthly knowledge forgetting's candidates): "
                         f"{report['knowledge_low_activity']}"))
    return 0


def capacity_lines(report: dict) -> list[str]:
    """The capacity report in a few lines (`stats --user` prints them; `capacity` shows the table)."""
    levels = ", ".join(f"{k}: {report['levels'][k]}" for k in (1, 2, 3, 4))
    p = report["protected"]
    return [f"capacity: memories by level {levels}; protected {p['count']} of {p['cap']}; "
            f"undo entries {report['undo_entries']}", *(f"WARNING: {w}" for w in report["warnings"])]


def cmd_capacity(args) -> int:
    from lumina_memory.nodes.lifecycle.capacity import capacity_report

    services = _open()
    try:
        report = capacity_report(services, args.user)
    finally:
        services.close()
    if args.json:
        _json(report)
        return 0
    table = Table(title=escape(f"capacity of {args.user} ({report['memories']} memories, "
                               f"{report['ratio_total']} not protected)"))
    for column in ("level", "memories", "share", "target", "room", "next batch moves"):
        table.add_column(column)
    for r in report["ratios"]:
        table.add_row(*cells(r["level"], r["count"], f"{r['share']:.0%}", f"{r['target']:.0%}", r["allowed"], r["forced"]))
    table.add_row(*cells(4, report["levels"][4], "", "", "", ""))
    console.print(table)
    p = report["protected"]
    console.print(escape(f"protected: {p['count']} of {p['cap']}; undo entries: {report['undo_entries']}"))
    for warning in report["warnings"]:
        console.print(escape(f"WARNING: {warning}"), style="bold yellow")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    undo = sub.add_parser("undo", help="put back what forgetting changed (within the undo window; never an erasure)")
    undo.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    which = undo.add_mutually_exclusive_group()
    which.add_argument("--memory", type=cli_args.memory_id, default=None,
                       help="only this memory (or knowledge item) id (default: every step in the window)")
    which.add_argument("--step", choices=STEPS, default=None, help="only this forgetting step: %(choices)s")
    undo.add_argument("--since", type=_day, default=None, metavar="YYYY-MM-DD",
                      help="only steps of batch days from this local date on")
    undo.add_argument("--now", type=cli_args.iso_time, default=None,
                      help="ISO-8601 time to undo as (the clock `maintain --now` ran the batch on); the window counts from it")
    undo.add_argument("--json", action="store_true", help="print what was restored as JSON")
    undo.set_defaults(func=cmd_undo)
    preview = sub.add_parser("forget-preview", help="what the user's next batch day would compress, archive or delete")
    preview.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    preview.add_argument("--now", type=cli_args.iso_time, default=None, help="ISO-8601 time to preview the batch at")
    preview.add_argument("--json", action="store_true", help="print the preview as JSON")
    preview.set_defaults(func=cmd_forget_preview)
    capacity = sub.add_parser("capacity", help="memories per level against the targets, protected ones against the cap")
    capacity.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    capacity.add_argument("--json", action="store_true", help="print the report as JSON")
    capacity.set_defaults(func=cmd_capacity)
