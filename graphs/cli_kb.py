"""`lumina-memory kb add | search | read | list | remove`: knowledge bases (README "Knowledge bases").

A KB is shared by every user unless made with ``--user U`` (then only U reads it). ``--json`` output fields
are those of nodes.kb (search_kb's items, list_kbs' rows).
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import cli_args
from .cli_admin import _services as _open
from .cli_text import cells

console = Console(emoji=False, soft_wrap=True)  # ids are data (":b:" is no emoji code); lines print whole


def _print_json(value) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1) + "\n")


def cmd_add(args) -> int:
    from lumina_memory.nodes.kb.add import add_files

    services = _open()
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=Console(stderr=True), disable=args.json) as bar:
            task = bar.add_task(escape(f"adding to {args.name}"), total=len(args.files))

            def done(source, result) -> None:
                bar.update(task, advance=1, description=escape(f"{args.name}: {source} {result.status}"))

            results = add_files(services, args.name, args.files, user_id=args.user, on_file=done)
    finally:
        services.close()
    if args.json:
        _print_json([r.model_dump() for r in results])
        return 0
    scope = f"user {args.user}'s" if args.user else "shared"
    for r in results:
        console.print(escape(f"{r.source}: {r.status}" + (f" ({r.chunks} chunks, {r.passages} passages)" if r.chunks else "")))
    console.print(escape(f"{scope} knowledge base {args.name.lower()}: {len(results)} file(s)"))
    return 0


def cmd_search(args) -> int:
    from lumina_memory.nodes.kb.search import search_kb

    services = _open()
    try:
        names = None if args.name == "*" else [args.name]
        items = search_kb(services, args.query, user_id=args.user, names=names, limit=args.limit)
    finally:
        services.close()
    if args.json:
        _print_json(items)
        return 0
    console.print(f"[bold]Q:[/bold] {escape(args.query)}  [dim]({len(items)} passages)[/dim]")
    for rank, item in enumerate(items, 1):  # document texts are data: escaped, never read as markup
        console.print(f"  {rank}. " + escape(f"[{item['source']} · chunk {item['position']} · {item['date']} · score "
                                             f"{item['score']:.2f}] {item['text'][:300]}"))
        console.print("     [dim]" + escape(item["id"]) + "[/dim]")
    return 0


def cmd_read(args) -> int:
    from lumina_memory.nodes.kb.search import read_kb

    services = _open()
    try:
        text = read_kb(services, args.id, user_id=args.user, neighbours=args.neighbours)
    finally:
        services.close()
    if text is None:
        console.print("[red]error:[/red] " + escape(f"no chunk {args.id!r} you may read"), soft_wrap=True)
        return 1
    sys.stdout.write(text + "\n")
    return 0


def cmd_list(args) -> int:
    from lumina_memory.nodes.kb.manage import list_kbs

    services = _open()
    try:
        rows = list_kbs(services, args.user, everyone=args.all)
    finally:
        services.close()
    if args.json:
        _print_json(rows)
        return 0
    table = Table(title=f"knowledge bases ({len(rows)})")
    for column in ("kb", "scope", "documents", "chunks", "passages", "tokens", "created", "sources"):
        table.add_column(column, overflow="fold")
    for r in rows:
        scope = r["scope"] if r["scope"] == "shared" else f"user {r['user_id']}"
        sources = ", ".join(s["source"] for s in r["sources"][:5]) + (" …" if len(r["sources"]) > 5 else "")
        table.add_row(*cells(r["kb"], scope, r["documents"], r["chunks"], r["passages"], r["tokens"], r["created"], sources))
    console.print(table)
    return 0


def cmd_remove(args) -> int:
    from lumina_memory.nodes.kb.manage import list_kbs, remove_kb

    services = _open()
    try:
        if not args.yes:
            rows = [r for r in list_kbs(services, args.user)
                    if r["kb"] == args.name.lower() and (r["user_id"] or None) == args.user]
            if not rows:
                from lumina_memory.stores.records import UnknownKB

                raise UnknownKB(args.name.lower(), args.user)
            console.print(escape(f"would remove knowledge base {rows[0]['kb']} ({rows[0]['scope']}, {rows[0]['documents']} "
                                 "documents); run again with --yes to remove it"))
            return 1
        report = remove_kb(services, args.name, user_id=args.user)
    finally:
        services.close()
    console.print(escape(f"removed knowledge base {report['kb']} ({report['scope']}): {report['documents']} documents, "
                         f"{report['points']} passages"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    kb = sub.add_parser("kb", help="knowledge bases: documents the characters can look things up in")
    kb_sub = kb.add_subparsers(dest="kb_command", required=True)
    add = kb_sub.add_parser("add", help="add text, Markdown or PDF files to a KB (made on first use)")
    add.add_argument("name", type=cli_args.kb_name, help="letters, digits, _ or -; case-insensitive")
    add.add_argument("files", nargs="+", type=cli_args.readable_file, help="text, Markdown or PDF files")
    add.add_argument("--user", type=cli_args.user_id, default=None, help="a KB of this user only (default: shared by every user)")
    add.add_argument("--json", action="store_true", help="print the report as JSON")
    add.set_defaults(func=cmd_add)
    search = kb_sub.add_parser("search", help="the passages that answer a question ('*' for every KB you may read)")
    search.add_argument("name", type=cli_args.kb_names, help="the KB's name, or '*' for every KB you may read")
    search.add_argument("query", type=cli_args.query, help="the question, in any language")
    search.add_argument("--user", type=cli_args.user_id, default=None, help="also the user's own KBs (and required to read them)")
    search.add_argument("--limit", type=cli_args.int_between(1, 100), default=5, help="at most this many passages (1-100)")
    search.add_argument("--json", action="store_true", help="print the passages as JSON")
    search.set_defaults(func=cmd_search)
    read = kb_sub.add_parser("read", help="a search hit's chunk with its neighbours (ID: kb:<name>:<doc>:<chunk>)")
    read.add_argument("id", type=cli_args.kb_id, help="a search hit's id, kb:<name>:<doc>:<chunk>")
    read.add_argument("--user", type=cli_args.user_id, default=None, help="required to read the user's own KB")
    read.add_argument("--neighbours", type=cli_args.int_between(0, 20), default=1, help="chunks each side (0-20)")
    read.set_defaults(func=cmd_read)
    lst = kb_sub.add_parser("list", help="shared KBs (and the user's own with --user; every user's with --all)")
    lst.add_argument("--user", type=cli_args.user_id, default=None, help="also this user's own KBs")
    lst.add_argument("--all", action="store_true", help="every user's KBs too")
    lst.add_argument("--json", action="store_true", help="print the list as JSON")
    lst.set_defaults(func=cmd_list)
    rm = kb_sub.add_parser("remove", help="remove a whole KB (shared, or the user's own with --user)")
    rm.add_argument("name", type=cli_args.kb_name, help="the KB's name")
    rm.add_argument("--user", type=cli_args.user_id, default=None, help="remove this user's own KB (default: the shared one)")
    rm.add_argument("--yes", action="store_true", help="really remove it (without: say what would go)")
    rm.set_defaults(func=cmd_remove)
