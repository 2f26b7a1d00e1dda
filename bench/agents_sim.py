"""A simulation run at the PIANO note's rates (P8): agents producing events, retrieving, consolidating, forgetting.

The run's clock advances in ticks of ``--event-seconds`` of game time (the note: about one event per agent per 10
s). Every tick each agent stores one event (one ``store_many`` per tick, the simulation's path) and a sample of
agents retrieves: STM only (the note's < 5 ms), LTM only (< 50 ms; timed only for agents that hold LTM records,
an empty layer answers without a search) and the module's default layers, each timed alone. Consolidation runs in
the memory's own worker pool as capacity and the cycle ask, beside the stores (its jobs are timed); after the run
every agent is consolidated (forced) and maintained (P5) once more. Then the LTM query rate one process sustains
is measured with 1, 2 and 4 threads issuing LTM retrievals (a fixed count each): the highest rate whose p95 stays
under ``--ltm-p95-ms``. Event texts come from templates filled from word lists (a few thousand distinct
sentences), so the embedder's cache takes part as it would in a village where agents repeat themselves; the
embedder's own seconds are reported apart.

    python -m bench.agents_sim --agents 500 --hours 2.5 [--json bench/results/agents_sim_500.json]
    python -m bench.agents_sim --agents 20 --hours 0.2 --database-url postgresql://...   # server mode

Reported: store throughput (events/s of wall time, and the game's need: agents / event-seconds), STM/LTM/default
retrieval p50/p95/p99, consolidation jobs and events/s, LTM and STM counts over the run (for the notebook), RSS
growth per agent and the data dir's bytes per agent and per component.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench.agents_open import opened_memory
from bench.common import bench_settings, peak_rss_mb, percentiles

SUBJECTS = ["Lila", "Noah", "Mira", "Oren", "Sana", "Kai", "Yuki", "Ren", "Aiko", "Tomas", "Ines", "Hugo"]
PLACES = ["the cave", "the north farm", "the river", "the old mine", "the market", "the well", "the forest",
          "the bridge", "the tower", "the lake"]
THINGS = ["iron ore", "coal", "bread", "wheat", "wood", "stone", "clay", "honey", "a pickaxe", "torches"]
TEMPLATES = [("action", "I mined {t} near {p}."), ("action", "I carried {t} to {p}."),
             ("observation", "{s} was working at {p}."), ("observation", "I saw a wolf near {p}."),
             ("conversation", "{s} asked me to bring {t} to {p}."), ("conversation", "{s} said {p} has {t}."),
             ("conversation", "{s} and I agreed to meet at {p}."), ("action", "I traded {t} with {s}."),
             ("observation", "It is raining over {p}."), ("reflection", "I should spend more time near {p} with {s}.")]
QUERIES = [("social", "who asked me for help?"), ("planning", "where can I find {t}?"),
           ("talking", "what did {s} say?"), ("reflection", "what have I learned about {p}?"),
           ("goals", "what do I need {t} for?"), ("default", "what happened at {p}?")]
QPS_THREADS = (1, 2, 4)


def _text(rnd: random.Random, pattern: str) -> str:
    return pattern.format(s=rnd.choice(SUBJECTS), p=rnd.choice(PLACES), t=rnd.choice(THINGS))


def tick_events(rnd: random.Random, ids, now: float) -> list[tuple[str, dict]]:
    """One event per agent at ``now``: the note's rate is one per agent per tick."""
    batch = []
    for a in ids:
        typ, pattern = rnd.choice(TEMPLATES)
        batch.append((a, {"type": typ, "content": _text(rnd, pattern), "time": now, "participants": [a]}))
    return batch


class Timed:
    """Seconds and calls spent in a callable (the embedder's forward passes, the pool's jobs), thread-safe."""

    def __init__(self, fn):
        self.fn, self.seconds, self.calls, self.results = fn, 0.0, 0, 0
        self._lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            out = self.fn(*args, **kwargs)
        finally:
            with self._lock:
                self.seconds += time.perf_counter() - t0
                self.calls += 1
        if isinstance(out, int):
            with self._lock:
                self.results += out
        return out


def allocated_bytes(path: Path) -> int:
    """Bytes the files under ``path`` occupy on disk (blocks allocated): qdrant-edge's segment files are sparse,
    their apparent size (``bench.common.dir_bytes``) is hundreds of MB for a few KB written."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files)


def data_breakdown(data_dir: Path) -> dict[str, int]:
    """Allocated bytes per top-level entry of the data dir (archive file, vector collections, ...)."""
    return {p.name: allocated_bytes(p) for p in sorted(data_dir.iterdir())}


def ltm_latencies(memory, ids: list[str], queries: int, rnd: random.Random) -> list[float]:
    """Milliseconds of ``queries`` LTM-only retrievals, each by a random agent with a random query."""
    out = []
    for _ in range(queries):
        a, q = rnd.choice(ids), _text(rnd, rnd.choice(QUERIES)[1])
        t0 = time.perf_counter()
        memory.retrieve(a, q, "default", layers=["ltm"])
        out.append((time.perf_counter() - t0) * 1000)
    return out


def ltm_qps(memory, ids: list[str], queries: int, p95_limit_ms: float, seed: int) -> dict:
    """LTM retrievals from 1, 2, 4 threads (``queries`` each): rate and tail per thread count."""
    rows = []
    for threads in QPS_THREADS:
        lat: list[float] = []
        lock = threading.Lock()

        def worker(n: int) -> None:
            mine = ltm_latencies(memory, ids, queries, random.Random(seed * 100 + n))
            with lock:
                lat.extend(mine)

        started = time.perf_counter()
        pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        wall = time.perf_counter() - started
        rows.append({"threads": threads, "queries": len(lat), "qps": len(lat) / wall, **percentiles(lat)})
    ok = [r for r in rows if r["p95"] < p95_limit_ms]
    return {"p95_limit_ms": p95_limit_ms, "rows": rows, "qps_at_limit": max((r["qps"] for r in ok), default=0.0)}


class Rumour:
    """A shared memory spreading by word of mouth: agent 0 shares it with agent 1 (bilateral), then every tick
    each agent who can see it tells it to a random agent with ``probability`` (``AgentMemory.tell``: the hearer
    gets a bilateral copy, the hop is recorded under the root). Reported: knowers over game minutes, the tellings,
    the hops ``trace`` returns, and how many of a sample of knowers find it with ``retrieve_shared``."""

    TEXT = "The old mine under the hill hides a silver vein; keep it quiet."

    def __init__(self, memory, ids: list[str], rnd: random.Random, probability: float):
        self.memory, self.ids, self.rnd, self.probability = memory, ids, rnd, probability
        if len(ids) < 2:
            raise ValueError("a rumour needs two agents")
        self.root = memory.store_shared(self.TEXT, scope="bilateral", visible_to=ids[:2], author=ids[0])
        self.knows = {a: self.root for a in ids[:2]}
        self.tellings = 0
        self.series = [{"game_minutes": 0.0, "knowers": len(self.knows)}]

    def tick(self, game_seconds: float) -> None:
        for teller in list(self.knows):
            if self.rnd.random() >= self.probability:
                continue
            hearer = self.rnd.choice(self.ids)
            if hearer == teller or hearer in self.knows:
                continue
            self.knows[hearer] = self.memory.tell(self.knows[teller], teller, hearer)
            self.tellings += 1
        self.series.append({"game_minutes": round(game_seconds / 60, 2), "knowers": len(self.knows)})

    def report(self, sample: int = 20) -> dict:
        hops = self.memory.trace(self.root)
        checked = list(self.knows)[:sample]
        # A teller also sees the copies it told (each bilateral with its hearer), all of the same text: the
        # rumour is found when any memory it can see holds it.
        found = sum(any(r.content == self.TEXT for r in self.memory.retrieve_shared(a, "where is the silver vein?"))
                    for a in checked)
        return {"root": self.root, "probability": self.probability, "knowers": len(self.knows),
                "tellings": self.tellings, "hops": len(hops), "found_by_sample": [found, len(checked)],
                "series": self.series}


def run(agents: int, hours: float, event_seconds: float, queries_per_tick: int, data_dir: Path, seed: int = 1,
        database_url: str | None = None, qps_queries: int = 100, ltm_p95_ms: float = 50.0,
        stm_capacity: int | None = None, tell_probability: float = 0.1, progress=print) -> dict:
    rnd = random.Random(seed)
    extra = {}
    if database_url:  # server mode signs with the memory's secret: the environment's, else one for this run
        extra = {"database_url": database_url,
                 "secret_key": os.environ.get("LUMINA_SECRET_KEY") or secrets.token_hex(32)}
    rss_before = peak_rss_mb()
    params: dict = {"run_hours": hours}
    if stm_capacity:  # the note's capacity comes from the run's length; a fixed one makes short runs consolidate
        params.update(stm_base_capacity=stm_capacity, stm_max_capacity=stm_capacity)
    clock = {"now": 1_800_000_000.0}
    start_clock = clock["now"]
    rumour: Rumour | None = None
    ids = [f"agent_{i:04d}" for i in range(agents)]
    ticks = max(1, int(hours * 3600 / event_seconds))
    lat: dict[str, list[float]] = defaultdict(list)
    series = []
    store_s = 0.0
    stored = 0
    # Closed, with the private Redis it started, on every exit path (bench.agents_open).
    with opened_memory(bench_settings(data_dir, agents=params, **extra), lambda: clock["now"]) as (services, memory):
        inner = getattr(services.embedder, "inner", services.embedder)
        embed_timer = Timed(inner.embed)
        inner.embed = embed_timer
        jobs = Timed(memory.pool.job)
        memory.pool.job = jobs
        tables = memory.agents.tables
        started = time.perf_counter()
        rss_services = peak_rss_mb()
        empty = sum(data_breakdown(data_dir).values())
        for tick in range(ticks):
            clock["now"] += event_seconds
            batch = tick_events(rnd, ids, clock["now"])
            t0 = time.perf_counter()
            memory.store_many(batch)
            store_s += time.perf_counter() - t0
            stored += len(batch)
            if rumour is None:
                rumour = Rumour(memory, ids, rnd, tell_probability)
            rumour.tick(clock["now"] - start_clock)
            for _ in range(queries_per_tick):
                a = rnd.choice(ids)
                module, pattern = rnd.choice(QUERIES)
                query = _text(rnd, pattern)
                has_ltm = tables.count_ltm(a) > 0
                for name, layers in (("stm", ["stm"]), ("ltm", ["ltm"]), ("default", None)):
                    if name == "ltm" and not has_ltm:
                        continue
                    t0 = time.perf_counter()
                    memory.retrieve(a, query, module if name == "default" else "default", layers=layers)
                    lat[name].append((time.perf_counter() - t0) * 1000)
            if tick % max(1, ticks // 30) == 0 or tick == ticks - 1:
                sample = ids[:: max(1, agents // 20)]
                stm = sum(tables.count_events(a) for a in sample) / len(sample)
                ltm = sum(tables.count_ltm(a) for a in sample) / len(sample)
                series.append({"game_minutes": round((tick + 1) * event_seconds / 60, 2), "stm_per_agent": stm,
                               "ltm_per_agent": ltm, "wall_s": round(time.perf_counter() - started, 1),
                               "stm_p95_ms": percentiles(lat["stm"][-200:])["p95"] if lat["stm"] else None,
                               "ltm_p95_ms": percentiles(lat["ltm"][-200:])["p95"] if lat["ltm"] else None})
                progress(f"tick {tick + 1}/{ticks} game {series[-1]['game_minutes']} min: STM {stm:.0f}, LTM "
                         f"{ltm:.0f} per agent, {stored / max(store_s, 1e-9):.0f} events/s stored, wall "
                         f"{series[-1]['wall_s']} s")
        run_wall = time.perf_counter() - started
        memory.pool.wait_idle()
        t0 = time.perf_counter()
        forced = sum(memory.consolidate(a, force=True) for a in ids)
        consolidate_s = time.perf_counter() - t0
        ltm_before = sum(tables.count_ltm(a) for a in ids)
        t0 = time.perf_counter()
        reports = [memory.maintenance(a) for a in ids]
        maintenance_s = time.perf_counter() - t0
        ltm_total = sum(tables.count_ltm(a) for a in ids)
        stm_total = sum(tables.count_events(a) for a in ids)
        spread = rumour.report() if rumour is not None else {}
        qps = ltm_qps(memory, ids, qps_queries, ltm_p95_ms, seed)
        data = data_breakdown(data_dir)
        report = {
            "agents": agents, "hours": hours, "event_seconds": event_seconds, "events": stored, "ticks": ticks,
            "engine": "postgres" if database_url else "duckdb",
            "stm_capacity": stm_capacity, "queries_per_tick": queries_per_tick,
            "needed_events_per_s": agents / event_seconds,
            "store_events_per_s": stored / max(store_s, 1e-9), "store_seconds": store_s,
            "run_wall_s": run_wall, "wall_s": time.perf_counter() - started,
            "embedder": {"seconds": embed_timer.seconds, "calls": embed_timer.calls,
                         "hits": getattr(services.embedder, "hits", None),
                         "misses": getattr(services.embedder, "misses", None)},
            "latency_ms": {k: percentiles(v) for k, v in lat.items()},
            "queries": {k: len(v) for k, v in lat.items()},
            "pool": {"jobs": jobs.calls, "records": jobs.results, "seconds": jobs.seconds,
                     "done": dict(memory.pool.done), "skipped": memory.pool.skipped,
                     "failed": len(memory.pool.failed)},
            "final_consolidation": {"records": forced, "seconds": consolidate_s},
            "maintenance": {"seconds": maintenance_s, "ltm_before": ltm_before,
                            "deleted": sum(r.get("deleted", 0) for r in reports),
                            "compressed": sum(r.get("compressed", 0) for r in reports)},
            "consolidated_events": stored - stm_total,
            "consolidation_events_per_s": (stored - stm_total) / max(jobs.seconds + consolidate_s, 1e-9),
            "ltm_total": ltm_total, "stm_total": stm_total,
            "ltm_qps": qps,
            "peak_rss_mb": peak_rss_mb(), "rss_growth_mb_per_agent": (peak_rss_mb() - rss_services) / agents,
            "rss_before_services_mb": rss_before,
            "data_bytes": data, "data_bytes_empty": empty,
            "data_bytes_per_agent": (sum(data.values()) - empty) / agents,
            "series": series, "spread": spread,
        }
    return report


def render(report: dict) -> list[str]:
    lat = report["latency_ms"]
    out = [f"{report['agents']} agents ({report['engine']}), {report['hours']} game hours, {report['events']} "
           f"events: stored {report['store_events_per_s']:.0f} events/s (the game needs "
           f"{report['needed_events_per_s']:.0f}), embedder {report['embedder']['seconds']:.0f} s of "
           f"{report['store_seconds']:.0f} s storing, wall {report['wall_s']:.0f} s",
           "| layer | p50 ms | p95 ms | p99 ms | queries |", "|---|---|---|---|---|"]
    for name in ("stm", "ltm", "default"):
        if name in lat:
            p = lat[name]
            out.append(f"| {name} | {p['p50']:.1f} | {p['p95']:.1f} | {p['p99']:.1f} | {report['queries'][name]} |")
    pool = report["pool"]
    out.append(f"consolidation: {pool['jobs']} pool jobs ({pool['records']} records, {pool['seconds']:.1f} s, "
               f"{pool['failed']} failed), {report['consolidation_events_per_s']:.0f} events/s consolidated; "
               f"final forced {report['final_consolidation']['records']} records; maintenance deleted "
               f"{report['maintenance']['deleted']}, compressed {report['maintenance']['compressed']}")
    out.append(f"LTM {report['ltm_total']} records, STM {report['stm_total']} events; peak RSS "
               f"{report['peak_rss_mb']:.0f} MB ({report['rss_growth_mb_per_agent'] * 1024:.0f} KiB growth per "
               f"agent), {report['data_bytes_per_agent'] / 1024:.0f} KiB per agent on disk")
    sp = report.get("spread") or {}
    if sp:
        out.append(f"rumour: {sp['knowers']} of {report['agents']} agents know it after {sp['tellings']} tellings "
                   f"({sp['hops']} hops traced); found by {sp['found_by_sample'][0]} of {sp['found_by_sample'][1]} "
                   "knowers asked")
    q = report["ltm_qps"]
    out.append("LTM queries/s per process: " + ", ".join(
        f"{r['threads']} thr {r['qps']:.0f} q/s p95 {r['p95']:.0f} ms" for r in q["rows"])
        + f"; at p95 < {q['p95_limit_ms']:.0f} ms: {q['qps_at_limit']:.0f} q/s")
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=500)
    ap.add_argument("--hours", type=float, default=2.5, help="Game hours of the run.")
    ap.add_argument("--event-seconds", type=float, default=10.0, help="Game seconds between an agent's events.")
    ap.add_argument("--queries-per-tick", type=int, default=5, help="Timed retrievals (x3 layers) per tick.")
    ap.add_argument("--qps-queries", type=int, default=100, help="LTM retrievals per thread in the rate phase.")
    ap.add_argument("--ltm-p95-ms", type=float, default=50.0)
    ap.add_argument("--stm-capacity", type=int, help="Fixed STM capacity (default: the note's, from --hours).")
    ap.add_argument("--tell-probability", type=float, default=0.1,
                    help="Per tick, the chance an agent who knows the rumour tells it to a random agent.")
    ap.add_argument("--database-url", help="Server mode: the memory's PostgreSQL (default: embedded DuckDB).")
    ap.add_argument("--data-dir", type=Path, help="Keep the memory here (default: a temporary directory).")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    kw = dict(database_url=args.database_url, qps_queries=args.qps_queries, ltm_p95_ms=args.ltm_p95_ms,
              stm_capacity=args.stm_capacity, tell_probability=args.tell_probability)
    if args.data_dir:
        report = run(args.agents, args.hours, args.event_seconds, args.queries_per_tick, args.data_dir, **kw)
    else:
        with tempfile.TemporaryDirectory(prefix="lumina-agents-sim-") as tmp:
            report = run(args.agents, args.hours, args.event_seconds, args.queries_per_tick, Path(tmp), **kw)
    print("\n".join(render(report)))
    write_report(args.json, report)
    return report


def write_report(path: Path | None, report: dict) -> None:
    """The report as JSON at ``path`` (nothing when None), its folder made."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
