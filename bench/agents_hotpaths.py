"""Agents' hot paths on the embedded archive (issue 48): LTM reads by ids, accesses, STM counts, old and new
paths side by side in one process on one DuckDB file.

    python -m bench.agents_hotpaths [--agents 100] [--records 1000] [--batch 25] [--reads 300]
                                    [--out bench/results/agents_hotpaths.json]

The LTM table is filled as a simulation fills it: every consolidation writes one agent's ``--batch`` records
together, the agents' consolidations interleaved (round after round), so one agent's records lie in row groups
with everyone else's; a second file is filled alike and then ordered by agent (``SqlAgentTables.cluster_ltm``).
Each variant answers the same reads (an agent and 10 of its record ids, as a retrieval's LTM hits); the variants
run interleaved, one read each in turn, so the machine's drift hits them alike; every variant's answer is checked
equal to the first's. Also timed the same way: a retrieval's accesses (a transaction each, or pending) and a
store's capacity check of 50 agents (a count each, or ``count_events_many``). Figures: p50/p95 ms per call, the
ratio of medians to the first variant, and ``cpu_ms``, the process's CPU time per call (steadier than wall time
on a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from bench.common import percentiles
from lumina_memory.stores import agent_tables_sql as q
from lumina_memory.stores.agent_records import AgentEvent, LtmRecord
from lumina_memory.stores.agent_tables import SqlAgentTables
from lumina_memory.stores.duckdb_connection import GuardedConnection

WORDS = ("harvest trade salt fish river mill goat bell storm forge iron bread market promise help "
         "bridge winter council rule trust shepherd").split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def fill(tables: SqlAgentTables, agents: list[str], records: int, batch: int, rng: random.Random) -> None:
    rounds = (records + batch - 1) // batch
    for r in range(rounds):
        made = [LtmRecord(memory_id=f"m{r}-{i}", agent_id=a, created_at=float(r * batch + i),
                          content=_text(rng, 30), summary=_text(rng, 8), importance=rng.random(),
                          tags=[rng.choice(WORDS)], source_events=[f"e{r}-{i}-{k}" for k in range(3)])
                for a in agents for i in range(batch) if r * batch + i < records]
        tables.add_ltm(made)


def _old_ltm(tables: SqlAgentTables, agent: str, ids: list[str]) -> list[Any]:
    """The read before: ``agent_id = ? AND memory_id IN (SELECT unnest(?))``."""
    sql = (f"SELECT {', '.join(q.names(q.LTM_COLUMNS))} FROM {q.LTM} WHERE agent_id = ? "
           "AND memory_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY created_at, memory_id")
    with tables.db.read() as con:
        return [tuple(r) for r in con.execute(sql, [agent, ids]).fetchall()]


def _rows(records) -> list[tuple]:
    return [tuple(r.model_dump()[c] for c in q.names(q.LTM_COLUMNS)) for r in records]


def timed(variants: dict[str, Callable[[Any, list[str]], Any]], reads: list[tuple[Any, list[str]]]
          ) -> dict[str, dict[str, float]]:
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, float] = {name: 0.0 for name in variants}
    for agent, ids in reads:
        expected = None
        for name, read in variants.items():
            c0, t0 = time.process_time(), time.perf_counter()
            got = read(agent, ids)
            wall[name].append((time.perf_counter() - t0) * 1000)
            cpu[name] += time.process_time() - c0
            expected = got if expected is None else expected
            if sorted(got) != sorted(expected):
                raise AssertionError(f"{name} answered differently for {agent}")
    out = {}
    base = percentiles(wall[next(iter(variants))])["p50"]
    for name in variants:
        p = percentiles(wall[name])
        out[name] = {"p50_ms": round(p["p50"], 3), "p95_ms": round(p["p95"], 3),
                     "cpu_ms": round(cpu[name] / len(reads) * 1000, 3), "ratio_p50": round(p["p50"] / base, 3)}
    first = out[next(iter(variants))]["cpu_ms"]
    for name in variants:
        out[name]["ratio_cpu"] = round(out[name]["cpu_ms"] / first, 3) if first else None
    return out


def erase_timed(agents: int, seed: int) -> dict[str, Any]:
    """A run of ``agents`` agents (events, LTM records, WM, a shared memory each) on two data dirs filled alike,
    erased agent by agent (``erase_agent`` each: a rewrite of every file per agent) and as a run (``erase_run``:
    one pass); seconds and process CPU seconds of each."""
    from bench.agents_open import opened_memory
    from bench.common import bench_settings
    from lumina_memory.graphs.agents_erase import erase_agent, erase_run, run_agents

    out: dict[str, Any] = {"agents": agents}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("agent by agent", "erase_run"):
            rng = random.Random(seed)
            settings = bench_settings(Path(tmp) / name.replace(" ", "_"))
            with opened_memory(settings, clock=lambda: 1_800_000_000.0) as (services, memory):
                ids = [f"agent_{i:04d}" for i in range(agents)]
                for _ in range(6):
                    memory.store_many([(a, {"type": "observation", "content": _text(rng, 12)}) for a in ids],
                                      run_id="bench")
                for a in ids:
                    memory.consolidate(a, force=True)
                    memory.update_wm(a, {"current_goal": _text(rng, 4)})
                    memory.store_shared(_text(rng, 10), author=a)
                c0, t0 = time.process_time(), time.perf_counter()
                if name == "erase_run":
                    erase_run(services, "bench", actor="bench")
                else:
                    for a in ids:
                        erase_agent(services, a, actor="bench")
                out[name] = {"seconds": round(time.perf_counter() - t0, 2),
                             "cpu_seconds": round(time.process_time() - c0, 2)}
                assert run_agents(services, "bench") == []
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--records", type=int, default=1000, help="LTM records per agent")
    ap.add_argument("--batch", type=int, default=25, help="records one consolidation writes together")
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--seed", type=int, default=48)
    ap.add_argument("--erase-agents", type=int, default=20,
                    help="agents of the run erased agent by agent and all at once (0: not timed)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    agents = [f"agent_{i:04d}" for i in range(args.agents)]
    report: dict[str, Any] = {"agents": args.agents, "records_per_agent": args.records, "batch": args.batch,
                              "reads": args.reads, "loadavg_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        # Two files filled alike: the old layout (interleaved) and the new (cluster_ltm after the fill).
        dbs = [GuardedConnection(str(Path(tmp) / f"{name}.duckdb"), tmp, "archive", ()) for name in ("old", "new")]
        try:
            old, new = (SqlAgentTables(db) for db in dbs)
            for tables in (old, new):
                tables.cluster_min_rows = 1 << 62  # the layout under test, not the automatic re-ordering
            t0 = time.perf_counter()
            fill(old, agents, args.records, args.batch, random.Random(args.seed))
            fill(new, agents, args.records, args.batch, random.Random(args.seed))
            report["fill_seconds"] = round(time.perf_counter() - t0, 1)
            c0, t0 = time.process_time(), time.perf_counter()
            new.cluster_ltm()
            report["cluster_ltm"] = {"seconds": round(time.perf_counter() - t0, 2),
                                     "cpu_seconds": round(time.process_time() - c0, 2)}
            rounds = (args.records + args.batch - 1) // args.batch
            all_ids = [f"m{r}-{i}" for r in range(rounds) for i in range(args.batch)][:args.records]
            reads = [(rng.choice(agents), rng.sample(all_ids, 10)) for _ in range(args.reads)]
            report["ltm_by_ids"] = timed({
                "old: IN (SELECT unnest), interleaved": lambda a, ids: _old_ltm(old, a, ids),
                "ltm(agent, ids), interleaved": lambda a, ids: _rows(old.ltm(a, ids)),
                "ltm(agent, ids), clustered": lambda a, ids: _rows(new.ltm(a, ids)),
            }, reads)
            # A retrieval's accesses: a transaction per call (the bound at 0: written at once) or pending.
            old.accesses.max_pending = 0

            def touch(tables):
                def call(agent, ids):
                    tables.touch_ltm(agent, ids, 1.0)
                    return []
                return call

            report["touch_ltm"] = timed({"old: a transaction per retrieval": touch(old),
                                         "pending, written with the next write": touch(new)}, reads)
            new.flush_accesses()
            # A store's capacity check: one count per agent of the tick, or one grouped read.
            old_count = (lambda a, _: [(x, old.count_events(x)) for x in a])
            new_count = (lambda a, _: list(new.count_events_many(a).items()))
            for tables in (old, new):
                tables.add_events([AgentEvent(event_id=f"e{i}", agent_id=a, time=float(i), type="action",
                                              content=_text(rng, 12)) for a in agents for i in range(20)])
                tables.events_cache = None  # the table's answer, as on PostgreSQL or after the copy is dropped
            ticks = [(rng.sample(agents, min(len(agents), 50)), []) for _ in range(max(10, args.reads // 10))]
            report["count_events_50_agents"] = timed({"old: count_events per agent": old_count,
                                                      "count_events_many": new_count}, ticks)
        finally:
            for db in dbs:
                db.close()
    if args.erase_agents:
        report["erase_run"] = erase_timed(args.erase_agents, args.seed)
    report["loadavg_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return report


if __name__ == "__main__":
    main()
