"""Recall's latency beside plain vector searches over the same turns, interleaved query by query in one process, on
a data dir that ``python -m bench.locomo --keep-data DIR`` ingested (issue 46: "recall p95 at a million-token
history within 1.5× a plain vector store's"). On a shared machine the load moves every figure several-fold between
runs; interleaving makes each query's figures share it, and the ratios carry a paired bootstrap interval over queries.

Timed per query, excluding query embeddings: Lumina's recall (packed at the budget); LangGraph's InMemoryStore search
alone (bench.locomo's vectors baseline without its token counting of every result), for 400 and for 20 results; the
harness's vectors search as bench.locomo times it; and one float32 matrix product over the turns' vectors with a top
400 (a vector search that keeps its matrix). Evidence recall of Lumina and of the vectors baseline is measured
first, before any timed round (recall's feedback channel depends on what it served before).

    python -m bench.recall_latency_side --data FILE --conversation ID --keep-data DIR [--rounds 5] [--budget 2048]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from bench.baselines import InMemoryStoreBaseline
from bench.common import bench_settings
from bench.locomo import BASELINE_LIMIT
from bench.locomo_data import load
from lumina_memory.nodes.retrieval.budget import pack
from lumina_memory.nodes.retrieval.recall import Timings, recall


def _paired_ratio(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, q: float = 95) -> tuple[float, float, float]:
    """p``q`` of ``a`` ÷ p``q`` of ``b`` with a 95% bootstrap interval over the paired queries."""
    draws = [np.percentile(a[i], q) / np.percentile(b[i], q) for i in (rng.integers(0, len(a), len(a)) for _ in range(2000))]
    return float(np.percentile(a, q) / np.percentile(b, q)), float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))


def _coverage(services, conv, qvecs, vectors, budgets) -> dict[tuple[str, int], np.ndarray]:
    out: dict[tuple[str, int], list[float]] = {}
    for q, v in zip(conv.questions, qvecs):
        evidence = set(q.evidence)
        ranked = vectors.search(q.question, v, BASELINE_LIMIT)
        for b in budgets:
            _, covered, _ = pack(recall(services, conv.sample_id, q.question, purpose="question", budget=b, query_vector=v), b)
            out.setdefault(("lumina", b), []).append(len(evidence & covered) / len(evidence))
            _, covered, _ = pack(ranked, b)
            out.setdefault(("vectors", b), []).append(len(evidence & covered) / len(evidence))
    return {k: np.asarray(v) for k, v in out.items()}


def run(args) -> None:
    from lumina_memory.nodes.retrieval.warm import warm_indexes
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import stop_server

    (conv,) = load(args.data, [args.conversation])
    settings = bench_settings(Path(args.keep_data) / conv.sample_id)
    services = open_services(settings)
    try:
        warm_indexes(services, conv.sample_id)
        qvecs = [services.embedder.embed([q.question])[0] for q in conv.questions]
        vectors = InMemoryStoreBaseline(conv.turns, services.embedder, (conv.sample_id, "turns"))
        matrix = services.embedder.embed([t.text for t in conv.turns]).astype(np.float32)  # cached by the store's puts
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9
        rng = np.random.default_rng(0)
        budgets = sorted({1024, args.budget})
        cov = _coverage(services, conv, qvecs, vectors, budgets)
        for b in budgets:
            lum, vec = cov[("lumina", b)], cov[("vectors", b)]
            diffs = [(lum[i] - vec[i]).mean() for i in (rng.integers(0, len(lum), len(lum)) for _ in range(2000))]
            print(f"recall@{b}: lumina {lum.mean():.3f} vectors {vec.mean():.3f} lumina-vectors "
                  f"{100 * (lum - vec).mean():+.1f} [{100 * np.percentile(diffs, 2.5):+.1f}, "
                  f"{100 * np.percentile(diffs, 97.5):+.1f}] points ({len(lum)} questions)")
        ms: dict[str, list[float]] = {k: [] for k in ("lumina", "store_400", "store_20", "harness_vectors", "matrix_400")}
        for _ in range(args.rounds):
            for q, v in zip(conv.questions, qvecs):
                timings = Timings()
                t0 = time.perf_counter()
                recall(services, conv.sample_id, q.question, purpose="question", budget=args.budget, query_vector=v,
                       timings=timings)
                ms["lumina"].append((time.perf_counter() - t0) * 1000 - timings.embed_ms)
                for name, call in (("store_400", lambda: vectors.store.search(vectors.namespace, query=q.question, limit=400)),
                                   ("store_20", lambda: vectors.store.search(vectors.namespace, query=q.question, limit=20)),
                                   ("harness_vectors", lambda: vectors.search(q.question, v, BASELINE_LIMIT)),
                                   ("matrix_400", lambda: np.argsort(-(matrix @ np.asarray(v, dtype=np.float32)))[:400])):
                    t0 = time.perf_counter()
                    call()
                    ms[name].append((time.perf_counter() - t0) * 1000)
        lumina = np.asarray(ms["lumina"])
        print(f"{len(lumina)} queries ({args.rounds} rounds), ms excluding query embeddings:")
        for name, values in ms.items():
            x = np.asarray(values)
            line = f"  {name}: p50 {np.percentile(x, 50):.1f} p95 {np.percentile(x, 95):.1f} p99 {np.percentile(x, 99):.1f}"
            if name != "lumina":
                r, lo, hi = _paired_ratio(lumina, x, rng)
                line += f"; lumina p95 / its p95 = {r:.2f} [{lo:.2f}, {hi:.2f}]"
            print(line)
    finally:
        services.close()
        stop_server(settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall_latency_side", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the LoCoMo-format file the data dir was ingested from")
    parser.add_argument("--conversation", required=True, help="its sample_id")
    parser.add_argument("--keep-data", required=True, help="bench.locomo's --keep-data directory")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=2048)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
