"""Scaling the agents' memory over processes in server mode (P8): N worker processes, one PostgreSQL.

For each process count (``--processes 1 2 4``) the agents are split among that many worker processes (spawned:
each opens its own Services and AgentMemory on the shared PostgreSQL, with a data dir of its own for its private
Redis), which start together and run the simulation of bench.agents_sim on their share: every tick each of its
agents stores one event (one ``store_many``), ``--queries-per-tick`` sampled agents retrieve with their module's
layers (timed), the consolidation pool runs beside them; then each forces a final consolidation of its agents.
Then, all at once again, each issues ``--qps-queries`` LTM retrievals from one thread: the rate is every
process's queries over the phase's wall time (the slowest process's), with p50/p95 over all of them. Rows per
process say what each did. The machine's load average is recorded at the start and the end of each count.

With no ``--database-url`` a private PostgreSQL (pgserver) is started and every process count gets a database of
its own; with one, the counts share it and their agents are told apart by a prefix (``p2_agent_0001``).

    python -m bench.agents_scaling --agents 100 --hours 0.1 --processes 1 2 [--json bench/results/agents_scaling_100.json]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import secrets
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from bench.agents_open import opened_memory
from bench.agents_sim import QUERIES, _text, tick_events, write_report
from bench.common import bench_settings, percentiles
from bench.sigterm import exit_on_sigterm

START_CLOCK = 1_800_000_000.0
BARRIER_TIMEOUT = 1800.0  # only stops a hang: a worker that died leaves the others waiting here
JOIN_TIMEOUT = 7200.0
STOP_TIMEOUT = 120.0  # a worker's close: its pool's running job, its Services, its Redis's SHUTDOWN SAVE


def split(ids: list[str], processes: int) -> list[list[str]]:
    """``ids`` dealt round-robin to ``processes`` shares (their sizes differ by at most one)."""
    return [ids[i::processes] for i in range(processes)]


def worker(spec: dict[str, Any], barrier, results) -> None:
    """One process's share of the run (see the module); its report, or its error, goes to ``results``."""
    try:
        results.put(_work(spec, barrier))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run with it
        barrier.abort()
        results.put({"index": spec["index"], "error": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc()[-3000:]})


def _work(spec: dict[str, Any], barrier) -> dict[str, Any]:
    ids, rnd = spec["agents"], random.Random(spec["seed"] * 1000 + spec["index"])
    clock = {"now": START_CLOCK}
    settings = bench_settings(Path(spec["data_dir"]), database_url=spec["database_url"],
                              secret_key=spec["secret_key"], agents={"run_hours": spec["hours"]})
    with opened_memory(settings, lambda: clock["now"]) as (_, memory):
        ticks = max(1, int(spec["hours"] * 3600 / spec["event_seconds"]))
        lat: list[float] = []
        store_s, stored = 0.0, 0
        barrier.wait(BARRIER_TIMEOUT)
        started = time.perf_counter()
        for _ in range(ticks):
            clock["now"] += spec["event_seconds"]
            batch = tick_events(rnd, ids, clock["now"])
            t0 = time.perf_counter()
            memory.store_many(batch)
            store_s += time.perf_counter() - t0
            stored += len(batch)
            for _ in range(spec["queries_per_tick"]):
                module, pattern = rnd.choice(QUERIES)
                t0 = time.perf_counter()
                memory.retrieve(rnd.choice(ids), _text(rnd, pattern), module)
                lat.append((time.perf_counter() - t0) * 1000)
        sim_wall = time.perf_counter() - started
        memory.pool.wait_idle()
        records = sum(memory.consolidate(a, force=True) for a in ids)
        barrier.wait(BARRIER_TIMEOUT)
        ltm: list[float] = []
        t_ltm = time.perf_counter()
        for _ in range(spec["qps_queries"]):
            a, q = rnd.choice(ids), _text(rnd, rnd.choice(QUERIES)[1])
            t0 = time.perf_counter()
            memory.retrieve(a, q, "default", layers=["ltm"])
            ltm.append((time.perf_counter() - t0) * 1000)
        ltm_wall = time.perf_counter() - t_ltm
        failed = len(memory.pool.failed)
    return {"index": spec["index"], "pid": os.getpid(), "agents": len(ids), "ticks": ticks, "events": stored,
            "store_seconds": store_s, "store_events_per_s": stored / max(store_s, 1e-9), "sim_wall_s": sim_wall,
            "queries": len(lat), "latencies_ms": lat, "final_records": records, "pool_failed": failed,
            "ltm_queries": len(ltm), "ltm_latencies_ms": ltm, "ltm_wall_s": ltm_wall,
            "ltm_qps": len(ltm) / max(ltm_wall, 1e-9)}


def run_count(processes: int, ids: list[str], args: argparse.Namespace, database_url: str, secret: str,
              root: Path, log=print) -> dict[str, Any]:
    """One process count: the workers started together, their rows, and the totals."""
    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: no engine handle inherited from this one
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    load_start = os.getloadavg()
    specs = [{"index": i, "agents": share, "hours": args.hours, "event_seconds": args.event_seconds,
              "queries_per_tick": args.queries_per_tick, "qps_queries": args.qps_queries, "seed": args.seed,
              "database_url": database_url, "secret_key": secret, "data_dir": str(root / f"p{processes}_w{i}")}
             for i, share in enumerate(split(ids, processes))]
    procs = [ctx.Process(target=worker, args=(spec, barrier, results), name=f"agents-scaling-{i}")
             for i, spec in enumerate(specs)]
    for p in procs:
        p.start()
    try:
        rows = [results.get(timeout=JOIN_TIMEOUT) for _ in procs]
    except BaseException:  # this run stopped (an error, SIGTERM): each worker's SIGTERM handler stops its Redis
        for p in procs:
            p.terminate()
        raise
    finally:
        for p in procs:
            p.join(timeout=STOP_TIMEOUT)
            if p.is_alive():
                p.kill()
                p.join()
    errors = [r for r in rows if "error" in r]
    if errors:
        raise RuntimeError(f"{len(errors)} of {processes} workers failed: {errors[0]['error']}\n"
                           f"{errors[0]['traceback']}")
    rows.sort(key=lambda r: r["index"])
    lat = [x for r in rows for x in r["latencies_ms"]]
    ltm = [x for r in rows for x in r["ltm_latencies_ms"]]
    for r in rows:
        r["retrieve_ms"], r["ltm_ms"] = percentiles(r.pop("latencies_ms")), percentiles(r.pop("ltm_latencies_ms"))
    ltm_wall = max(r["ltm_wall_s"] for r in rows)
    out = {
        "processes": processes, "agents": len(ids), "events": sum(r["events"] for r in rows),
        "store_events_per_s": sum(r["store_events_per_s"] for r in rows),
        "retrieve_ms": percentiles(lat), "retrieve_queries": len(lat),
        "ltm_queries": len(ltm), "ltm_qps": len(ltm) / max(ltm_wall, 1e-9), "ltm_ms": percentiles(ltm),
        "load_average": {"start": [round(x, 2) for x in load_start],
                         "end": [round(x, 2) for x in os.getloadavg()]},
        "per_process": rows,
    }
    log(f"{processes} process(es): {out['store_events_per_s']:.0f} events/s stored, LTM {out['ltm_qps']:.0f} q/s "
        f"p50 {out['ltm_ms']['p50']:.1f} p95 {out['ltm_ms']['p95']:.1f} ms, retrieve p95 "
        f"{out['retrieve_ms']['p95']:.1f} ms, load {load_start[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    return out


def run(args: argparse.Namespace, root: Path, log=print) -> dict[str, Any]:
    secret = os.environ.get("LUMINA_SECRET_KEY") or secrets.token_hex(32)
    pg = None
    counts = []
    with exit_on_sigterm():  # a killed run still stops its PostgreSQL and every worker's Redis
        try:
            if not args.database_url:
                from lumina_memory.stores.postgres_server import start_private_postgres

                pg = start_private_postgres(root / "postgres")
            for n in args.processes:
                if pg is not None:
                    url, ids = pg.create_database(f"agents_scaling_p{n}"), _ids(args.agents)
                else:
                    url, ids = args.database_url, _ids(args.agents, f"p{n}_")
                counts.append(run_count(n, ids, args, url, secret, root, log))
        finally:
            if pg is not None:
                pg.stop()
    return {"command": "python -m bench.agents_scaling " + " ".join(args.argv), "agents": args.agents,
            "hours": args.hours, "event_seconds": args.event_seconds, "queries_per_tick": args.queries_per_tick,
            "qps_queries": args.qps_queries, "cores": os.cpu_count(),
            "database": "given (--database-url)" if args.database_url else "private PostgreSQL (pgserver)",
            "counts": counts}


def _ids(agents: int, prefix: str = "") -> list[str]:
    return [f"{prefix}agent_{i:04d}" for i in range(agents)]


def render(report: dict[str, Any]) -> list[str]:
    out = [f"{report['agents']} agents, {report['hours']} game hours, server mode ({report['database']}), "
           f"{report['cores']} cores",
           "| processes | events stored/s | retrieve p50 / p95 ms | LTM q/s | LTM p50 / p95 ms | per process LTM q/s "
           "| load at start / end |", "|---|---|---|---|---|---|---|"]
    for c in report["counts"]:
        per = ", ".join(f"{r['ltm_qps']:.0f}" for r in c["per_process"])
        out.append(f"| {c['processes']} | {c['store_events_per_s']:.0f} | {c['retrieve_ms']['p50']:.1f} / "
                   f"{c['retrieve_ms']['p95']:.1f} | {c['ltm_qps']:.0f} | {c['ltm_ms']['p50']:.1f} / "
                   f"{c['ltm_ms']['p95']:.1f} | {per} | {c['load_average']['start'][0]:.1f} / "
                   f"{c['load_average']['end'][0]:.1f} |")
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--hours", type=float, default=0.1, help="Game hours of the run.")
    ap.add_argument("--event-seconds", type=float, default=10.0, help="Game seconds between an agent's events.")
    ap.add_argument("--queries-per-tick", type=int, default=5, help="Timed retrievals per tick per process.")
    ap.add_argument("--qps-queries", type=int, default=100, help="LTM retrievals per process in the rate phase.")
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4], help="Process counts to run, in order.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--database-url", help="The PostgreSQL to share (default: a private one, a database per count).")
    ap.add_argument("--data-dir", type=Path, help="The workers' data dirs here (default: a temporary directory).")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if any(n < 1 for n in args.processes) or args.agents < max(args.processes):
        ap.error("every process count must be at least 1 and at most --agents")
    args.argv = list(argv if argv is not None else sys.argv[1:])
    if args.data_dir:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        report = run(args, args.data_dir)
    else:
        root = Path(tempfile.mkdtemp(prefix="lumina-agents-scaling-"))
        try:
            report = run(args, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    print("\n".join(render(report)))
    write_report(args.json, report)
    return report


if __name__ == "__main__":
    main()
