"""`lumina-memory agents show | search | erase`: inspect and erase agents' memory (issue 48, PIANO).

``show`` prints an agent's working memory, its STM and LTM counts and its latest events; ``search`` ranks its
memories for a query with a cognitive module's weights (the retrieval an agent's module makes: LTM hits count as
accesses); ``erase`` erases an agent, or every agent of a run, everywhere (as ``erase`` does a user) and, without
``--yes``, only says what would go. ``--json`` output fields are the records' (stores.agent_records).
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

console = Console(emoji=False, soft_wrap=True)  # ids and contents are data, never markup or emoji codes
RECENT = 10


def _print_json(value) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1) + "\n")


def _memory(services):
    from lumina_memory.nodes.agents.memory import AgentMemory

    return AgentMemory(services)


def cmd_show(args) -> int:
    services = _open()
    try:
        memory = _memory(services)
        tables = memory.agents.tables
        info = {"agent_id": args.agent, "run_id": tables.run_of(args.agent), "wm": memory.get_wm(args.agent),
                "stm": tables.count_events(args.agent), "ltm": tables.count_ltm(args.agent),
                "groups": tables.groups_of(args.agent),
                "recent": [e.model_dump() for e in tables.events(args.agent, args.recent, newest=True)]}
        memory.close()
    finally:
        services.close()
    if args.json:
        _print_json(info)
        return 0
    if info["run_id"] is None:
        console.print(escape(f"no agent {args.agent} in this memory"))
        return 1
    console.print(escape(f"{args.agent} (run {info['run_id']}): STM {info['stm']} events, LTM {info['ltm']} records"
                         + (f", groups {', '.join(info['groups'])}" if info["groups"] else "")))
    console.print(escape("working memory: " + json.dumps(info["wm"], ensure_ascii=False)))
    table = Table(title=escape(f"latest {len(info['recent'])} events"))
    for column in ("time", "type", "importance", "content"):
        table.add_column(column)
    for e in info["recent"]:
        table.add_row(*cells(f"{e['time']:.0f}", e["type"], f"{e['importance']:.2f}", e["content"][:200]))
    console.print(table)
    return 0


def cmd_search(args) -> int:
    services = _open()
    try:
        memory = _memory(services)
        found = memory.retrieve(args.agent, args.query, args.module, top_k=args.limit)
        memory.close()
    finally:
        services.close()
    if args.json:
        _print_json([r.model_dump() for r in found])
        return 0
    table = Table(title=escape(f"{args.agent}: {args.query} (module {args.module})"))
    for column in ("layer", "score", "type", "content"):
        table.add_column(column)
    for r in found:
        table.add_row(*cells(r.layer, f"{r.score:.3f}", r.type or "", r.content[:200]))
    console.print(table)
    return 0


def cmd_erase(args) -> int:
    from .agents_erase import erase_agent, erase_run, run_agents

    if (args.agent is None) == (args.run is None):
        console.print("[red]error:[/red] name an agent or --run RUN (one of them)")
        return 2
    services = _open()
    try:
        agents = run_agents(services, args.run) if args.run is not None else [args.agent]
        if not args.yes:
            what = f"run {args.run}: {len(agents)} agents" if args.run is not None else f"agent {args.agent}"
            console.print(escape(f"would erase {what} everywhere (records, vectors, shared memories, backups); "
                                 "run again with --yes to erase"))
            return 1
        report = erase_run(services, args.run, actor=args.actor) if args.run is not None else \
            {"agents": agents, "removed": erase_agent(services, args.agent, actor=args.actor)["removed"]}
    finally:
        services.close()
    if args.json:
        _print_json(report)
        return 0
    for name, n in report["removed"].items():
        if n:
            console.print(escape(f"{name}: {n} removed"))
    console.print(escape(f"erased {len(report['agents'])} agent(s) (recorded in the audit log and the erasure ledgers)"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    agents = sub.add_parser("agents", help="agents' memory (simulations): show, search, erase")
    agents_sub = agents.add_subparsers(dest="agents_command", required=True)
    show = agents_sub.add_parser("show", help="an agent's working memory, STM and LTM counts, latest events")
    show.add_argument("agent", type=cli_args.agent_id, help="the agent's id (checked as user ids are)")
    show.add_argument("--recent", type=cli_args.int_between(0, 1000), default=RECENT, help="latest events shown")
    show.add_argument("--json", action="store_true", help="print as JSON")
    show.set_defaults(func=cmd_show)
    search = agents_sub.add_parser("search", help="an agent's memories for a query, ranked with a module's weights")
    search.add_argument("agent", type=cli_args.agent_id, help="the agent's id")
    search.add_argument("query", type=cli_args.query, help="what the agent looks for, in any language")
    search.add_argument("--module", type=cli_args.module, default="default",
                        help="the cognitive module (social, goals, planning, reflection, talking, cc; others: default)")
    search.add_argument("--limit", type=cli_args.int_between(1, 100), default=None, help="results (default: the module's)")
    search.add_argument("--json", action="store_true", help="print the results as JSON")
    search.set_defaults(func=cmd_search)
    erase = agents_sub.add_parser("erase", help="erase an agent, or every agent of a run, everywhere")
    erase.add_argument("agent", nargs="?", type=cli_args.agent_id, default=None, help="the agent's id")
    erase.add_argument("--run", type=cli_args.run_id, default=None, help="every agent of this run")
    erase.add_argument("--yes", action="store_true", help="really erase (without: say what would go)")
    erase.add_argument("--actor", type=cli_args.actor, default="cli", help="who asks (recorded in the audit log)")
    erase.add_argument("--json", action="store_true", help="print the report as JSON")
    erase.set_defaults(func=cmd_erase)
