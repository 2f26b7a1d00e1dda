"""Operator commands of `lumina-memory`: erase, audit, backup, restore, backups, maintain."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import cli_args

console = Console(emoji=False, soft_wrap=True)  # ids are data (":b:" is no emoji code); lines print whole


def _services():
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.settings import LuminaSettings

    return open_services(LuminaSettings())


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def cmd_erase(args) -> int:
    from .erase import erase_plan, erase_user

    services = _services()
    try:
        if args.confirm is None:
            plan = erase_plan(services, args.user)
            if args.json:
                _print_json({"counts": plan["counts"], "token": plan["token"],
                             "expires_at": plan["expires_at"], "user_id": args.user})
                return 0
            table = Table(title=escape(f"Erasing {args.user} would remove"))
            table.add_column("place")
            table.add_column("records", justify="right")
            for name, n in plan["counts"].items():
                table.add_row(name, str(n))
            console.print(table)
            left = plan["expires_at"] - int(time.time())
            console.print(escape(f"To erase, within {left} s:\n  lumina-memory erase --user {args.user} --confirm {plan['token']}"),
                          soft_wrap=True)
            return 0
        report = erase_user(services, args.user, args.confirm, actor=args.actor)
        if args.json:
            _print_json(report)
        else:
            for name, n in report["removed"].items():
                console.print(f"{name}: {n} removed")
            for url, snaps in report["backups"].items():
                console.print(escape(f"backups at {url}: {sum(snaps.values())} records removed from {len(snaps)} snapshots"))
            print_erase_reach(report)
            console.print("[green]erased[/green] (recorded in the audit log and the erasure ledgers)")
        return 0
    finally:
        services.close()


def cmd_audit(args) -> int:
    # Reads only: the archive opened read-only and the data dir's secret; no other store, no Redis, and
    # nothing created (a data dir that does not exist is an error, not a new empty one).
    from rich.markup import escape

    from lumina_memory.stores.factory import read_only_audit
    from lumina_memory.stores.settings import LuminaSettings

    settings = LuminaSettings()
    with read_only_audit(settings) as log:
        if args.verify:
            result = log.verify()
            if args.json:
                _print_json(result)
            elif result["ok"]:
                console.print(f"[green]audit chain intact[/green]: {result['rows']} rows")
            elif result["broken_at"] is None:
                console.print(f"[red]audit chain not verifiable[/red]: {escape(result['problem'])}")
            else:
                console.print(f"[red]audit chain broken at seq {result['broken_at']}[/red]: {escape(result['problem'])}")
            if result["notice"] and not args.json:
                console.print(f"[yellow]note[/yellow]: {escape(result['notice'])}")
            return 0 if result["ok"] else 1
        rows = log.rows()
        if args.json:
            _print_json(rows)
            return 0
        table = Table(title="Audit log")
        for column in ("seq", "when (UTC)", "event", "actor", "user (keyed hash)", "detail"):
            table.add_column(column)
        for r in rows:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r["at"]))
            table.add_row(str(r["seq"]), when, r["event"], r["actor"], r["user_ref"], r["detail"][:120])
        console.print(table)
        return 0


def cmd_backup(args) -> int:
    from .erase import backup_now

    services = _services()
    try:
        manifest = backup_now(services, args.to, groups=args.group or None, actor=args.actor)
        if args.json:
            _print_json(manifest)
        else:
            console.print(f"snapshot {manifest['id']}: " + ", ".join(f"{n} {e['count']}" for n, e in manifest["places"].items()))
        return 0
    finally:
        services.close()


def cmd_restore(args) -> int:
    from .erase import restore_from

    services = _services()
    try:
        report = restore_from(services, args.source, args.snapshot, actor=args.actor)
        if args.json:
            _print_json(report)
        else:
            console.print(f"restored from {', '.join(report['snapshots'])}: "
                          + ", ".join(f"{n} {c}" for n, c in report["restored"].items()))
            print_restore_notes(report)
        return 0
    finally:
        services.close()


def print_restore_notes(report: dict[str, Any]) -> None:
    """A resumed restore, the erasure ledgers applied (and unreachable), and what they cannot promise."""
    from rich.markup import escape

    if report.get("resumed"):
        console.print(f"resumed a killed restore: {len(report['resumed'])} place(s) were already done")
    for ledger in report.get("ledgers_applied", []):
        latest = ledger["latest_erasure_at"]
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(latest)) if latest else "-"
        console.print(escape(f"erasure ledger applied: {ledger['where']} ({ledger['erasures']} erased, latest {when})"))
    for where, why in report.get("ledgers_unreachable", {}).items():
        console.print(escape(f"erasure ledger not reachable: {where}: {why}"), style="yellow")
    for warning in report.get("warnings", []):
        console.print(escape(f"warning: {warning}"), style="yellow")


def print_erase_reach(report: dict[str, Any]) -> None:
    """Partial backups an erasure removed or scrubbed, and the locations it could not reach."""
    from rich.markup import escape

    for url, done in report.get("partials", {}).items():
        if done["removed"] or done["scrubbed"]:
            console.print(escape(f"partial backups at {url}: {len(done['removed'])} removed, "
                                 f"{len(done['scrubbed'])} being written scrubbed"))
    for url, why in report.get("unreachable", {}).items():
        console.print(escape(f"NOT REACHED: backups at {url} ({why}); owed, retried by the next erasure or backup"),
                      style="bold red")


def cmd_backups(args) -> int:
    from lumina_memory.stores.backup import clean_partials, manifests
    from lumina_memory.stores.backup_location import open_location
    from lumina_memory.stores.settings import LuminaSettings

    settings = LuminaSettings()
    where = args.location or settings.backup_location
    if where is None:
        data_dir = settings.resolved_data_dir()
        where = str(data_dir.parent / f"{data_dir.name}-backups")
    location = open_location(where, settings)
    if location.remote:
        location.staging_root = settings.resolved_data_dir() / "backup-staging"
    cleaned = clean_partials(location)  # housekeeping: what killed backups left behind
    found = manifests(location)
    if args.json:
        _print_json([{"id": m["id"], "created_at": m["created_at"], "groups": m.get("groups"),
                      "counts": {n: e["count"] for n, e in m["places"].items()}} for m in found])
        return 0
    table = Table(title=Text(f"Backups in {where}"))  # a path is data, never markup
    for column in ("id", "created (UTC)", "places", "records"):
        table.add_column(column)
    for m in found:
        table.add_row(m["id"], time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(m["created_at"])),
                      str(len(m["places"])), str(sum(e["count"] for e in m["places"].values())))
    console.print(table)
    if cleaned:
        from rich.markup import escape

        console.print(escape(f"removed {len(cleaned)} partial backup(s) left by killed backups: {', '.join(cleaned)}"))
    return 0


LEVEL_NAMES = ("1 full", "2 summary", "3 keywords", "4 archived")
LIFECYCLE_COUNTS = ("reinforced", "revived", "deleted", "links_added")


class StepBars:
    """A progress bar per maintenance step, on stderr (stdout stays the report's, ``--json`` stays JSON)."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(stderr=True))
        self.tasks: dict[str, Any] = {}
        self.current: str | None = None

    def __enter__(self) -> StepBars:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._finish()
        self.progress.stop()

    def __call__(self, step: str, done: int, total: int | None) -> None:
        if step not in self.tasks:
            self._finish()
            self.tasks[step] = self.progress.add_task(step, total=None)
            self.current = step
        if total is not None:
            self.progress.update(self.tasks[step], completed=done, total=total)

    def _finish(self) -> None:  # a step is done when the next one starts (or the run ends)
        if self.current is None:
            return
        task = self.progress.tasks[self.tasks[self.current]]
        size = int(task.total or task.completed or 1)  # a step that counts nothing shows 1/1
        self.progress.update(task.id, total=size, completed=size)
        self.current = None


def lifecycle_table(report: dict[str, Any]) -> Table:
    """The batch's level moves (rows from level 1–4, columns to level 1–4 or deleted, summed over the days
    run) and, last, how many memories each level holds now."""
    days = f"{report['days']} day(s), {report['user_days']} user-day(s)"
    table = Table(title=f"Lifecycle: what moved between levels ({days})",
                  caption="moves summed over the days run; a memory that stayed is not counted")
    table.add_column("from ↓  to →")
    for name in (*LEVEL_NAMES, "deleted"):
        table.add_column(name, justify="right")
    for i, (name, row) in enumerate(zip(LEVEL_NAMES, report["transitions"])):
        table.add_row(name, *("–" if i == j else str(n) if n else "·" for j, n in enumerate(row)))
    table.add_row("now at level", *(str(n) for n in report["levels"]), "", end_section=True, style="bold")
    return table


def print_maintenance(report: dict[str, Any]) -> None:
    for step, outcome in report.items():
        if step == "lifecycle" or step.startswith("lifecycle_"):
            continue
        console.print(escape(f"{step}: {outcome}"))
    summary = report.get("lifecycle")
    if summary is None:
        return
    console.print(lifecycle_table(summary))
    console.print(", ".join(f"{k.replace('_', ' ')} {summary[k]}" for k in LIFECYCLE_COUNTS))
    applied = {**summary["applied_before"]}
    for kind, n in summary["applied"].items():
        applied[kind] = applied.get(kind, 0) + n
    writes = ", ".join(f"{kind} {n}" for kind, n in sorted(applied.items())) or "none"
    waiting = f"; [yellow]{summary['waiting']} waiting for a store[/yellow]" if summary.get("waiting") else ""
    console.print(f"derived writes applied: {writes}{waiting}")
    for step, reason in (summary.get("skipped") or {}).items():
        console.print(escape(f"{step} skipped: {reason}"), style="yellow")


def cmd_maintain(args) -> int:
    from .maintenance_graph import run_maintenance

    services = _services()
    try:
        now = None
        if args.now:
            from datetime import datetime

            try:
                now = datetime.fromisoformat(args.now).timestamp()
            except ValueError:
                from lumina_memory.stores.errors import InvalidInput

                raise InvalidInput("--now", f"{args.now!r} is not an ISO-8601 time (e.g. 2026-03-01T03:00+09:00)") from None
        with StepBars() as bars:
            report = run_maintenance(services, force=args.force, now=now, user_id=args.user, progress=bars)
        if args.json:
            _print_json(report)
        else:
            print_maintenance(report)
        return 0
    finally:
        services.close()


def register(sub: argparse._SubParsersAction) -> None:
    erase = sub.add_parser("erase", help="erase every trace of a user (first shows what and a confirmation token)")
    erase.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    erase.add_argument("--confirm", metavar="TOKEN", type=cli_args.token, default=None,
                       help="the token the first call printed")
    erase.add_argument("--json", action="store_true", help="print the plan or the report as JSON")
    erase.add_argument("--actor", type=cli_args.actor, default="cli", help="who asks (recorded in the audit log)")
    erase.set_defaults(func=cmd_erase)
    audit = sub.add_parser("audit", help="the hash-chained audit log (erasures, restores, backups, settings)")
    audit.add_argument("--verify", action="store_true", help="check the chain; exit 1 when broken")
    audit.add_argument("--json", action="store_true", help="print the entries (or the check) as JSON")
    audit.set_defaults(func=cmd_audit)
    backup = sub.add_parser("backup", help="snapshot every place holding user data")
    backup.add_argument("--to", type=cli_args.location, default=None,
                        help="a folder or s3://bucket/prefix (default: backup_location)")
    backup.add_argument("--group", action="append", choices=["redis", "archive", "vectors"],
                        help="only this schedule group, repeatable: %(choices)s (default: every group)")
    backup.add_argument("--json", action="store_true", help="print the report as JSON")
    backup.add_argument("--actor", type=cli_args.actor, default="cli", help="who asks (recorded in the audit log)")
    backup.set_defaults(func=cmd_backup)
    restore = sub.add_parser("restore", help="restore a backup into an empty data directory or the configured servers")
    restore.add_argument("--from", dest="source", type=cli_args.existing_location, required=True,
                         help="the backup location: an existing folder or s3://bucket/prefix")
    restore.add_argument("--snapshot", type=cli_args.snapshot_id, default=None,
                         help="a snapshot id (default: the newest of each place)")
    restore.add_argument("--json", action="store_true", help="print the report as JSON")
    restore.add_argument("--actor", type=cli_args.actor, default="cli", help="who asks (recorded in the audit log)")
    restore.set_defaults(func=cmd_restore)
    listing = sub.add_parser("backups", help="list complete backups")
    listing.add_argument("--list", action="store_true", help="(the default action)")
    listing.add_argument("--location", type=cli_args.location, default=None,
                         help="a folder or s3://bucket/prefix (default: backup_location)")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.set_defaults(func=cmd_backups)
    maintain = sub.add_parser("maintain", help="run the maintenance steps that are due (lifecycle, backups, pruning, retention)")
    maintain.add_argument("--force", action="store_true", help="run every backup group now")
    maintain.add_argument("--user", type=cli_args.user_id, default=None, help="run the lifecycle for this user only")
    maintain.add_argument("--now", type=cli_args.iso_time, default=None, help="ISO-8601 time to run as (a simulated clock)")
    maintain.add_argument("--json", action="store_true", help="print what ran as JSON")
    maintain.set_defaults(func=cmd_maintain)
