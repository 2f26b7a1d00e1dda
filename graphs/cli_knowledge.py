"""`lumina-memory knowledge | profile`: what the characters know about a user (facts and their history), and who she is.

The names and the ``--json`` fields are fixed (scripts depend on them); see README "Memory that learns".
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
from .cli_text import cells

console = Console(emoji=False, soft_wrap=True)  # ids are data (":b:" is no emoji code); lines print whole


def _day(ts: float | None, zone: str) -> str:
    """The user's day (``LUMINA_TIMEZONE``), as recall and read_memory show it."""
    from lumina_memory.nodes.retrieval.temporal import date_label  # imported by the command, not by every --help

    return "" if ts is None else date_label(ts, zone)


def cmd_knowledge(args) -> int:
    from lumina_memory.nodes.knowledge.manage import list_knowledge

    services = _open()
    zone = services.settings.timezone
    try:
        items = list_knowledge(services, args.user, history=args.all)
    finally:
        services.close()
    if args.json:
        sys.stdout.write(json.dumps(items, ensure_ascii=False, indent=1) + "\n")
        return 0
    table = Table(title=escape(f"knowledge of {args.user} ({len(items)}{', with history' if args.all else ''})"))
    for column in ("subject", "attribute", "value", "status", "from", "to", "confidence", "said", "why"):
        table.add_column(column, overflow="fold")
    names = {k["item_id"]: f"{k['attribute']}: {k['value']}" for k in items}
    for k in items:
        value = k["value"] if k["polarity"] == "positive" else f"not {k['value']}"
        table.add_row(*cells(k["subject"], k["attribute"], value, k["status"], _day(k["valid_from"], zone),
                             _day(k["valid_to"], zone), f"{k['confidence']:.1f} {k['method']}", k["text"],
                             _why(k, names)))
    console.print(table)
    return 0


def _why(item: dict, names: dict[str, str]) -> str:
    """The item's note, then the facts it rests on and the ones it contradicted (F6), by attribute and value."""
    parts = [item["note"]] if item["note"] else []
    for label, key in (("rests on", "derived_from"), ("contradicts", "contradicts")):
        if item[key]:
            parts.append(f"{label} " + "; ".join(names.get(i, i) for i in item[key]))
    return " | ".join(parts)


def register(sub: argparse._SubParsersAction) -> None:
    know = sub.add_parser("knowledge", help="what the characters know about a user (facts and their history)")
    know.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    know.add_argument("--all", action="store_true", help="superseded and merged items too (the history)")
    know.add_argument("--json", action="store_true", help="one JSON array (fields fixed; see README)")
    know.set_defaults(func=cmd_knowledge)
    prof = sub.add_parser("profile", help="who the user is: topics, each character's relationship, current facts")
    prof.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    prof.add_argument("--json", action="store_true", help="one JSON object (fields fixed; see README)")
    prof.set_defaults(func=cmd_profile)


def cmd_profile(args) -> int:
    from lumina_memory.nodes.knowledge.profile import build_profile

    services = _open()
    zone = services.settings.timezone
    try:
        profile = build_profile(services, args.user)
    finally:
        services.close()
    if args.json:
        sys.stdout.write(json.dumps(profile, ensure_ascii=False, indent=1) + "\n")
        return 0
    console.print(f"[bold]{escape(args.user)}[/bold] — updated {_day(profile['updated_at'], zone) or 'never'}")
    console.print(escape("topics: " + ", ".join(f"{k} {w:.2f}" for k, w in list(profile["topics"].items())[:10])))
    table = Table(title="characters")
    for column in ("character", "turns", "named", "days", "emotional", "depth", "topics"):
        table.add_column(column, overflow="fold")
    for name, c in profile["characters"].items():
        table.add_row(*cells(name, c["turns"], c["mentions"], c["days"], c["emotional_moments"],
                             f"{c['relationship_depth']:.2f}", ", ".join(c["topics"])))
    console.print(table)
    for fact in profile["facts"]:
        console.print(escape(f"- {fact['attribute']}: {fact['value']}  ({fact['text']})"))
    for fact in profile["under_review"]:
        console.print(escape(f"? {fact['attribute']}: {fact['value']}  — {fact['why']}"))
    return 0
