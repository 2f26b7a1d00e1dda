"""`lumina-memory export | import`: a user's whole memory as one portable JSONL file, read back losslessly, and
other tools' memories (a LangGraph store dump, mem0, LangMem) imported as conversation (docs/portable.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from . import cli_args
from .cli_admin import _services as _open

console = Console(emoji=False, soft_wrap=True, stderr=True)  # stdout may be the export itself


def _write_private(path: Path, lines) -> int:
    """The lines into ``path``, readable by its owner only (it holds what the user said), replaced whole."""
    tmp = path.with_name(path.name + ".part")
    n = 0
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(line + "\n")
                n += 1
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


def cmd_export(args) -> int:
    from lumina_memory.nodes.portable.export import export_lines

    services = _open()
    try:
        lines = list(export_lines(services, args.user, actor="cli"))  # NoMemory before a file is made
    finally:
        services.close()
    if args.out == "-":
        sys.stdout.writelines(line + "\n" for line in lines)
        return 0
    n = _write_private(Path(args.out), lines)
    console.print(escape(f"exported {n - 1} records of {args.user} to {args.out}"))
    return 0


def _read_lines(path: str) -> list[str]:
    from .ingest_file import check_text_file

    check_text_file(Path(path))
    return Path(path).read_text(encoding="utf-8").splitlines()


def cmd_import(args) -> int:
    if args.source == "lumina":
        return _import_export(args)
    return _import_foreign(args)


def _import_export(args) -> int:
    from lumina_memory.nodes.portable.load import load_export
    from lumina_memory.nodes.portable.read import read_export

    export = read_export(_read_lines(args.file))  # the whole file checked before anything opens
    services = _open()
    try:
        written = load_export(services, export, args.user, actor="cli")
    finally:
        services.close()
    console.print(escape(f"imported {export.user_id}'s memory as {args.user or export.user_id}: "
                         + ", ".join(f"{k} {v}" for k, v in written.items())
                         + "; every derived tier rebuilt with the configured embedder"))
    return 0


def import_turns(graph, user_id: str, turns: list[dict], source: str, actor: str = "api") -> int:
    """Each turn into ``user_id``'s memory as a memory of its own (its segment closed after it), recorded in the
    audit log as an import from ``source``; returns how many."""
    from lumina_memory.nodes.portable.audit import IMPORTED, record

    from .idle_segments import writing_thread
    from .replay import replay

    services = graph.lumina_services()
    with writing_thread(services, user_id, "an import into the thread"):
        for turn in turns:
            replay(graph, user_id, [turn], flush=True)
    record(services, IMPORTED, actor, user_id, {"from": source, "counts": {"turn": len(turns)}})
    return len(turns)


def _import_foreign(args) -> int:
    from lumina_memory.nodes.portable.importers import foreign_turns
    from lumina_memory.nodes.portable.load import refuse_erased

    from .cli import _open as open_graph

    if not args.user:
        raise_missing_user(args.source)
    turns = foreign_turns(args.source, _read_lines(args.file))  # the whole file checked before anything opens
    services, graph, checkpoints = open_graph()
    try:
        refuse_erased(services, args.user)
        n = import_turns(graph, args.user, turns, args.source, actor="cli")
    finally:
        services.close()
        checkpoints.close()
    console.print(escape(f"imported {n} {args.source} memories into {args.user}'s memory"))
    return 0


def raise_missing_user(source: str) -> None:
    from lumina_memory.stores.errors import InvalidInput

    raise InvalidInput("--user", f"whose memory the {source} memories go to must be given")


def register(sub: argparse._SubParsersAction) -> None:
    exp = sub.add_parser("export", help="a user's whole memory as one portable JSONL file (docs/portable.md)")
    exp.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    exp.add_argument("--out", type=lambda v: v if v == "-" else cli_args.new_file(v), default="-",
                     help="the file to write, private to its owner (default: -, standard output)")
    exp.set_defaults(func=cmd_export)
    imp = sub.add_parser("import", help="read an export back, or memories from a LangGraph store, mem0 or LangMem")
    imp.add_argument("file", type=cli_args.readable_file, help="the file to read")
    imp.add_argument("--user", type=cli_args.user_id, default=None,
                     help="whose memory it becomes (an export: default its own user; --from: required)")
    imp.add_argument("--from", dest="source", choices=["lumina", "langgraph-store", "mem0", "langmem"], default="lumina",
                     help="what the file is: %(choices)s (default: %(default)s, an export of `lumina-memory export`)")
    imp.set_defaults(func=cmd_import)
