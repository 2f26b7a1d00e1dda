"""`lumina-memory memories | protect | unprotect | forget | read`: the lifecycle's memories, one user at a time.

The names and the ``--json`` fields are fixed (scripts depend on them); see README "Watching memories fade".
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
LEVEL_NAMES = {1: "full", 2: "summary", 3: "keywords", 4: "archived"}


def shown_text(memory: dict) -> str:
    """F2's "trigger / content" when the memory has them, else its text; 80 characters."""
    text = " / ".join(p for p in (memory.get("trigger"), memory.get("content")) if p) or memory["text"] or ""
    return text[:80]


def cmd_memories(args) -> int:
    from lumina_memory.nodes.lifecycle.manage import list_memories

    services = _open()
    try:
        items = list_memories(services, args.user, level=args.level)
    finally:
        services.close()
    if args.json:
        sys.stdout.write(json.dumps(items, ensure_ascii=False, indent=1) + "\n")
        return 0
    table = Table(title=escape(f"memories of {args.user} ({len(items)})"))
    for column in ("memory", "level", "retention", "intensity", "category", "recalls", "flags", "trigger / content"):
        table.add_column(column, overflow="fold")
    for m in items:
        flags = " ".join(f for f, on in (("protected", m["protected"]), ("archived", m["archived"]),
                                        ("revival", m["revival_requested"])) if on)
        table.add_row(*cells(m["memory_id"], f"{m['level']} {LEVEL_NAMES[m['level']]}", f"{m['retention']:.1f}",
                             f"{m['intensity']:.0f}", m["category"], m["recall_count"], flags, shown_text(m)))
    console.print(table)
    return 0


def _set_protected(args, protected: bool) -> int:
    from lumina_memory.nodes.lifecycle.manage import set_protected

    services = _open()
    try:
        out = set_protected(services, args.user, args.memory_id, protected)
    finally:
        services.close()
    state = "protected" if protected else "not protected"
    console.print(escape(f"{args.memory_id}: {state}" + ("" if out["changed"] else " (already)")))
    return 0


def cmd_protect(args) -> int:
    return _set_protected(args, True)


def cmd_unprotect(args) -> int:
    return _set_protected(args, False)


def cmd_forget(args) -> int:
    from lumina_memory.nodes.lifecycle.manage import forget_memory

    services = _open()
    try:
        removed = forget_memory(services, args.user, args.memory_id, actor="cli")
    finally:
        services.close()
    if args.json:
        sys.stdout.write(json.dumps(removed, indent=1, sort_keys=True) + "\n")
    else:
        console.print(escape(f"forgot {args.memory_id}: " + ", ".join(f"{k} {v}" for k, v in removed.items() if v)))
    return 0


def cmd_read(args) -> int:
    """The whole message a recall item quoted a passage of (issue 19): one turn, or a long message's parts joined."""
    from lumina_memory.nodes.retrieval.messages import read_message
    from lumina_memory.stores.ids import validate_id

    services = _open()
    try:
        text = read_message(services.stores.archive, validate_id(args.user, "user"), args.source_id,
                            services.settings.long_message_chunk_overlap)
    finally:
        services.close()
    if text is None:
        sys.stderr.write(f"no message {args.source_id!r} for user {args.user!r}\n")
        return 1
    if args.json:
        sys.stdout.write(json.dumps({"user_id": args.user, "source_id": args.source_id, "text": text},
                                    ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    read = sub.add_parser("read", help="the whole message behind a recall item (its source id), long ones reassembled")
    read.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    read.add_argument("source_id", type=cli_args.source_id, help="a recall item's source id")
    read.add_argument("--json", action="store_true", help="print the message as JSON")
    read.set_defaults(func=cmd_read)
    mem = sub.add_parser("memories", help="a user's memories with their level, retention and emotion")
    mem.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    mem.add_argument("--level", type=int, choices=[1, 2, 3, 4], default=None,
                     help="only this level: %(choices)s (4: archived; default: every level)")
    mem.add_argument("--json", action="store_true", help="one JSON array (fields fixed; see README)")
    mem.set_defaults(func=cmd_memories)
    for name, func, text in (("protect", cmd_protect, "never compress or delete this memory (F8)"),
                             ("unprotect", cmd_unprotect, "let this memory fade again")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
        p.add_argument("memory_id", type=cli_args.memory_id, help="the memory's id (see `memories`)")
        p.set_defaults(func=func)
    forget = sub.add_parser("forget", help="delete one memory from every tier, its turns included")
    forget.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    forget.add_argument("memory_id", type=cli_args.memory_id, help="the memory's id (see `memories`)")
    forget.add_argument("--json", action="store_true", help="print what was deleted as JSON")
    forget.set_defaults(func=cmd_forget)
