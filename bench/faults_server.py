"""Server-mode fault trials (issue 47): many processes on one private PostgreSQL (pgvector) and one Redis.

    python -m bench.faults_server [--trials 20] [--lone-trials 0] [--turns 200] [--users 3] [--json OUT.json]
                                  [--md OUT.md]

- kill -9 among concurrent importers (bench.faults_server_concurrent): three ``lumina-memory ingest`` at once on
  one fresh database per trial, a user each and one shared user all three import; one of them SIGKILLed at a
  random moment (after its n-th archive commit, or at a random node) while the two others import, re-run to
  completion; then every tier compared id by id (bench.faults.tier_ids: archive turns and segments, mid-term,
  pgvector points of segments and turns, graph segments, concepts and edges) with one process's import of the
  whole transcript. "lost": ids the reference has and the trial not; "duplicated": ids the trial has and the
  reference not; ids carry their user, so a row filed under another user counts as both.
- ``--lone-trials``: the same with the killed import alone (no other process importing).
- three processes (bench.faults_server_trio): a ``langgraph dev`` server driven through langgraph_sdk, the CLI
  import and a plain Python process (open_services + replay), at once, each with a user of its own and one
  shared transcript; then each recalls what the others wrote.
- two ``lumina-memory maintain --now`` at once (bench.faults_server_maintain): each batch day applied once,
  the memories' lifecycle columns equal to one maintain's on a copy of the same import.

Every server started here (PostgreSQL, each data dir's Redis, langgraph dev) is stopped on every exit path.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.faults import ingest, tier_ids

SECRET = "faults-server-secret-0123456789abcdef0123"


class Postgres:
    """One private PostgreSQL for a run, a fresh database per trial (``database(name)``)."""

    def __init__(self, root: Path):
        from lumina_memory.stores.postgres_server import start_private_postgres

        self.server = start_private_postgres(root)

    def database(self, name: str) -> str:
        return self.server.create_database(name)

    def stop(self) -> None:
        self.server.stop()


def server_env(uri: str) -> dict[str, str]:
    """What makes a process run in server mode: LUMINA_DATABASE_URL (``langgraph dev`` sets DATABASE_URI to an
    in-memory placeholder in its own process, which the settings ignore) and the secret every replica shares."""
    return {"LUMINA_DATABASE_URL": uri, "LUMINA_SECRET_KEY": SECRET}


def server_settings(data_dir: Path, uri: str):
    from bench.common import bench_settings

    return bench_settings(data_dir, database_url=uri, secret_key=SECRET)


def stop_redis(data_dir: Path) -> None:
    """Stop the private Redis the processes of ``data_dir`` share (if one runs)."""
    from bench.common import bench_settings
    from lumina_memory.stores.redis_server import stop_server

    stop_server(bench_settings(data_dir))


def fingerprint(data_dir: Path, uri: str, users: list[str]) -> dict[str, set]:
    """Every tier's ids for ``users`` as a fresh process sees them (its start-up recovery runs first)."""
    from lumina_memory.nodes.services import open_services

    services = open_services(server_settings(data_dir, uri))
    try:
        return tier_ids(services, users)
    finally:
        services.close()


def import_once(file: Path, data_dir: Path, uri: str, **kill) -> Any:
    """``lumina-memory -v ingest FILE`` in server mode on ``uri`` (bench.faults.ingest; ``kill``: its kill_when)."""
    return ingest(file, data_dir, env=server_env(uri), **kill)


def kill_when(rng: random.Random, after_archive: bool, archives: int = 6, nodes: int = 40):
    """A kill_when for bench.faults.ingest: after the n-th archive commit (n ≤ ``archives``), or at the n-th node
    line (n ≤ ``nodes``). The bounds must stay below what the import logs, or the kill lands after its end."""
    if after_archive:
        target = rng.randint(1, archives)
        return lambda line, archived: "node=archive_to_duckdb" in line and archived >= target
    target, seen = rng.randint(1, nodes), [0]

    def when(line: str, archived: int) -> bool:
        seen[0] += "node=" in line
        return seen[0] >= target
    return when


def kill_trial(file: Path, data_dir: Path, uri: str, users: list[str], rng: random.Random,
               after_archive: bool) -> tuple[bool, dict[str, set]]:
    """(whether the kill landed before the import ended, the tiers after a re-run)."""
    try:
        first = import_once(file, data_dir, uri, kill_when=kill_when(rng, after_archive))
        final = import_once(file, data_dir, uri)
        if final.returncode != 0:
            raise RuntimeError("re-run failed:\n" + "\n".join(final.lines[-20:]))
        return first.killed and first.returncode != 0, fingerprint(data_dir, uri, users)
    finally:
        stop_redis(data_dir)


def reference_run(file: Path, root: Path, pg: Postgres, users: list[str], name: str = "reference",
                  log: list[str] | None = None) -> dict[str, set]:
    """One process imports ``file`` to the end into database ``name``: the tiers every trial is compared with
    (``log``: gets the import's log lines)."""
    data_dir, uri = root / name, pg.database(name)
    try:
        clean = import_once(file, data_dir, uri)
        if log is not None:
            log.extend(clean.lines)
        if clean.returncode != 0:
            raise RuntimeError("reference import failed:\n" + "\n".join(clean.lines[-20:]))
        return fingerprint(data_dir, uri, users)
    finally:
        stop_redis(data_dir)


def kill_trials(file: Path, root: Path, pg: Postgres, users: list[str], trials: int, seed: int,
                advance=lambda: None) -> dict[str, Any]:
    """The reference, then ``trials`` kill -9 trials (alternately after an archive commit and at a random node)."""
    from bench.faults import compare

    rng = random.Random(seed)
    reference = reference_run(file, root, pg, users)
    advance()
    out: dict[str, Any] = {"trials": 0, "killed mid-import": 0, "lost": 0, "duplicated": 0, "bad trials": [],
                           "reference ids": {tier: len(ids) for tier, ids in reference.items()}}
    for n in range(trials):
        killed, got = kill_trial(file, root / f"trial-{n}", pg.database(f"trial_{n}"), users, rng, n % 2 == 1)
        diff = compare(reference, got)
        lost, dup = sum(d[0] for d in diff.values()), sum(d[1] for d in diff.values())
        out["trials"] += 1
        out["killed mid-import"] += int(killed)
        out["lost"] += lost
        out["duplicated"] += dup
        if lost or dup:
            out["bad trials"].append({"trial": n, **{t: d for t, d in diff.items() if any(d)}})
        advance()
    return out


KILLS = {"concurrent kill": "kill -9 of one of three concurrent CLI imports (the two others importing), re-run",
         "kill": "kill -9 of a lone CLI import, re-run"}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Server-mode fault trials ({report['turns']} turns, {report['users']} users, PostgreSQL + pgvector)",
             "", "`python -m bench.faults_server " + " ".join(report["argv"]) + "`", "",
             "| trial | runs | killed before the end | lost ids | duplicated ids | runs with a difference |",
             "|---|---|---|---|---|---|"]
    for name, title in KILLS.items():
        if name in report:
            k = report[name]
            lines.append(f"| {title} | {k['trials']} | {k['killed mid-import']} | {k['lost']} | {k['duplicated']} | "
                         f"{len(k['bad trials'])} |")
    if "trio" in report:
        t = report["trio"]
        lines.append(f"| three processes at once (langgraph dev, CLI, Python) | 1 | - | {t['lost']} | "
                     f"{t['duplicated']} | {int(not t['ok'])} |")
    if "maintain" in report:
        m = report["maintain"]
        lines.append(f"| two `maintain --now` at once | 1 | - | - | {m['days applied twice']} days applied twice | "
                     f"{int(not m['ok'])} |")
    if "concurrent kill" in report:
        k = report["concurrent kill"]
        lines += ["", f"Concurrent kills: {report['users']} users imported by one of the three importers each and "
                  "one shared user imported by all three; the killed importer taken in turn; killed while both others "
                  f"were still importing: {k['killed while both others imported']} of {k['trials']}."]
    for name in KILLS:
        if name in report:
            ids = report[name]["reference ids"]
            lines += ["", f"Reference ids per tier ({name}): " + ", ".join(f"{t} {n}" for t, n in ids.items())]
    lines.append("")
    for name in ("trio", "maintain"):
        if name in report:
            lines += [f"## {name}", "", "```json", json.dumps(report[name], indent=2, ensure_ascii=False), "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bench.faults import generate

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m bench.faults_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20,
                        help="kill -9 trials of one of three concurrent importers")
    parser.add_argument("--lone-trials", type=int, default=0, help="kill -9 trials of a lone importer")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--no-trio", action="store_true", help="skip the three-process run")
    parser.add_argument("--no-maintain", action="store_true", help="skip the two maintains")
    parser.add_argument("--json", default=None, help="write the figures here")
    parser.add_argument("--md", default=None, help="write a Markdown report here")
    args = parser.parse_args(argv)
    console = Console()
    report: dict[str, Any] = {"argv": argv, "turns": args.turns, "users": args.users}
    with tempfile.TemporaryDirectory(prefix="lumina-faults-server-") as tmp:
        root = Path(tmp)
        pg = Postgres(root / "pg")
        try:
            file = root / "import.jsonl"
            users = generate(file, args.users, args.turns, args.seed)
            progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=console)
            with progress:
                task = progress.add_task("references + kill -9 trials", total=args.trials + args.lone_trials
                                         + bool(args.trials) + bool(args.lone_trials))
                if args.trials:
                    from bench.faults_server_concurrent import concurrent_kill_trials, generate_shared

                    shared = root / "concurrent.jsonl"
                    everyone = generate_shared(shared, args.users, args.turns, args.seed)
                    report["concurrent kill"] = concurrent_kill_trials(shared, root, pg, everyone, args.trials,
                                                                       args.seed, lambda: progress.advance(task))
                if args.lone_trials:
                    report["kill"] = kill_trials(file, root, pg, users, args.lone_trials, args.seed,
                                                 lambda: progress.advance(task))
                if not args.no_trio:
                    from bench.faults_server_trio import three_processes

                    progress.update(task, description="three processes at once")
                    report["trio"] = three_processes(root / "trio", pg.database("trio"))
                if not args.no_maintain:
                    from bench.faults_server_maintain import two_maintains

                    progress.update(task, description="two maintains at once")
                    report["maintain"] = two_maintains(root / "maintain", pg, file, users)
        finally:
            pg.stop()
    text = markdown(report)
    console.print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    if args.md:
        Path(args.md).write_text(text)
    ok = all(report[n]["lost"] == 0 and report[n]["duplicated"] == 0 for n in KILLS if n in report) and all(
        report[n]["ok"] for n in ("trio", "maintain") if n in report)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
