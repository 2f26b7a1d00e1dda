"""Sizing for many agents (P8): per-record costs measured on a filled LTM, and the table rendered from the runs.

``fill`` writes LTM records straight through the agent tables and vectors (batched, no consolidation: what a run
leaves behind after hours), in rounds, so every agent holds ``--records`` / ``--rounds`` more records after each
round; after each round it measures the data dir's allocated bytes (archive and vectors apart), the process's
RSS and ``--queries`` LTM retrievals through ``AgentMemory.retrieve`` (p50/p95/p99). The costs per record are the
slopes between rounds, so a cap the machine cannot hold (1,000 agents x 10,000 records) is extrapolated from
measured differences, not from one point. Record texts are a pool of real sentences embedded once; each record's
vector is its sentence's plus a small random offset, so an agent's records are distinct points near real text.

``table`` reads bench/results/agents_sim_*.json and agents_fill_*.json and renders the sizing table: processes for
200 queries/s average and 1,000 peak at LTM p95 under 50 ms (from each run's measured LTM rate per process),
memory and disk for 1,000 agents x 10,000 records.

    python -m bench.agents_sizing fill --agents 1000 --records 1000 [--json bench/results/agents_fill_1000x1000.json]
    python -m bench.agents_sizing table [--results bench/results] [--markdown bench/results/agents_sizing.md]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.agents_open import opened_memory
from bench.agents_sim import SUBJECTS, TEMPLATES, _text, data_breakdown, ltm_latencies, ltm_qps, write_report
from bench.common import bench_settings, peak_rss_mb, percentiles

TARGET_AGENTS, TARGET_RECORDS = 1_000, 10_000
AVERAGE_QPS, PEAK_QPS = 200, 1_000
VECTOR_DIRS = ("qdrant",)


def _rss_mb() -> float:
    """The process's resident set now (VmRSS), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return peak_rss_mb()


def _pool(count: int, seed: int) -> list[str]:
    """``count`` distinct record texts: the sim's sentences with a witness and a day."""
    rnd = random.Random(seed)
    texts: set[str] = set()
    while len(texts) < count:
        texts.add(f"{_text(rnd, rnd.choice(TEMPLATES)[1])} ({rnd.choice(SUBJECTS)}, day {rnd.randrange(1, 60)})")
    return sorted(texts)


def fill(agents: int, records: int, rounds: int, queries: int, data_dir: Path, pool_size: int = 2000,
         seed: int = 3, qps_queries: int = 100, progress=print) -> dict:
    from lumina_memory.stores.agent_records import DEFAULT_RUN, LtmRecord

    rnd = random.Random(seed)
    nrng = np.random.default_rng(seed)
    now = 1_800_000_000.0
    ids = [f"agent_{i:04d}" for i in range(agents)]
    # Closed, with the private Redis it started, on every exit path (bench.agents_open).
    with opened_memory(bench_settings(data_dir), lambda: now) as (services, memory):
        st = memory.agents
        t0 = time.perf_counter()
        texts = _pool(pool_size, seed)
        base = services.embedder.embed(texts).astype(np.float32)
        embed_s = time.perf_counter() - t0
        for a in ids:
            st.tables.register_agent(a, DEFAULT_RUN)
        rows = [{"records_per_agent": 0, **_sizes(data_dir), "rss_mb": _rss_mb()}]
        per_round = max(1, records // rounds)
        write_s = 0.0
        for r in range(rounds):
            t0 = time.perf_counter()
            for a in ids:
                pick = nrng.integers(0, len(texts), per_round)
                vecs = base[pick] + nrng.normal(0, 0.03, (per_round, base.shape[1])).astype(np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                made = [LtmRecord(memory_id=f"ltm_{a}_{r}_{j}", agent_id=a, created_at=now - rnd.uniform(0, 9000),
                                  type=rnd.choice(["episodic", "semantic"]), content=texts[int(i)],
                                  importance=round(rnd.uniform(0.1, 0.9), 3),
                                  source_events=[f"evt_{a}_{r}_{j}_{k}" for k in range(3)])
                        for j, i in enumerate(pick)]
                st.tables.add_ltm(made)
                st.vectors.upsert("ltm", a, [m.memory_id for m in made], vecs)
            write_s += time.perf_counter() - t0
            row = {"records_per_agent": per_round * (r + 1), **_sizes(data_dir), "rss_mb": _rss_mb(),
                   "write_s": write_s, "ltm_ms": percentiles(ltm_latencies(memory, ids, queries, rnd))}
            rows.append(row)
            progress(f"round {r + 1}/{rounds}: {row['records_per_agent']} records per agent, archive "
                     f"{row['archive_bytes'] / 2**20:.0f} MiB, vectors {row['vector_bytes'] / 2**20:.0f} MiB, RSS "
                     f"{row['rss_mb']:.0f} MB, LTM p95 {row['ltm_ms']['p95']:.1f} ms")
        total = agents * per_round * rounds
        qps = ltm_qps(memory, ids, qps_queries, 50.0, seed)
        report = {"agents": agents, "records_per_agent": per_round * rounds, "records": total, "rounds": rows,
                  "write_records_per_s": total / max(write_s, 1e-9), "pool_texts": len(texts),
                  "pool_embed_s": embed_s, "ltm_counts": sorted({st.tables.count_ltm(a) for a in ids}),
                  "ltm_qps": qps, "per_record": _slopes(rows, agents)}
    return report


def _sizes(data_dir: Path) -> dict[str, int]:
    parts = data_breakdown(data_dir)
    vectors = sum(v for k, v in parts.items() if k in VECTOR_DIRS)
    archive = sum(v for k, v in parts.items() if k.startswith("archive"))
    return {"archive_bytes": archive, "vector_bytes": vectors, "data_bytes": sum(parts.values())}


def _slopes(rows: list[dict], agents: int) -> dict[str, float]:
    """Bytes (disk: archive, vectors; RSS) and LTM p95 ms per added record per agent, least squares over the
    measured rounds (the empty start excluded for latency: it does no search)."""
    n = np.asarray([r["records_per_agent"] for r in rows], dtype=float)
    out = {}
    for key in ("archive_bytes", "vector_bytes", "rss_mb"):
        y = np.asarray([r[key] for r in rows], dtype=float)
        slope = float(np.polyfit(n, y, 1)[0]) if len(rows) > 1 else float("nan")
        out[key.replace("_mb", "_bytes") if key == "rss_mb" else key] = (
            slope * 2**20 if key == "rss_mb" else slope) / agents
    measured = [r for r in rows if "ltm_ms" in r]
    if len(measured) > 1:
        fit = np.polyfit([r["records_per_agent"] for r in measured], [r["ltm_ms"]["p95"] for r in measured], 1)
        out["ltm_p95_ms_per_record"], out["ltm_p95_ms_at_zero"] = float(fit[0]), float(fit[1])
    return out


# --- the table ------------------------------------------------------------------------------------
def _load(results: Path, pattern: str) -> list[tuple[str, dict]]:
    return [(p.name, json.loads(p.read_text(encoding="utf-8"))) for p in sorted(results.glob(pattern))]


def _disk(run: dict) -> str:
    """KiB per agent in the data dir; a server-mode run keeps its rows in PostgreSQL, not measured here."""
    if run.get("engine") == "postgres":
        return "in PostgreSQL"
    return f"{run['data_bytes_per_agent'] / 1024:.0f}"


def _p95(run: dict, layer: str) -> str:
    return f"{run['latency_ms'][layer]['p95']:.1f}" if run["queries"].get(layer) else "–"


def _processes(qps: dict) -> list[str]:
    """The rate cell and the processes for the average and the peak: at the p95 limit when a thread count met
    it, else at the best rate measured, marked with its p95 (the limit was not met on this machine)."""
    if qps["qps_at_limit"] > 0:
        rate, mark = qps["qps_at_limit"], ""
    else:
        best = max(qps["rows"], key=lambda row: row["qps"])
        rate, mark = best["qps"], f" (p95 {best['p95']:.0f} ms, over the limit)"
    need = (lambda total: str(math.ceil(total / rate)) if rate > 0 else "n/a")
    return [f"{rate:.0f}{mark}", need(AVERAGE_QPS), need(PEAK_QPS)]


def table(results: Path) -> list[str]:
    sims, fills = _load(results, "agents_sim_*.json"), _load(results, "agents_fill_*.json")
    out = ["Measured on a shared 2-core machine (8 engineers' jobs running): a quiet machine's figures are lower "
           "latency and higher rates.", "",
           f"| run | agents | game h | events/s stored (needed) | STM p95 ms | LTM p95 ms | LTM q/s per process at "
           f"p95 < 50 ms (or best) | processes for {AVERAGE_QPS} q/s | for {PEAK_QPS} q/s | disk KiB / agent |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in sims:
        out.append(f"| {name} | {r['agents']} | {r['hours']} | {r['store_events_per_s']:.0f} "
                   f"({r['needed_events_per_s']:.0f}) | {_p95(r, 'stm')} | {_p95(r, 'ltm')} | "
                   + " | ".join(_processes(r["ltm_qps"])) + f" | {_disk(r)} |")
    for name, f in fills:
        per = f["per_record"]
        target = TARGET_AGENTS * TARGET_RECORDS
        last = f["rounds"][-1]
        rate = _processes(f["ltm_qps"])
        p95_target = per.get("ltm_p95_ms_at_zero", float("nan")) + per.get("ltm_p95_ms_per_record", float("nan")) \
            * TARGET_RECORDS
        out += ["", f"Filled LTM ({name}): {f['agents']} agents x {f['records_per_agent']} records, written at "
                    f"{f['write_records_per_s']:.0f} records/s; LTM p95 {last['ltm_ms']['p95']:.1f} ms, "
                    f"{rate[0]} q/s per process at p95 < 50 ms; processes for {AVERAGE_QPS} q/s: {rate[1]}, for "
                    f"{PEAK_QPS}: {rate[2]}.", "",
                "| quantity | per record (measured slope) | measured here | 1,000 agents x 10,000 records "
                "(extrapolated) |", "|---|---|---|---|"]
        for key, label in (("archive_bytes", "archive (DuckDB) bytes"), ("vector_bytes", "vectors (qdrant-edge) bytes"),
                           ("rss_bytes", "resident memory bytes")):
            here = last["rss_mb"] * 2**20 if key == "rss_bytes" else last[key]
            out.append(f"| {label} | {per[key]:.0f} | {here / 2**30:.2f} GiB | {per[key] * target / 2**30:.1f} GiB |")
        if "ltm_p95_ms_per_record" in per:
            out.append(f"| LTM p95 ms (linear in records per agent) | {per['ltm_p95_ms_per_record'] * 1000:.2f} per "
                       f"1,000 records | {last['ltm_ms']['p95']:.1f} | {p95_target:.1f} |")
    return out


def main(argv: list[str] | None = None) -> dict | list[str]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fill", help="Fill agents' LTM and measure per-record costs.")
    f.add_argument("--agents", type=int, default=1000)
    f.add_argument("--records", type=int, default=1000, help="LTM records per agent at the end.")
    f.add_argument("--rounds", type=int, default=4)
    f.add_argument("--queries", type=int, default=200, help="LTM retrievals timed after each round.")
    f.add_argument("--qps-queries", type=int, default=100)
    f.add_argument("--pool", type=int, default=2000, help="Distinct sentences embedded for the records.")
    f.add_argument("--json", type=Path)
    t = sub.add_parser("table", help="Render the sizing table from bench/results.")
    t.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    t.add_argument("--markdown", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "table":
        lines = table(args.results)
        print("\n".join(lines))
        if args.markdown:
            args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return lines
    with tempfile.TemporaryDirectory(prefix="lumina-agents-fill-") as tmp:
        report = fill(args.agents, args.records, args.rounds, args.queries, Path(tmp), args.pool,
                      qps_queries=args.qps_queries)
    write_report(args.json, report)
    return report


if __name__ == "__main__":
    main()
