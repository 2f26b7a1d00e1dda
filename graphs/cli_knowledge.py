"""`lumina-memory knowledge`: what the characters know about a user, current facts or their history.

The names and the ``--json`` fields are fixed (scripts depend on them); see README "Memory that learns".
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from rich.console import Console
from rich.table import Table

from .cli_admin import _services as _open

console = Console()


def _day(ts: float | None) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts, UTC).date().isoformat()


def cmd_knowledge(args) -> int:
    from nodes.knowledge.manage import list_knowledge

    services = _open()
    try:
        items = list_knowledge(services, args.user, history=args.all)
    finally:
        services.close()
    if args.json:
        sys.stdout.write(json.dumps(items, ensure_ascii=False, indent=1) + "\n")
        return 0
    table = Table(title=f"knowledge of {args.user} ({len(items)}{', with history' if args.all else ''})")
    for column in ("subject", "attribute", "value", "status", "from", "to", "confidence", "said"):
        table.add_column(column, overflow="fold")
    for k in items:
        value = k["value"] if k["polarity"] == "positive" else f"not {k['value']}"
        table.add_row(k["subject"], k["attribute"], value, k["status"], _day(k["valid_from"]), _day(k["valid_to"]),
                      f"{k['confidence']:.1f} {k['method']}", k["text"][:60])
    console.print(table)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    know = sub.add_parser("knowledge", help="what the characters know about a user (facts and their history)")
    know.add_argument("--user", required=True)
    know.add_argument("--all", action="store_true", help="superseded and merged items too (the history)")
    know.add_argument("--json", action="store_true", help="one JSON array (fields fixed; see README)")
    know.set_defaults(func=cmd_knowledge)
