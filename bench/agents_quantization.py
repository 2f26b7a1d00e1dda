"""Agents' vectors at scale (P8): LTM recall@10 of each quantisation mode against exact search, its search
latency, and STM search latency at the capacity of 300 events per agent.

    python -m bench.agents_quantization [--agents 1000] [--records 1000] [--stm 300] [--dim 384] [--queries 300]
                                        [--backends qdrant-edge,pgvector] [--modes none,scalar,binary]
                                        [--out bench/results/agents_quantization.json]

Vectors are clustered synthetic ones (random unit vectors make every neighbour equally far, so any index has
perfect recall): each agent has 20 topics of its own, a record is its topic's centre plus noise (cosine to the
centre ~0.7, to a record of the same topic ~0.5, as related sentences of a sentence embedder are), and a query is
a new draw from the same agent's topics. Each agent's vectors are drawn from a seed of its own, so the exact
top 10 (numpy over that agent's records) is recomputed per query instead of kept. Everything goes through
stores.agent_vectors.open_agent_vectors, as the agents' nodes open it: qdrant-edge in a temp data dir (optimised
after loading: it indexes and quantises when asked), pgvector on a private PostgreSQL (a database per mode).
Latency is one search call (the query vector given), single-threaded, after 30 uncounted searches, on whatever
else the machine is running; ``cpu`` is this process's CPU time per search (all its threads): the whole search
for qdrant-edge, which runs in-process, only the client's share for pgvector, whose server is another process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import bench_settings, percentiles
from bench.sigterm import exit_on_sigterm
from lumina_memory.stores.agent_vectors import open_agent_vectors
from lumina_memory.stores.settings_agents import AgentParams

TOPICS = 20
NOISE_NORM = 1.0  # the noise vector's expected length against a unit centre: cosine to the centre ~0.7
K = 10


def agent_name(i: int) -> str:
    return f"agent-{i:05d}"


def topics(seed: int, agent: int, dim: int) -> np.ndarray:
    rng = np.random.default_rng([seed, agent, 0])
    c = rng.normal(size=(TOPICS, dim))
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def draw(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    dim = centres.shape[1]
    v = centres[rng.integers(0, len(centres), size=n)] + rng.normal(scale=NOISE_NORM / np.sqrt(dim), size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def records(seed: int, agent: int, n: int, dim: int, layer: int) -> np.ndarray:
    """The agent's stored vectors of one layer (1: LTM, 2: STM), the same on every call."""
    return draw(np.random.default_rng([seed, agent, layer]), topics(seed, agent, dim), n)


def load(store, layer: str, layer_no: int, args: argparse.Namespace, n: int) -> float:
    started = time.perf_counter()
    names = [f"r{j}" for j in range(n)]
    for a in range(args.agents):
        store.upsert(layer, agent_name(a), names, records(args.seed, a, n, args.dim, layer_no))
    return time.perf_counter() - started


WARM_UP = 30  # searches first, not counted: the first ones page the shard or table in


def measure(store, layer: str, layer_no: int, args: argparse.Namespace, n: int) -> dict:
    rng = np.random.default_rng([args.seed, 99, layer_no])
    recalls, ms, cpu_ms = [], [], []
    for i in range(WARM_UP + args.queries):
        a = int(rng.integers(0, args.agents))
        query = draw(rng, topics(args.seed, a, args.dim), 1)[0]
        wall, cpu = time.perf_counter(), time.process_time()
        hits = store.search(layer, agent_name(a), query, K)
        if i < WARM_UP:
            continue
        cpu_ms.append((time.process_time() - cpu) * 1000)
        ms.append((time.perf_counter() - wall) * 1000)
        exact = np.argsort(-(records(args.seed, a, n, args.dim, layer_no) @ query), kind="stable")[:K]
        recalls.append(len({f"r{j}" for j in exact} & {h[0] for h in hits}) / K)
    return {"recall@10": round(float(np.mean(recalls)), 4), **{f"search_{k}_ms": v for k, v in percentiles(ms).items()},
            **{f"cpu_{k}_ms": v for k, v in percentiles(cpu_ms).items()}}


def run_one(backend: str, mode: str, args: argparse.Namespace, root: Path, server) -> dict:
    data_dir = root / f"{backend}-{mode}"
    uri = server.create_database(f"agents_{mode}") if backend == "pgvector" else None
    settings = bench_settings(data_dir, database_url=uri, agents=AgentParams(quantization=mode))
    store = open_agent_vectors(settings, "bench-synthetic", args.dim)
    try:
        row = {"backend": backend, "mode": mode, "in_effect": store.quantization, "agents": args.agents,
               "ltm_per_agent": args.records, "dim": args.dim}
        if args.records:
            row["ltm_load_s"] = round(load(store, "ltm", 1, args, args.records), 1)
            started = time.perf_counter()
            store.optimize()
            row["optimize_s"] = round(time.perf_counter() - started, 1)
            row.update({f"ltm_{k}": v for k, v in measure(store, "ltm", 1, args, args.records).items()})
        if mode == "none" and args.stm:
            load(store, "stm", 2, args, args.stm)
            store.optimize()
            row.update({f"stm{args.stm}_{k}": v for k, v in measure(store, "stm", 2, args, args.stm).items()})
        return row
    finally:
        store.close()
        shutil.rmtree(data_dir, ignore_errors=True)
        if uri is not None:
            server.drop_database(f"agents_{mode}")


def table(rows: list[dict]) -> str:
    cols = ["backend", "mode", "in_effect", "ltm_recall@10", "ltm_search_p50_ms", "ltm_search_p95_ms",
            "ltm_cpu_p50_ms", "ltm_cpu_p95_ms", "ltm_load_s", "optimize_s"]
    stm = [k for k in rows[0] if k.startswith("stm") and ("recall" in k or "p50" in k or "p95" in k)] if rows else []
    cols += stm
    lines = [" | ".join(cols), " | ".join("---" for _ in cols)]
    lines += [" | ".join(str(r.get(c, "")) for c in cols) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--records", type=int, default=1000, help="LTM records per agent (0: STM only)")
    parser.add_argument("--stm", type=int, default=300, help="STM events per agent (0: no STM measure)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--backends", default="qdrant-edge,pgvector")
    parser.add_argument("--modes", default="none,scalar,binary")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="lumina-agents-bench-"))
    server = None
    rows = []
    with exit_on_sigterm():  # a killed run still stops its PostgreSQL
        try:
            for backend in args.backends.split(","):
                if backend == "pgvector" and server is None:
                    from lumina_memory.stores.postgres_server import start_private_postgres

                    server = start_private_postgres(root / "pg")
                for mode in args.modes.split(","):
                    rows.append(run_one(backend, mode, args, root, server))
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            if server is not None:
                server.stop()
            shutil.rmtree(root, ignore_errors=True)
    print(table(rows))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
