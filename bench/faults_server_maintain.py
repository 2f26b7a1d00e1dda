"""Two ``lumina-memory maintain`` at once on one server-mode memory (issue 47): each batch day applied once.

One import goes into two databases. The reference runs ``maintain --now D`` (every user's first batch day) and
then ``maintain --now D+4 days`` (four days of catch-up), one process each time; the trial runs two processes at
once at each of the two times. Then the lifecycle tables are read by SQL in both databases and compared row by
row: the days each user completed (lifecycle_days), every memory's lifecycle columns (level, retention, decay,
memory days, idle days, archived day, recall count), forgotten memories and typed relations. A day applied twice
decays twice and shows up in the columns; the user-days both processes report add up to the reference's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.faults import REPO, cli_env

DAY = 86_400.0
CATCH_UP_DAYS = 4
WAIT_SECONDS = 900.0
GATE_SECONDS = 3.0  # held past both maintains' start-up; far below the LEASE_WAIT (60 s) they wait for a lease
TABLES = {
    "lifecycle_days": "SELECT user_id, last_day FROM lifecycle_days",
    "memories": "SELECT memory_id, user_id, level, round(retention::numeric, 9), round(decay::numeric, 9), "
                "round(memory_days::numeric, 9), round(idle_days::numeric, 9), archived_on, recall_count, "
                "unbatched FROM memories",
    "memory_forgotten": "SELECT user_id, memory_id, day FROM memory_forgotten",
    "memory_relations": "SELECT user_id, src, dst, kind, created_day FROM memory_relations",
}


def lifecycle_rows(uri: str) -> dict[str, set[tuple]]:
    import psycopg

    with psycopg.connect(uri) as con:
        return {name: {tuple(str(v) for v in row) for row in con.execute(sql).fetchall()}
                for name, sql in TABLES.items()}


def hold_the_gate(uri: str, processes: int) -> int:
    """Hold the daily batch's lease (stores.leases, as a third worker would) until ``processes`` maintains have
    opened their leases' sessions and GATE_SECONDS more, so that both are waiting for it when it is let go and
    contend for the same days instead of one finishing before the other starts. Returns the maintains' leases
    sessions seen while it was held."""
    import psycopg

    from lumina_memory.stores.leases import PostgresLeases

    leases = PostgresLeases(uri)
    try:
        with leases.hold("lifecycle") as got, psycopg.connect(uri, autocommit=True) as con:
            if not got:
                raise RuntimeError("the lifecycle lease was taken before the maintains started")
            deadline, sessions = time.monotonic() + GATE_SECONDS * 10, 0
            while sessions < processes and time.monotonic() < deadline:
                time.sleep(0.2)
                (others,) = con.execute("SELECT count(*) - 1 FROM pg_stat_activity "  # - 1: this process's own
                                        "WHERE application_name = 'lumina-leases' AND datname = current_database()"
                                        ).fetchone()
                sessions = max(sessions, int(others))
            time.sleep(GATE_SECONDS)
            return sessions
    finally:
        leases.close()


def maintain(data_dir: Path, uri: str, now: float, processes: int) -> tuple[list[dict[str, Any]], int]:
    """``processes`` × ``lumina-memory maintain --now NOW --json`` started together: their reports and how many
    were seen waiting at the daily batch's lease (with more than one, ``hold_the_gate`` lets them go together)."""
    from bench.faults_server import server_env

    stamp = datetime.fromtimestamp(now, UTC).isoformat()
    cmd = [sys.executable, "-m", "lumina_memory.graphs.cli", "maintain", "--now", stamp, "--json"]
    procs = [subprocess.Popen(cmd, cwd=REPO, env=cli_env(data_dir, **server_env(uri)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    try:
        gated = hold_the_gate(uri, processes) if processes > 1 else 0
        reports = []
        for proc in procs:
            out, err = proc.communicate(timeout=WAIT_SECONDS)
            if proc.returncode != 0:
                raise RuntimeError(f"lumina-memory maintain failed:\n{err[-2000:]}")
            reports.append(json.loads(out[out.index("{"):]))
        return reports, gated
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)


def user_days(report: dict[str, Any]) -> int:
    """User-days this process's batch applied (0 when another process held the batch's lease)."""
    days = report.get("lifecycle_days", {})
    return 0 if days.get("skipped") else int(days.get("user_days", 0))


def last_ts(file: Path) -> float:
    return max(json.loads(line)["ts"] for line in file.read_text(encoding="utf-8").splitlines() if line.strip())


def two_maintains(root: Path, pg, file: Path, users: list[str]) -> dict[str, Any]:
    """The reference (one process at a time) against two at once; every server it starts is stopped."""
    from bench.faults_server import import_once, stop_redis

    first = last_ts(file) + DAY
    out: dict[str, Any] = {"user-days": {}, "skipped by a lease": 0}
    rows = {}
    for name, processes in (("reference", 1), ("two at once", 2)):
        data_dir, uri = root / name.replace(" ", "-"), pg.database(f"maintain_{processes}")
        try:
            done = import_once(file, data_dir, uri)
            if done.returncode != 0:
                raise RuntimeError("import failed:\n" + "\n".join(done.lines[-20:]))
            reports, gated = maintain(data_dir, uri, first, processes)
            before = lifecycle_rows(uri)["memories"]
            later, gated_later = maintain(data_dir, uri, first + CATCH_UP_DAYS * DAY, processes)
            reports += later
        finally:
            stop_redis(data_dir)
        out["user-days"][name] = sum(user_days(r) for r in reports)
        out[f"per process ({name})"] = [user_days(r) for r in reports]
        if processes > 1:
            out["maintains seen waiting at the lease"] = [gated, gated_later]
            out["skipped by a lease"] = sum(bool(r.get("lifecycle_days", {}).get("skipped")) for r in reports)
        rows[name] = lifecycle_rows(uri)
        # The catch-up must move the columns, or a day applied twice would not show in them.
        out[f"memories the catch-up changed ({name})"] = len(rows[name]["memories"] - before)
    ref, got = rows["reference"], rows["two at once"]
    out["rows"] = {t: len(ref[t]) for t in TABLES}
    out["differing rows"] = {t: len(ref[t] ^ got[t]) for t in TABLES}
    out["days applied twice"] = max(0, out["user-days"]["two at once"] - out["user-days"]["reference"])
    expected = len(users) * (1 + CATCH_UP_DAYS)
    out["ok"] = (out["user-days"]["reference"] == out["user-days"]["two at once"] == expected
                 and not any(out["differing rows"].values())
                 and out["memories the catch-up changed (reference)"] > 0
                 and out["maintains seen waiting at the lease"] == [2, 2])
    return out
