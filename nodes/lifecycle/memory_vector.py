"""A faded memory's two vectors (F3 step 3.5, F4).

The notes re-embed a compressed memory from its new text so that an old memory is harder to call to mind
(「検索精度の自然な低下」). Issue 17 adds that forgetting changes what is remembered, not what is recorded:
deliberate recall still finds the record. So the long-term point keeps the vector of the segment as it was
recorded — what deliberate recall, novelty at ingest and association search compare against — and carries
the memory's own vector (its text at its level, re-embedded) in the payload field ``memory_vector``, which
recall for a reply ranks by. Measured on LoCoMo dev (bench.locomo --lifecycle): overwriting the point's
vector instead cost deliberate recall 1.7 points at 1,024 tokens.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

MEMORY_VECTOR_FIELD = "memory_vector"
_DECIMALS = 5  # ~4 kB of JSON per point; cosines move by < 1e-4


def level_fields(row: dict) -> dict[str, Any]:
    """The payload fields a memory row decides: level, retention, protection."""
    return {"level": int(row["level"]), "retention": round(float(row["retention"]), 4), "protected": bool(row["protected"])}


def compressed(row: dict) -> bool:
    return int(row["level"]) > 1 and bool(row["text"])


def reembedded_fields(embedder, rows: Sequence[dict]) -> dict[str, dict[str, Any]]:
    """``level_fields`` of each row plus ``memory_vector``: its text at its level embedded when it is
    compressed, None when it is not (the point's own vector is the memory's then)."""
    fields = {r["memory_id"]: {**level_fields(r), MEMORY_VECTOR_FIELD: None} for r in rows}
    faded = [r for r in rows if compressed(r)]
    if faded:
        vectors = embedder.embed([r["text"] for r in faded])
        for row, vector in zip(faded, vectors):
            fields[row["memory_id"]][MEMORY_VECTOR_FIELD] = [round(float(x), _DECIMALS) for x in vector]
    return fields


def _unit(vector: Iterable[float]) -> np.ndarray:
    v = np.asarray(list(vector), dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


def as_remembered(hits: list, query: np.ndarray) -> list:
    """Vector hits ranked by how close the memory is now: a compressed memory by its ``memory_vector``,
    any other by its point's score (the cosine of its recorded text)."""
    q = _unit(query)

    def closeness(hit) -> float:
        vector = hit.payload.get(MEMORY_VECTOR_FIELD)
        if vector is not None and len(vector) == q.size:
            return float(np.dot(_unit(vector), q))
        return float(hit.score)

    return sorted(hits, key=closeness, reverse=True)
