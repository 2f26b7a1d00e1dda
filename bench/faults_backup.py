"""Fault trials for backup and restore: kill -9 `lumina-memory backup --to <folder>` and `lumina-memory restore
--from <folder>` at a random moment after their first write (the staged ``.partial-*`` folder, the
``restore-in-progress.json`` mark), run them again, and check (issue 44):

- backup: no partial left after the next backup, the new snapshot verifies against its manifest and counts
  what a clean backup counts, and the source data dir is intact (every tier's ids, bench.faults.tier_ids);
- restore: the killed restore's target is marked half-restored (when the kill landed mid-restore), the
  second restore finishes it instead of refusing, and the target holds exactly the source's ids.

    python -m bench.faults_backup --trials 20
    python -m bench.faults_backup --production --trials 20

``--production``: the same on the production adapters (bench.faults_erase_production.Engines: an external
redis-server, the Neo4j adapter on FalkorDB's Bolt endpoint, qdrant-client local mode in the data dir). Backups
read the servers in their imported state; every restore goes into the configured servers reset to empty (and an
empty data dir), and its ids are read back from those servers.

The tests run a couple of the same trials (tests/test_restore_resume.py, tests/test_backup_kill_production.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from lumina_memory.stores.backup import RESTORE_MARK
from lumina_memory.stores.backup_location import PARTIAL

from .faults import REPO, cli_env, compare, fingerprint, generate, ingest, stop_private_redis, tier_ids


def run_cli(args: list[str], data_dir: Path, *, started_when: Callable[[], bool] | None = None,
            kill_after: float | None = None, timeout: float = 600.0, engines=None,
            ended_when: Callable[[], bool] | None = None) -> dict[str, Any]:
    """``lumina-memory ARGS`` in a subprocess. ``started_when``: polled until true (the command's first write
    is on disk; most of a run is otherwise the interpreter starting); ``kill_after``: seconds after that to
    SIGKILL it (None: never); ``engines``: on those production adapters; ``ended_when``: polled after the
    start until true (the command's last write is done; "ended": when it was seen). Returns its outcome, its
    duration and when the trigger was seen ("at")."""
    cmd = engines.cli() if engines is not None else [sys.executable, "-m", "lumina_memory.graphs.cli"]
    env = engines.env(data_dir) if engines is not None else cli_env(data_dir)
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([*cmd, *args], cwd=REPO, env=env, stdout=out, stderr=err, text=True)
        killed, at = False, None
        try:
            while proc.poll() is None and at is None and started_when is not None:
                if started_when():
                    at = time.monotonic() - started
                else:
                    time.sleep(0.01)
            ended = None
            while ended_when is not None and at is not None and ended is None and proc.poll() is None:
                if ended_when():
                    ended = time.monotonic() - started
                else:
                    time.sleep(0.01)
            if kill_after is not None and at is not None:
                try:
                    proc.wait(timeout=kill_after)
                except subprocess.TimeoutExpired:
                    os.kill(proc.pid, signal.SIGKILL)
                    killed = True
            proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        err.seek(0)
        return {"returncode": proc.returncode, "killed": killed, "stdout": out.read(), "stderr": err.read(),
                "seconds": time.monotonic() - started, "at": at, "kill_after": kill_after,
                "ended": ended}


def _partial_in(where: Path) -> Callable[[], bool]:
    return lambda: where.is_dir() and any(where.glob(f"{PARTIAL}*"))


def _mark_in(data_dir: Path) -> Callable[[], bool]:
    return lambda: (data_dir / RESTORE_MARK).exists()


def ids(data_dir: Path, users: list[str], engines=None) -> dict[str, set]:
    """Every tier's ids of ``users``: in the data dir (bench.faults.fingerprint) or, with ``engines``, in the
    data dir and the servers it is configured for."""
    if engines is None:
        return fingerprint(data_dir, users)
    from lumina_memory.nodes.services import open_services

    services = open_services(engines.settings(data_dir))
    try:
        return tier_ids(services, users)
    finally:
        services.close()


def prepare(root: Path, users: int, turns: int, seed: int, engines=None) -> dict[str, Any]:
    """A source data dir (imported through the CLI), its ids, and a clean backup's manifest and duration.
    With ``engines``: the import goes to their servers, saved as the base "source" (and their empty state
    as "empty", which every restore starts from)."""
    file = root / "import.jsonl"
    names = generate(file, users, turns, seed)
    source = root / "source"
    if engines is not None:
        engines.save_base("empty")
    try:
        run = ingest(file, source) if engines is None else run_cli(["-v", "ingest", str(file)], source,
                                                                   timeout=3600, engines=engines)
        code = run.returncode if engines is None else run["returncode"]
        if code != 0:
            raise RuntimeError("import failed:\n" + ("\n".join(run.lines[-20:]) if engines is None
                                                     else run["stderr"][-2000:]))
    finally:
        stop_private_redis(source)
    reference = ids(source, names, engines)
    if engines is not None:
        engines.save_base("source")
    clean = run_cli(["backup", "--to", str(root / "reference-backups"), "--json"], source,
                    started_when=_partial_in(root / "reference-backups"), engines=engines)
    stop_private_redis(source)
    if clean["returncode"] != 0:
        raise RuntimeError("clean backup failed:\n" + clean["stderr"][-2000:])
    if engines is not None:
        engines.reset("empty")
    restore = run_cli(["restore", "--from", str(root / "reference-backups"), "--json"], root / "restore-timing",
                      started_when=_mark_in(root / "restore-timing"), engines=engines,
                      ended_when=lambda: not _mark_in(root / "restore-timing")())
    stop_private_redis(root / "restore-timing")
    if restore["returncode"] != 0:
        raise RuntimeError("clean restore failed:\n" + (restore["stderr"] + restore["stdout"])[-3000:])
    return {"users": names, "source": source, "reference": reference, "manifest": json.loads(clean["stdout"]),
            "backup_seconds": clean["seconds"] - (clean["at"] or 0.0),
            # While the mark is there (what a kill can interrupt), not the interpreter's exit after it.
            "restore_seconds": (restore["ended"] or restore["seconds"]) - (restore["at"] or 0.0),
            "backups": root / "reference-backups", "engines": engines}


# Places that record the operations themselves (each backup run adds its rows): not compared.
OPERATION_LOGS = ("activity_log", "archive.session_log")


def _counts(manifest: dict) -> dict[str, int]:
    return {name: entry["count"] for name, entry in manifest["places"].items()}


def backup_trial(ctx: dict[str, Any], where: Path, rng: random.Random) -> dict[str, Any]:
    """Kill a backup at a random moment, back up again; what was left and what the next backup holds."""
    from lumina_memory.stores.backup import manifests, verify
    from lumina_memory.stores.backup_location import LocalLocation

    location = LocalLocation(where)
    before = set(location.snapshots())
    first = run_cli(["backup", "--to", str(where)], ctx["source"], started_when=_partial_in(where),
                    kill_after=rng.uniform(0.0, 1.1) * ctx["backup_seconds"], engines=ctx["engines"])
    partial_after_kill = bool(location.partials())
    second = run_cli(["backup", "--to", str(where), "--json"], ctx["source"], engines=ctx["engines"])
    stop_private_redis(ctx["source"])
    problems: list[str] = []
    if second["returncode"] != 0:
        problems.append("re-run failed: " + second["stderr"][-500:])
        return {"killed": first["killed"], "partial_after_kill": partial_after_kill, "problems": problems}
    manifest = json.loads(second["stdout"])
    if location.partials():
        problems.append(f"partials left: {location.partials()}")
    with location.fetch(manifest["id"]) as folder:
        problems += verify(folder, manifest)
    got, want = _counts(manifest), _counts(ctx["manifest"])
    differ = {n: (got.get(n), want.get(n)) for n in set(got) | set(want)
              if n not in OPERATION_LOGS and got.get(n) != want.get(n)}
    if differ:
        problems.append(f"counts differ (this backup, the clean one): {differ}")
    listed = {m["id"] for m in manifests(location)}
    if not (set(location.snapshots()) - before) <= listed:
        problems.append("a snapshot without its manifest is listed")
    return {"killed": first["killed"] and first["returncode"] != 0, "partial_after_kill": partial_after_kill,
            "problems": problems}


def restore_trial(ctx: dict[str, Any], target: Path, rng: random.Random) -> dict[str, Any]:
    """Kill a restore at a random moment after its first write, restore again (when the kill left it
    half-restored); whether it was marked, resumed, and exact."""
    from lumina_memory.stores.backup import restore_mark

    problems: list[str] = []
    engines = ctx["engines"]
    if engines is not None:
        engines.reset("empty")
    try:
        first = run_cli(["restore", "--from", str(ctx["backups"])], target, started_when=_mark_in(target),
                        kill_after=rng.uniform(0.0, 1.1) * ctx["restore_seconds"], engines=engines)
        killed = first["killed"] and first["returncode"] != 0
        # The mark is written before the first write and removed when the restore is complete: a kill that
        # finds it gone landed while the process was exiting, and the data is whole.
        marked = restore_mark(target) is not None
        if killed and marked:
            second = run_cli(["restore", "--from", str(ctx["backups"]), "--json"], target, engines=engines)
            if second["returncode"] != 0:
                problems.append(f"second restore failed (exit {second['returncode']}): "
                                + (second["stderr"] + second["stdout"])[-1500:])
        elif not killed and first["returncode"] != 0:
            problems.append(f"restore failed without a kill (exit {first['returncode']}, kill due "
                            f"{first['at']}+{first.get('kill_after')} s, ran {first['seconds']:.2f} s): "
                            + (first["stderr"] + first["stdout"])[-1500:])
        if restore_mark(target) is not None:
            problems.append("the restore-in-progress mark was left")
        stop_private_redis(target)
        diff = compare(ctx["reference"], ids(target, ctx["users"], engines))
        lost, dup = sum(d[0] for d in diff.values()), sum(d[1] for d in diff.values())
        if lost or dup:
            problems.append(f"ids differ (lost, duplicated) per tier: {diff}")
        return {"killed": killed, "marked": marked, "lost": lost, "duplicated": dup, "problems": problems}
    finally:
        stop_private_redis(target)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.table import Table

    parser = argparse.ArgumentParser(prog="python -m bench.faults_backup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="kill -9 trials of each command")
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--json", default=None, help="write the figures here")
    parser.add_argument("--production", action="store_true",
                        help="on the production adapters (external Redis, Neo4j adapter on FalkorDB, qdrant-client)")
    args = parser.parse_args(argv)
    console = Console(width=150)  # the figures table stays readable when written to a file
    rng = random.Random(args.seed)
    figures: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="lumina-faults-backup-") as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        engines = None
        if args.production:
            from .faults_erase_production import Engines

            engines = stack.enter_context(Engines(root / "engines"))  # stopped on every exit path
        ctx = prepare(root, args.users, args.turns, args.seed, engines)
        if engines is not None:
            engines.reset("source")
        console.print(f"clean runs, from the first write: backup to its exit {ctx['backup_seconds']:.1f} s, "
                      f"restore to its mark's removal {ctx['restore_seconds']:.1f} s "
                      "(kills land at a uniform moment in 0-110% of that)")
        row = figures.setdefault("kill -9 backup", {"trials": 0, "killed mid-run": 0, "partial left by the kill": 0,
                                                    "bad trials": 0})
        for n in range(args.trials):
            got = backup_trial(ctx, root / "backups", rng)
            row["trials"] += 1
            row["killed mid-run"] += int(got["killed"])
            row["partial left by the kill"] += int(got["partial_after_kill"])
            row["bad trials"] += int(bool(got["problems"]))
            for p in got["problems"]:
                console.print(f"[red]backup trial {n}: {p}[/]")
        source_diff = compare(ctx["reference"], ids(ctx["source"], ctx["users"], ctx["engines"]))
        row["source ids lost or changed"] = sum(a + b for a, b in source_diff.values())
        stop_private_redis(ctx["source"])
        row = figures.setdefault("kill -9 restore", {"trials": 0, "killed mid-run": 0, "marked half-restored": 0,
                                                     "lost ids": 0, "duplicated ids": 0, "bad trials": 0})
        for n in range(args.trials):
            target = root / f"restore-{n}"
            got = restore_trial(ctx, target, rng)
            shutil.rmtree(target, ignore_errors=True)
            row["trials"] += 1
            row["killed mid-run"] += int(got["killed"])
            row["marked half-restored"] += int(got["marked"])
            row["lost ids"] += got["lost"]
            row["duplicated ids"] += got["duplicated"]
            row["bad trials"] += int(bool(got["problems"]))
            for p in got["problems"]:
                console.print(f"[red]restore trial {n}: {p}[/]")
    table = Table(title=f"kill -9 trials of backup and restore ({args.turns} turns, {args.users} users"
                        + (", production adapters)" if args.production else ")"))
    columns = sorted({c for r in figures.values() for c in r})
    table.add_column("trial")
    for column in columns:
        table.add_column(column)
    for name, r in figures.items():
        table.add_row(name, *(str(r.get(c, "-")) for c in columns))
    console.print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0 if all(r["bad trials"] == 0 for r in figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
