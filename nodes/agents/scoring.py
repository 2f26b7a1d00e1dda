"""Retrieval scores of agents' memories (P6, the note's sections 4.6.1-4.6.3) and the merge of the layers.

score = α·relevance + β·recency + γ·importance; relevance is the cosine of query and memory, recency
exp(−λ·hours since the memory's time) with P5's λ, importance the stored score. (α, β, γ) come from the module
asking (``settings.agents.module_weights``: social, goals, planning, reflection, talking, cc; any other module
gets 'default'), each overridable per call.

``merge`` ranks the layers' results in one list and removes duplicates by source events: an STM event stands for
itself, an LTM record or a shared memory for its ``source_events``; of two results sharing an event the
higher-scoring one stays (an LTM summary and the STM event it was made from do not both take a slot). Equal
scores keep the order the layers and their results were given in.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from lumina_memory.stores.agent_records import AgentEvent, LtmRecord, Retrieved, SharedMemory
from lumina_memory.stores.errors import InvalidInput

from .decay import SECONDS_PER_HOUR

Weights = tuple[float, float, float]


def recency(hours, lam: float):
    """exp(−λ·hours) (a float for a float, an array for an array); negative hours count as 0."""
    value = np.exp(-float(lam) * np.maximum(np.asarray(hours, dtype=np.float64), 0.0))
    return float(value) if value.ndim == 0 else value


def _weight(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InvalidInput(name, f"must be a finite number >= 0, got {value!r}")
    return float(value)


def weights_for(module: str | None, params, alpha: float | None = None, beta: float | None = None,
                gamma: float | None = None) -> Weights:
    """(α, β, γ) of ``module`` ('default' for a module without its own), with any of them overridden."""
    table = params.module_weights
    base = table.get(module or "default", table["default"])
    given = (alpha, beta, gamma)
    return tuple(_weight(n, v) if v is not None else float(b)  # type: ignore[return-value]
                 for n, v, b in zip(("alpha", "beta", "gamma"), given, base))


def _count(top_k: object) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise InvalidInput("top_k", f"must be a whole number >= 1, got {top_k!r}")
    return top_k


def top_k_for(module: str | None, params, top_k: int | None = None) -> int:
    """Results a module gets when the call names no ``top_k`` (the note's table; 'default' otherwise)."""
    if top_k is None:
        table = params.module_top_k
        return int(table.get(module or "default", table.get("default", 10)))
    return _count(top_k)


def layers_for(module: str | None, params, layers: Sequence[str] | None = None) -> tuple[str, ...]:
    """Layers a module searches when the call names none (the note's table; 'default' otherwise)."""
    if layers is None:
        table = params.module_layers
        return tuple(table.get(module or "default", table["default"]))
    bad = [layer for layer in layers if layer not in ("wm", "stm", "ltm")]
    if bad or not layers:
        raise InvalidInput("layers", f"choose among wm, stm, ltm, got {list(layers)!r}")
    return tuple(dict.fromkeys(layers))


def _facts(layer: str, item) -> tuple[str, str, float, float, str | None, list[str], str | None]:
    """(id, content, time, importance, type, source events, author) of one candidate."""
    if isinstance(item, AgentEvent):
        return item.event_id, item.content, item.time, item.importance, item.type, [item.event_id], None
    if isinstance(item, LtmRecord):
        return item.memory_id, item.content, item.created_at, item.importance, item.type, list(item.source_events), None
    if isinstance(item, SharedMemory):
        return (item.memory_id, item.content, item.created_at, item.importance, item.scope, list(item.source_events),
                item.author)
    raise InvalidInput(f"{layer} candidates", f"expected AgentEvent, LtmRecord or SharedMemory, got {type(item).__name__}")


def score_candidates(layer: str, items: Sequence[AgentEvent | LtmRecord | SharedMemory], relevance: Sequence[float],
                     now: float, weights: Weights, lam: float) -> list[Retrieved]:
    """The candidates of one layer scored with ``weights`` = (α, β, γ), best first (ties keep the given order)."""
    if layer not in ("stm", "ltm", "shared"):
        raise InvalidInput("layer", f"scored layers are stm, ltm and shared, got {layer!r}")
    if len(items) != len(relevance):
        raise InvalidInput("relevance", f"{len(relevance)} scores for {len(items)} candidates")
    alpha, beta, gamma = weights
    out: list[Retrieved] = []
    for item, rel in zip(items, relevance):
        key, content, time, importance, kind, sources, author = _facts(layer, item)
        rel = float(rel)
        if not math.isfinite(rel):
            raise InvalidInput("relevance", f"must be finite, got {rel!r}")
        rec = recency((now - time) / SECONDS_PER_HOUR, lam)
        score = alpha * rel + beta * rec + gamma * importance
        out.append(Retrieved(layer=layer, id=key, content=content, score=round(score, 6), relevance=round(rel, 6),
                             recency=round(rec, 6), importance=importance, time=time, type=kind,
                             source_events=sources, author=author))
    return sorted(out, key=lambda r: -r.score)


def _covers(result: Retrieved) -> set[str]:
    return set(result.source_events) | ({result.id} if result.layer == "stm" else set())


def merge(results_by_layer: Mapping[str, Sequence[Retrieved]], top_k: int) -> list[Retrieved]:
    """One ranking of every layer's results, deduplicated by source events, at most ``top_k`` long."""
    top_k = _count(top_k)
    pooled = [r for layer in results_by_layer for r in results_by_layer[layer]]
    order = sorted(range(len(pooled)), key=lambda i: -pooled[i].score)
    kept: list[Retrieved] = []
    seen_ids: set[tuple[str, str]] = set()
    seen_events: set[str] = set()
    for i in order:
        result = pooled[i]
        covers = _covers(result)
        if (result.layer, result.id) in seen_ids or covers & seen_events:
            continue
        kept.append(result)
        seen_ids.add((result.layer, result.id))
        seen_events |= covers
        if len(kept) == top_k:
            break
    return kept
