"""Where one server-mode recall's time goes: statements, round trips and a cProfile of the recall.

    python -m bench.perf_server_profile [--users 2] [--memories 2000] [--queries 200] [--top 25]
                                        [--database-url postgresql://...]

A private PostgreSQL with pgvector starts in a temp dir (unless --database-url names one), bench.perf's memories
are filled into the server mode's database, the recall indexes are warmed, then the same precomputed queries run
one after another: the report gives the mean wall time per recall, the statements each recall sends (by their
first words, so a stamp read and a vector search are told apart) and the round trips (a pipelined batch counts
once), then cProfile's functions by cumulative time. The counting wraps psycopg's own ``execute`` and
``pipeline`` in this process only; the product is left as it is.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import psycopg


class StatementCounter:
    """Counts the statements psycopg sends and the round trips they take, from ``watch()`` on; a statement
    sent inside ``Connection.pipeline()`` shares the pipeline's one round trip."""

    def __init__(self) -> None:
        self.statements: Counter[str] = Counter()
        self.round_trips = 0
        self._pipelines = threading.local()
        self._lock = threading.Lock()

    @staticmethod
    def kind(sql: Any) -> str:
        text = sql.as_string(None) if hasattr(sql, "as_string") else str(sql)
        text = re.sub(r"\s+", " ", text).strip()
        table = re.search(r"\b(?:FROM|INTO|UPDATE)\s+([a-z_0-9]+)", text, re.IGNORECASE)
        return f"{' '.join(text.split(' ')[:2])[:30]} .. {table.group(1) if table else ''}".strip()

    def _sent(self, sql: Any) -> None:
        with self._lock:
            self.statements[self.kind(sql)] += 1
            if not getattr(self._pipelines, "depth", 0):
                self.round_trips += 1

    @contextmanager
    def watch(self) -> Iterator["StatementCounter"]:
        counter = self
        cursor_execute, pipeline = psycopg.Cursor.execute, psycopg.Connection.pipeline

        def execute(cur, query, params=None, **kwargs):
            counter._sent(query)
            return cursor_execute(cur, query, params, **kwargs)

        @contextmanager
        def piped(con):
            depth = getattr(counter._pipelines, "depth", 0)
            counter._pipelines.depth = depth + 1
            try:
                with pipeline(con) as p:
                    yield p
            finally:
                counter._pipelines.depth = depth
            if depth == 0:
                with counter._lock:
                    counter.round_trips += 1

        psycopg.Cursor.execute, psycopg.Connection.pipeline = execute, piped
        try:
            yield self
        finally:
            psycopg.Cursor.execute, psycopg.Connection.pipeline = cursor_execute, pipeline

    def reset(self) -> None:
        with self._lock:
            self.statements.clear()
            self.round_trips = 0


def server_cpu(uri: str):
    """A function giving the CPU seconds the PostgreSQL server's processes (the postmaster's children) have used,
    when the server runs on this machine and lets this role read its data directory's name; else None."""
    import psutil

    try:
        with psycopg.connect(uri, autocommit=True) as con:
            data_dir = con.execute("SHOW data_directory").fetchone()[0]
        postmaster = psutil.Process(int((Path(data_dir) / "postmaster.pid").read_text().split()[0]))
    except (psycopg.Error, OSError, ValueError, psutil.Error):
        return None

    def used() -> float:
        total = 0.0
        for proc in postmaster.children():
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                continue
        return total

    return used


def profile_recalls(services, queries: Sequence[tuple[str, int]], qtexts, qvecs, top: int,
                    cpu_of_server=None) -> dict[str, Any]:
    """Each query recalled once, counted and profiled; per-recall means: wall time, this process's CPU time and
    (``cpu_of_server``: see ``server_cpu``) the server's, which the machine's load does not inflate as it does
    wall time."""
    from lumina_memory.nodes.retrieval.recall import recall

    def one(user_id: str, k: int) -> None:
        recall(services, user_id, qtexts[k], purpose="question", budget=1024, query_vector=qvecs[k])

    for user_id, k in queries[:5]:
        one(user_id, k)  # first connections, caches as a warm server has them
    counter = StatementCounter()
    profiler = cProfile.Profile()
    with counter.watch():
        server_before = cpu_of_server() if cpu_of_server else 0.0
        started, cpu_started = time.perf_counter(), time.process_time()
        for user_id, k in queries:
            one(user_id, k)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        server = (cpu_of_server() - server_before) if cpu_of_server else float("nan")
        counted = dict(counter.statements)
        round_trips = counter.round_trips
        profiler.enable()
        for user_id, k in queries:
            one(user_id, k)
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    n = len(queries)
    return {"recalls": n, "ms_per_recall": round(wall * 1000 / n, 2), "client_cpu_ms_per_recall": round(cpu * 1000 / n, 2),
            "server_cpu_ms_per_recall": round(server * 1000 / n, 2), "round_trips_per_recall": round(round_trips / n, 2),
            "statements_per_recall": {k: round(v / n, 2) for k, v in sorted(counted.items(), key=lambda kv: -kv[1])},
            "profile": out.getvalue()}


def windows(services, queries, qtexts, qvecs, concurrency: str, seconds: float,
            cpu_of_server=None) -> dict[int, dict[str, float]]:
    """Recall under ``concurrency`` threads for ``seconds`` each (bench.perf_server's window): p50, p95, q/s and
    the CPU milliseconds per recall of this process and of the server."""
    from bench.common import percentiles
    from bench.perf_server_worker import _our_recall, timed_window

    call = _our_recall(services, qtexts, qvecs)
    out = {}
    for c in [int(x) for x in concurrency.split(",") if x]:
        server_before, cpu_started = cpu_of_server() if cpu_of_server else 0.0, time.process_time()
        latencies, wall = timed_window(call, queries, c, seconds, seed=c)
        cpu = time.process_time() - cpu_started
        server = (cpu_of_server() - server_before) if cpu_of_server else float("nan")
        out[c] = {**percentiles(latencies, (50, 95)), "qps": round(len(latencies) / wall, 1),
                  "client_cpu_ms": round(cpu * 1000 / len(latencies), 2),
                  "server_cpu_ms": round(server * 1000 / len(latencies), 2)}
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from bench.perf import Pool, fill_user, sentence
    from bench.perf_server import _queries, analyze
    from bench.perf_server_worker import Spec, settings_for
    from lumina_memory.nodes.retrieval.warm import warm_indexes
    from lumina_memory.nodes.services import open_services
    from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder
    from lumina_memory.stores.postgres_server import start_private_postgres
    from lumina_memory.stores.redis_server import stop_server

    parser = argparse.ArgumentParser(prog="python -m bench.perf_server_profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=2)
    parser.add_argument("--memories", type=int, default=2000, help="memories per user")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--pool", type=int, default=500, help="distinct sentences embedded for the vector pool")
    parser.add_argument("--top", type=int, default=25, help="functions of the profile shown")
    parser.add_argument("--concurrency", default="", help="also time windows of these thread counts (e.g. 1,8)")
    parser.add_argument("--seconds", type=float, default=5.0, help="each concurrency window")
    parser.add_argument("--database-url", default="")
    parser.add_argument("--filled", action="store_true",
                        help="--database-url already holds the users' memories (user-0000, ...): do not fill")
    args = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="lumina-perf-profile-"))
    pg = None
    spec = None
    try:
        embedder = CachedEmbedder(Usem3Embedder(threads=2), 0)
        pool = Pool(embedder, args.pool)
        qrng = __import__("random").Random(99)
        qtexts = [("" if i % 2 else "What ") + sentence(qrng, i % 2 == 1) for i in range(50)]
        qvecs = np.asarray(embedder.embed(qtexts), dtype=np.float32)
        if args.database_url:
            uri = args.database_url
        else:
            pg = start_private_postgres(root / "postgres")
            uri = pg.create_database("perf_profile")
        users = [(f"user-{u:04d}", u) for u in range(args.users)]
        spec = Spec(kind="server", job="recall", index=0, data_dir=str(root / "server"), database_url=uri,
                    secret_key="0" * 64)
        services = open_services(settings_for(spec))
        try:
            for user_id, seed in users if not args.filled else ():
                fill_user(services, pool, user_id, args.memories, seed)
            analyze(uri)
            for user_id, _ in users:
                warm_indexes(services, user_id)
            queries = _queries(len(qtexts), users, args.queries, 1)
            result = profile_recalls(services, queries, qtexts, qvecs, args.top, server_cpu(uri))
            result["windows"] = windows(services, queries, qtexts, qvecs, args.concurrency, args.seconds,
                                        server_cpu(uri))
        finally:
            services.close()
        print(f"{result['recalls']} recalls: {result['ms_per_recall']} ms each (CPU: this process "
              f"{result['client_cpu_ms_per_recall']} ms, the server {result['server_cpu_ms_per_recall']} ms), "
              f"{result['round_trips_per_recall']} round trips each")
        for kind, count in result["statements_per_recall"].items():
            print(f"  {count:6.2f}  {kind}")
        print(result["profile"])
        for c, row in result["windows"].items():
            print(f"concurrency {c}: p50 {row['p50']} ms, p95 {row['p95']} ms, {row['qps']} q/s; CPU per recall: "
                  f"this process {row['client_cpu_ms']} ms, the server {row['server_cpu_ms']} ms")
        return result
    finally:
        if spec is not None:
            stop_server(settings_for(spec))
        if pg is not None:
            pg.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
