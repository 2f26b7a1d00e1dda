"""kill -9 of one of three concurrent server-mode importers (issue 47's trials), then a re-run of the killed one.

One generated transcript of ``users`` users plus one shared user is cut into three files: importer i gets the
turns of its own users (every third user) and the whole shared transcript, so at every moment three processes
(``lumina-memory -v ingest``) write different users and the same shared user into one PostgreSQL and one Redis.
Per trial, on a fresh database: the three start together; one of them, chosen in turn, is SIGKILLed at a random
moment of its import (after its n-th archive commit, or at a random node line of its log) while the two others
go on; the killed one is started again at once and run to the end, the others finish. Then every tier (archive
turns and segments, mid-term, pgvector points of segments and turns, graph nodes and edges) is compared id by id
with a single process's import of the whole transcript (bench.faults.compare): "lost" are ids the reference has
and the trial not, "duplicated" ids the trial has and the reference not. Ids carry their user, so a turn,
segment, point or graph node filed under another user shows up as lost for one and duplicated for the other.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.faults import compare

IMPORTERS = 3
SHARED = "shared"


def split(file: Path, root: Path) -> tuple[list[Path], list[str]]:
    """The importers' files (each: its own users' turns and every shared turn, in the transcript's order) and every
    user id. ``file`` is bench.faults.generate's output with its last user renamed ``shared``."""
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    users = list(dict.fromkeys(r["user_id"] for r in rows))
    if len(users) < IMPORTERS + 1:
        raise ValueError(f"need at least {IMPORTERS + 1} users (one shared), got {len(users)}")
    own = {u: i % IMPORTERS for i, u in enumerate(u for u in users if u != SHARED)}
    files = []
    root.mkdir(parents=True, exist_ok=True)
    for i in range(IMPORTERS):
        path = root / f"importer-{i}.jsonl"
        mine = [r for r in rows if r["user_id"] == SHARED or own[r["user_id"]] == i]
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in mine), encoding="utf-8")
        files.append(path)
    return files, users


def generate_shared(file: Path, users: int, turns: int, seed: int) -> list[str]:
    """bench.faults.generate with ``users`` + 1 users, the last one renamed ``shared`` (ids and source ids)."""
    from bench.faults import generate

    names = generate(file, users + 1, turns, seed)
    last = names[-1]
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if row["user_id"] == last:
            row["user_id"], row["source_id"] = SHARED, row["source_id"].replace(last, SHARED, 1)
    file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return [*names[:-1], SHARED]


def kill_bounds(log: list[str], users: int) -> dict[str, int]:
    """bench.faults_server.kill_when's bounds for one importer, from the single-process reference's ``log``: its
    archive commits and node lines per user. An importer logs at least that much for the user only it imports
    (the shared user's turns may all be written by the others first), so the kill lands before its end."""
    archives = sum("node=archive_to_duckdb" in line for line in log)
    nodes = sum("node=" in line for line in log)
    return {"archives": max(1, archives // users), "nodes": max(1, nodes // users)}


@dataclass
class Importer:
    """One importer's thread: its file, when to kill it (None: never), whether its first run was killed before its
    end, and what failed."""

    file: Path
    kill_when: Any = None
    killed: bool = False
    failure: str = ""
    done: threading.Event = field(default_factory=threading.Event)


def _run(importer: Importer, data_dir: Path, uri: str, others: list[Importer], seen: dict[str, Any]) -> None:
    from bench.faults_server import import_once

    def when(line: str, archived: int) -> bool:
        hit = importer.kill_when(line, archived)
        if hit:  # at the kill: are the two others still importing?
            seen["others importing at the kill"] = sum(not o.done.is_set() for o in others)
        return hit

    try:
        first = import_once(importer.file, data_dir, uri, **({"kill_when": when} if importer.kill_when else {}))
        importer.killed = first.killed and first.returncode != 0
        if first.returncode != 0 and not importer.killed:  # only the killed one may fail, and is run again
            importer.failure = "\n".join(first.lines[-20:])
        elif importer.killed:
            again = import_once(importer.file, data_dir, uri)
            if again.returncode != 0:
                importer.failure = "\n".join(again.lines[-20:])
    except Exception as exc:  # noqa: BLE001 - reported by the trial, which raises it
        importer.failure = repr(exc)
    finally:
        importer.done.set()


def concurrent_kill_trial(files: list[Path], data_dir: Path, uri: str, users: list[str], victim: int,
                          kill_when) -> dict[str, Any]:
    """Three importers at once on ``uri``, ``victim`` SIGKILLed when ``kill_when`` says so and re-run; then the
    tiers as a fresh process sees them. Raises if any importer's last run failed."""
    from bench.faults_server import fingerprint, stop_redis

    importers = [Importer(f, kill_when if i == victim else None) for i, f in enumerate(files)]
    seen: dict[str, Any] = {"others importing at the kill": 0}
    threads = [threading.Thread(target=_run, args=(imp, data_dir, uri, [o for o in importers if o is not imp], seen),
                                daemon=True) for imp in importers]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        failed = [f"importer {i}: {imp.failure}" for i, imp in enumerate(importers) if imp.failure]
        if failed:
            raise RuntimeError("an import failed:\n" + "\n".join(failed))
        return {"killed": importers[victim].killed, "tiers": fingerprint(data_dir, uri, users),
                "others importing at the kill": seen["others importing at the kill"]}
    finally:
        stop_redis(data_dir)


def concurrent_kill_trials(file: Path, root: Path, pg, users: list[str], trials: int, seed: int,
                           advance=lambda: None) -> dict[str, Any]:
    """The single-process reference of ``file`` (generate_shared's), then ``trials`` trials, each killing importer
    n % 3, alternately after an archive commit and at a random node line."""
    from bench.faults_server import kill_when, reference_run

    rng = random.Random(seed)
    files, in_file = split(file, root / "files")
    if set(in_file) != set(users):
        raise ValueError(f"{file} holds users {in_file}, not {users}")
    log: list[str] = []
    reference = reference_run(file, root, pg, users, name="concurrent_reference", log=log)
    bounds = kill_bounds(log, len(users))
    advance()
    out: dict[str, Any] = {"kill bounds": bounds, "trials": 0, "killed mid-import": 0,
                           "killed while both others imported": 0, "lost": 0, "duplicated": 0, "bad trials": [],
                           "reference ids": {tier: len(ids) for tier, ids in reference.items()}}
    for n in range(trials):
        victim = n % IMPORTERS
        trial = concurrent_kill_trial(files, root / f"concurrent-{n}", pg.database(f"concurrent_{n}"), users,
                                      victim, kill_when(rng, n % 2 == 1, **bounds))
        diff = compare(reference, trial["tiers"])
        lost, dup = sum(d[0] for d in diff.values()), sum(d[1] for d in diff.values())
        out["trials"] += 1
        out["killed mid-import"] += int(trial["killed"])
        out["killed while both others imported"] += int(trial["killed"] and
                                                        trial["others importing at the kill"] == IMPORTERS - 1)
        out["lost"] += lost
        out["duplicated"] += dup
        if lost or dup:
            out["bad trials"].append({"trial": n, "killed importer": n % IMPORTERS,
                                      **{t: d for t, d in diff.items() if any(d)}})
        advance()
    return out
