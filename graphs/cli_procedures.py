"""`lumina-memory procedures | outcome`: how-tos the characters have taught a user, and how they went.

The names and the ``--json`` fields are fixed (scripts depend on them): nodes.knowledge.procedures.JSON_FIELDS.
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import cli_args
from .cli_admin import _services as _open
from .cli_knowledge import _day
from .cli_text import cells

console = Console(emoji=False, soft_wrap=True)  # ids are data (":b:" is no emoji code); lines print whole


def _print_json(value) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1) + "\n")


def cmd_procedures(args) -> int:
    from lumina_memory.nodes.knowledge.procedures import list_procedures

    services = _open()
    zone = services.settings.timezone
    try:
        procedures = list_procedures(services, args.user, history=args.all)
    finally:
        services.close()
    if args.json:
        _print_json(procedures)
        return 0
    table = Table(title=escape(f"procedures of {args.user} ({len(procedures)}{', with history' if args.all else ''})"))
    for column in ("id", "title", "v", "status", "steps", "ok", "failed", "confidence", "said"):
        table.add_column(column, overflow="fold")
    for p in procedures:
        steps = "\n".join(f"{n}. {s[:60]}" for n, s in enumerate(p["steps"], 1))
        table.add_row(*cells(p["procedure_id"][:8], p["title"] or p["description"][:30], p["version"], p["status"], steps,
                             p["success_count"], p["failure_count"], f"{p['confidence']:.2f}", _day(p["said_at"], zone)))
    console.print(table)
    return 0


def cmd_outcome(args) -> int:
    from lumina_memory.nodes.knowledge.procedures import record_outcome

    services = _open()
    try:
        procedure = record_outcome(services, args.user, args.procedure_id, args.result == "success")
    finally:
        services.close()
    if args.json:
        _print_json(procedure)
        return 0
    console.print(escape(f"{procedure['title'] or procedure['procedure_id']} v{procedure['version']}: "
                         f"{procedure['success_count']} succeeded, {procedure['failure_count']} failed, "
                         f"confidence {procedure['confidence']:.2f}"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    procs = sub.add_parser("procedures", help="how-tos learnt from a user's conversations, with their outcomes")
    procs.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    procs.add_argument("--all", action="store_true", help="superseded versions too (the history)")
    procs.add_argument("--json", action="store_true", help="one JSON array (fields fixed; see README)")
    procs.set_defaults(func=cmd_procedures)
    outcome = sub.add_parser("outcome", help="record that a procedure worked (success) or did not (failure)")
    outcome.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    outcome.add_argument("procedure_id", type=cli_args.procedure_id, help="the procedure's id (see `procedures`)")
    outcome.add_argument("result", choices=["success", "failure"], help="how it went: %(choices)s")
    outcome.add_argument("--json", action="store_true", help="the procedure after the outcome, as JSON")
    outcome.set_defaults(func=cmd_outcome)
