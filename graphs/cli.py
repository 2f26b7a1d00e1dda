"""`lumina-memory`: demo, chat, ingest, recall, stats and the embedded services."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lumina_memory.nodes.characters import CHARACTERS, names_phrase
from lumina_memory.stores.errors import LuminaError

from . import cli_args
from .cli_admin import _services
from .cli_epilog import help_epilog
from .logging_setup import configure_logging
from lumina_memory.stores.settings import LuminaSettings

# ":b:" in an id like "a:b:" is data, never an emoji code; a line is printed whole (the terminal wraps it),
# so a reason is never split in two for whoever reads the output line by line.
console = Console(emoji=False, soft_wrap=True)

DEMO_QUESTIONS = (
    "猫の名前と年齢って何だっけ？",
    "ノクスがおすすめしてくれた映画、なんだったっけ？",
    "クラリスに教わったチーズケーキ、何度で何分焼くんだっけ？",
)


def _open(settings: LuminaSettings | None = None):
    """Services, the memory graph and its checkpoints (closed by the caller): the data dir's SQLite file, or in
    server mode the memory's PostgreSQL, where every process sees the threads (stores.places.checkpoints_place)."""
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.places.checkpoints_open import open_checkpoints

    from .memory_graph import build_graph

    settings = settings or LuminaSettings()
    services = open_services(settings)
    try:
        checkpoints = open_checkpoints(settings)
    except BaseException:
        services.close()
        raise
    graph = build_graph(services, checkpointer=checkpoints.saver)
    from .idle_segments import sweep_at_open

    sweep_at_open(services)  # A5: quiet conversations are encoded by the next command that opens the memory
    return services, graph, checkpoints


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console,
    )


def _ingest_rows(graph, rows: list[dict], label: str) -> dict[str, int]:
    from .idle_segments import writing_thread
    from .replay import replay

    by_user: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_user[row.get("user_id", "")].append(row)
    counts: dict[str, int] = {}
    with _progress() as bar:
        task = bar.add_task(label, total=len(rows))
        for user_id, turns in by_user.items():
            with writing_thread(graph.lumina_services(), user_id, "an import into the thread"):  # one writer at a time
                counts[user_id] = replay(graph, user_id, turns, progress=lambda n: bar.advance(task, n))
    return counts


def print_stats(services, user_id: str | None) -> None:
    from .inspect import tier_stats

    stats = tier_stats(services, user_id)
    table = Table(title=f"What each tier holds{f' for {user_id}' if user_id else ''}")
    table.add_column("tier")
    table.add_column("backend")
    table.add_column("holds")
    table.add_row("mid-term", stats["mid-term"]["backend"], f"{stats['mid-term']['segments']} segments (24 h TTL)")
    table.add_row("archive", stats["archive"]["backend"],
                  f"{stats['archive']['turns']} turns, {stats['archive']['segments']} segments")
    table.add_row("long-term", stats["long-term"]["backend"],
                  f"{stats['long-term']['points']} points in {stats['long-term']['collection']}")
    graph = stats["graph"]  # a string when the graph is down (degraded mode)
    nodes = ", ".join(f"{k} {v}" for k, v in graph["nodes"].items()) if isinstance(graph["nodes"], dict) else graph["nodes"]
    edges = ", ".join(f"{k} {v}" for k, v in graph["edges"].items()) if isinstance(graph["edges"], dict) else graph["edges"]
    table.add_row("graph", stats["graph"]["backend"], f"nodes: {nodes}\nedges: {edges}")
    console.print(table)
    console.print("paths: " + ", ".join(f"{k}={v}" for k, v in stats["paths"].items()))
    from .cli_report import cost_lines  # issue 49: what each operation cost (`lumina-memory report` in full)

    for line in cost_lines(stats["costs"]):
        console.print(line, markup=False)
    if "capacity" in stats:  # issue 49: `lumina-memory capacity --user` in full
        from .cli_undo import capacity_lines

        for line in capacity_lines(stats["capacity"]):
            console.print(line, markup=False)
    owed = stats.get("derivations", {})
    from lumina_memory.stores.backup import restore_state
    from lumina_memory.stores.errors import StoreUnavailable
    from lumina_memory.stores.file_swap import leftovers
    from lumina_memory.stores.shared_state import shared_state_of

    from .tier_match import store_mismatches

    try:  # per user: what the totals hide (one user's points lost, an erased user's left)
        unmatched, doubtful = store_mismatches(services.stores)
    except StoreUnavailable as exc:
        unmatched, doubtful = [f"not compared: {exc}"], []
    data_dir = services.settings.resolved_data_dir()
    swaps = [str(p.relative_to(data_dir)) for p in leftovers(data_dir)]
    half_restored = [detail for status, detail in restore_state(shared_state_of(services)) if status != "OK"]
    for detail in half_restored:
        console.print(f"restore not finished: {detail}", style="red", markup=False)
    for line in unmatched:
        console.print(f"tier does not match the archive: {line}", style="red", markup=False)
    for line in doubtful:
        console.print(f"check: {line}", style="yellow", markup=False)
    if swaps:
        console.print(f"unfinished rewrite files: {', '.join(swaps[:6])} (see `lumina-memory doctor`)", style="red",
                      markup=False)
    if owed.get("segments") or owed.get("degraded"):  # degraded mode: say what waits, and why
        console.print(f"[yellow]degraded: {owed['segments']} archived segment(s) owe derived writes "
                      f"({', '.join(f'{k} {v}' for k, v in owed['owed'].items()) or 'none'}); tiers down: "
                      f"{', '.join(owed['degraded']) or 'none now'}[/yellow]")
    elif not unmatched and not doubtful and not swaps and not half_restored:
        console.print("derivations: every derived tier is up to date with the archive, user by user")


def print_recall(services, user_id: str, question: str, purpose: str, limit: int) -> list[dict]:
    from lumina_memory.nodes.retrieval.recall import recall

    from .inspect import source_turns

    started = time.perf_counter()
    items = recall(services, user_id, question, purpose=purpose, limit=limit)
    elapsed = (time.perf_counter() - started) * 1000
    console.print(f"\n[bold]Q:[/bold] {escape(question)}  [dim]({len(items)} items, {elapsed:.0f} ms)[/dim]")
    for rank, item in enumerate(items, 1):  # stored texts are data: escaped, never read as markup
        console.print(f"  {rank}. " + escape(f"[{item['date']} · {'+'.join(item['tiers'])} · score {item['score']:.2f}] "
                                             f"{item['text'][:140]}"))
        for turn in source_turns(services, user_id, item, limit=2):
            console.print("       [dim]" + escape(f"↳ {turn['source_id']} {turn['speaker']}: {turn['text'][:80]}") + "[/dim]")
    return items


def cmd_demo(args) -> int:
    from .replay import DEMO_TRANSCRIPT, read_jsonl

    services, graph, conn = _open()
    try:
        rows = list(read_jsonl(DEMO_TRANSCRIPT))
        user_id = args.user or rows[0]["user_id"]
        for row in rows:
            row["user_id"] = user_id
        started = time.perf_counter()
        _ingest_rows(graph, rows, f"replaying {len(rows)} demo turns")
        console.print(f"replayed {len(rows)} turns in {time.perf_counter() - started:.1f} s")
        print_stats(services, user_id)
        if services.paths.get("responder") == "offline":
            console.print("[yellow]No OPENAI_API_KEY: summaries are extractive and replies come from the "
                          "offline responder.[/yellow]")
        for question in DEMO_QUESTIONS:
            print_recall(services, user_id, question, "question", 3)
    finally:
        services.close()
        conn.close()
    return 0


def cmd_chat(args) -> int:
    from langchain_core.messages import HumanMessage

    from .idle_segments import writing_thread
    from .replay import thread_config

    services, graph, conn = _open()
    offline = services.paths.get("responder") == "offline"
    console.print(f"Chatting as {escape(args.user)}. Empty line or Ctrl-D to quit."
                  + (" [yellow](offline responder: no OPENAI_API_KEY)[/yellow]" if offline else ""))
    try:
        while True:
            try:
                line = input("you> ").strip()
            except EOFError:
                break
            if not line:
                break
            try:
                with writing_thread(services, args.user, "a chat turn"):  # one writer of the thread at a time
                    out = graph.invoke({"messages": [HumanMessage(line)]}, thread_config(args.user),
                                       context={"user_id": args.user, "character": args.character})
            except LuminaError as exc:
                console.print("[red]" + escape(str(exc)) + "[/red]", soft_wrap=True)
                continue
            console.print(escape(f"{out.get('responder', '?')}> {out.get('reply', '')}"))
    finally:
        from lumina_memory.nodes.lifecycle.catch_up import wait_for_catch_ups

        wait_for_catch_ups(services)  # F9: a missed batch a turn started finishes before the stores close
        services.close()
        conn.close()
    return 0


def cmd_ingest(args) -> int:
    from .ingest_file import ingest_file  # valid lines in, rejected ones to a rejects file (exit 2)

    return ingest_file(args, _open, _ingest_rows, console)


def cmd_recall(args) -> int:
    from lumina_memory.nodes.retrieval.recall import recall

    services = _services()  # the stores alone: no LangGraph import, no checkpoint file
    try:
        if args.json:  # machine-readable: the items alone on stdout
            items = recall(services, args.user, args.question, purpose=args.purpose, limit=args.limit)
            print(json.dumps(items, ensure_ascii=False, indent=2))
        else:
            print_recall(services, args.user, args.question, args.purpose, args.limit)
    finally:
        services.close()
    return 0


def cmd_stats(args) -> int:
    services = _services()  # the stores alone: no LangGraph import, no checkpoint file
    try:
        print_stats(services, args.user)
    finally:
        services.close()
    return 0


def cmd_optimize(args) -> int:
    services = _services()  # the stores alone: no LangGraph import, no checkpoint file
    try:
        with console.status("building the vector indexes (CPU-bound; minutes for a million vectors)"):
            reports = services.stores.optimize()
        for r in reports:
            state = "indexed" if r["optimized"] else "left to the server"
            console.print(f"{r['collection']} ({r['backend']}): {state}, {r['indexed_vectors']} vectors in the index, {r['seconds']} s")
    finally:
        services.close()
    return 0


def cmd_services(args) -> int:
    from lumina_memory.stores import postgres_server
    from lumina_memory.stores.redis_server import server_status, stop_server

    settings = LuminaSettings()
    data_dir = settings.resolved_data_dir()
    if args.action == "status":
        status: dict[str, Any] = server_status(settings)
        for key, value in status.items():
            console.print(escape(f"{key}: {value}"))
        pid = postgres_server.running_pid(postgres_server.dev_root(data_dir))
        console.print(escape(f"postgres: {f'running (pid {pid})' if pid else 'not running'}"))
    elif args.action == "postgres":
        uri = postgres_server.start_dev_server(data_dir)
        console.print(escape(f"PostgreSQL with pgvector is running for development; for the server mode:\n"
                             f"  export DATABASE_URI='{uri}'"), soft_wrap=True)
    else:
        console.print(f"redis: {'stopped' if stop_server(settings) else 'not running'}")
        console.print(f"postgres: {'stopped' if postgres_server.stop_dev_server(data_dir) else 'not running'}")
    return 0


def cmd_recover(args) -> int:
    """Opening the data dir completes what a crash or an outage left owed (see nodes.recovery);
    ``--rederive`` also rebuilds every derived tier of a user from the archive."""
    from lumina_memory.nodes.recovery import outbox_summary, rederive

    services, _graph, conn = _open()  # the start-up recovery runs here, and logs what it repaired
    try:
        if args.rederive:  # build_parser refused --rederive without --user
            report = rederive(services, args.user)
            console.print(escape(f"{args.user}: " + (", ".join(f"{k} {v}" for k, v in report.items()) or "nothing to do")))
        owed = outbox_summary(services.stores.archive)
        console.print(f"derived writes still owed: {owed['segments']} segment(s) {owed['owed'] or ''}".rstrip())
        return 1 if owed["segments"] else 0
    finally:
        services.close()
        conn.close()


def cmd_doctor(args) -> int:
    from .doctor import doctor_command

    return doctor_command(console)


def build_parser() -> argparse.ArgumentParser:
    # Every value is checked here (graphs.cli_args), before a command opens anything: a refused command
    # creates no data directory and starts no server.
    parser = cli_args.Parser(prog="lumina-memory", description=__doc__, epilog=help_epilog(),
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="log one line per node")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="replay the bundled Japanese conversation and recall from it")
    demo.add_argument("--user", type=cli_args.user_id, default=None,
                      help="replay it as this user id (default: the transcript's own user)")
    demo.set_defaults(func=cmd_demo)
    chat = sub.add_parser("chat", help=f"talk with {names_phrase()}")
    chat.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    chat.add_argument("--character", choices=CHARACTERS, default=None,
                      help="who answers: %(choices)s (default: the one the message names, else whoever spoke least)")
    chat.set_defaults(func=cmd_chat)
    ingest = sub.add_parser("ingest", help="ingest a JSONL transcript (user_id, speaker, text, ts per line), or a "
                                           "session transcript (type: user/assistant lines, F10) with --user")
    ingest.add_argument("file", type=cli_args.readable_file, help="a UTF-8 JSONL file, one turn per line")
    ingest.add_argument("--user", type=cli_args.user_id, default=None,
                        help="whose memory a session transcript (type: user/assistant lines) goes to")
    ingest.add_argument("--as", dest="speaker", choices=CHARACTERS, default="lumina",
                        help="who speaks a session transcript's assistant turns: %(choices)s (default: %(default)s)")
    ingest.add_argument("--rejects", type=cli_args.new_file, default=None,
                        help="where rejected lines go (default: FILE.rejects.jsonl)")
    ingest.set_defaults(func=cmd_ingest)
    rec = sub.add_parser("recall", help="what the memory brings back for a question")
    rec.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    rec.add_argument("question", type=cli_args.question, help="the question, in any language")
    rec.add_argument("--purpose", choices=cli_args.purposes(), default="question",
                     help="what the memory is wanted for, which weights relevance, recency and importance: "
                          "%(choices)s (default: %(default)s)")
    rec.add_argument("--limit", type=cli_args.int_between(1, 100), default=5, help="at most this many items (1-100)")
    rec.add_argument("--json", action="store_true", help="print the items as one JSON object")
    rec.set_defaults(func=cmd_recall)
    stats = sub.add_parser("stats", help="what each tier holds")
    stats.add_argument("--user", type=cli_args.user_id, default=None, help="this user only (default: every user)")
    stats.set_defaults(func=cmd_stats)
    opt = sub.add_parser("optimize", help="build the embedded vector store's per-user indexes (after a bulk import, or nightly)")
    opt.set_defaults(func=cmd_optimize)
    svc = sub.add_parser("services", help="the embedded Redis server, and a PostgreSQL for trying the server mode")
    svc.add_argument("action", choices=["status", "stop", "postgres"],
                     help="status: what runs, and where; stop: stop what runs; postgres: start a private PostgreSQL "
                     "with pgvector (unix socket, in the data dir) and print its DATABASE_URI")
    svc.set_defaults(func=cmd_services)
    rcv = sub.add_parser("recover", help="complete derived writes a crash or an outage left owed")
    rcv.add_argument("--user", type=cli_args.user_id, default=None, help="the user whose tiers --rederive rebuilds")
    rcv.add_argument("--rederive", action="store_true", help="rebuild the user's derived tiers from the archive")
    rcv.set_defaults(func=cmd_recover)
    doctor = sub.add_parser("doctor", help="check every configured backend; exit 1 when something is wrong")
    doctor.set_defaults(func=cmd_doctor)
    __import__("lumina_memory.graphs.cli_admin", fromlist=["register"]).register(sub)  # erase, audit, backup, restore, backups, maintain
    __import__("lumina_memory.graphs.cli_memories", fromlist=["register"]).register(sub)  # memories, protect, unprotect, forget
    __import__("lumina_memory.graphs.cli_undo", fromlist=["register"]).register(sub)  # undo, forget-preview, capacity
    __import__("lumina_memory.graphs.cli_knowledge", fromlist=["register"]).register(sub)  # knowledge
    __import__("lumina_memory.graphs.cli_procedures", fromlist=["register"]).register(sub)  # procedures, outcome
    __import__("lumina_memory.graphs.cli_session", fromlist=["register"]).register(sub)  # session-end (F10's hook)
    __import__("lumina_memory.graphs.cli_kb", fromlist=["register"]).register(sub)  # kb add | search | read | list | remove
    __import__("lumina_memory.graphs.cli_agents", fromlist=["register"]).register(sub)  # agents show | search | erase
    __import__("lumina_memory.graphs.cli_report", fromlist=["register"]).register(sub)  # report (docs/costs.md)
    __import__("lumina_memory.graphs.cli_portable", fromlist=["register"]).register(sub)  # export, import (docs/portable.md)
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, every value checked (exit 2 with one line on stderr otherwise)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "rederive", False) and not args.user:
        parser.error("recover --rederive needs --user ID")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    if args.verbose or os.environ.get("LUMINA_LOG_FORMAT") or os.environ.get("LUMINA_LOG_LEVEL"):
        configure_logging(level="INFO" if args.verbose else None)
    try:
        return args.func(args)
    except LuminaError as exc:  # the whole message on one line (the terminal wraps it), never read as markup
        console.print("[red]error:[/red] " + escape(str(exc)), soft_wrap=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
