"""The embeddings an export's rows carry (a segment's centroid, a procedure's and a strategy's vector), made again
when the importing memory embeds with another model than the exporting one (the header's ``embedder``): the
vector tiers are rebuilt from these rows, and a vector of one model is meaningless in another's collection.

Each is made as the pipeline makes it: a segment's is the normalised mean of its turns' vectors
(nodes.flush_to_redis.segment_vectors), a procedure's embeds its description and steps
(nodes.knowledge.procedure_models.ProcedureDraft.text), a strategy's its task (nodes.strategies).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np


def embedder_of(services) -> dict[str, Any]:
    return {"name": services.embedder.name, "dim": int(services.embedder.dim)}


def same_embedder(header: dict[str, Any], services) -> bool:
    return header.get("embedder") == embedder_of(services)


def _texts_vectors(services, texts: list[str]) -> np.ndarray:
    return np.asarray(services.embedder.embed(texts), dtype=np.float32)


def reembedded(services, records: list[dict[str, Any]]) -> int:
    """Replace, in place, the embedding of every segment, procedure and strategy of ``records`` by the configured
    embedder's; returns how many were made."""
    turns: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r["kind"] == "turn":
            turns[r["segment_id"]].append(r)
    made = 0
    for r in records:
        if r["kind"] == "segment":
            said = sorted(turns.get(r["segment_id"], []), key=lambda t: (t["ts"], t.get("ingest_seq", 0)))
            vectors = _texts_vectors(services, [t["text"] for t in said] or [r["text"]])
            centroid = vectors.mean(axis=0)
            r["embedding"] = [float(x) for x in centroid / (float(np.linalg.norm(centroid)) or 1.0)]
        elif r["kind"] == "procedure":
            r["embedding"] = [float(x) for x in _texts_vectors(services, ["\n".join((r["description"], *r["steps"]))])[0]]
        elif r["kind"] == "strategy":
            r["embedding"] = [float(x) for x in _texts_vectors(services, [r["task"]])[0]]
        else:
            continue
        made += 1
    return made
