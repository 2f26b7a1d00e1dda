"""A faded memory's two vectors: the long-term point keeps the recorded segment's vector (novelty, association,
the graph view), and carries its text at its level re-embedded as ``memory_vector``, which recall for
a reply ranks by (nodes/lifecycle/memory_vector.py)."""

from __future__ import annotations

import numpy as np

from lumina_memory.nodes.lifecycle.memory_vector import MEMORY_VECTOR_FIELD, as_remembered
from lumina_memory.nodes.retrieval.channels import Candidates, segment_channels
from lumina_memory.stores.models import VectorHit
from lumina_memory.stores.settings_recall import Channel

from .test_lifecycle_e2e import USER, ingest, memory_ids, payload, run_until


def _hit(name: str, score: float, memory_vector=None) -> VectorHit:
    fields = {"segment_id": name}
    if memory_vector is not None:
        fields[MEMORY_VECTOR_FIELD] = memory_vector
    return VectorHit(point_id=name, score=score, payload=fields)


def test_a_compressed_memory_ranks_by_its_memory_vector_and_others_by_their_score():
    query = np.array([1.0, 0.0, 0.0])
    hits = [_hit("faded", 0.99, memory_vector=[0.2, 0.98, 0.0]),  # recorded close, remembered far
            _hit("fresh", 0.80),
            _hit("recalled", 0.70, memory_vector=[0.9, 0.1, 0.0])]  # its keywords still match
    assert [h.payload["segment_id"] for h in as_remembered(hits, query)] == ["recalled", "fresh", "faded"]
    # A vector of another size (another embedder's) is not compared: the point's score stands.
    assert as_remembered([_hit("odd", 0.5, memory_vector=[1.0, 0.0])], query)[0].payload["segment_id"] == "odd"


def _dense_ranking(services, qvec: np.ndarray, remembered: bool) -> list[str]:
    """Recall for a reply's dense segment search alone (every segment channel off), by record or as remembered."""
    on = {c.value: False for c in Channel}
    out = Candidates()
    segment_channels(services, None, USER, "", qvec, on, None, out, reply=True, as_remembered=remembered)
    return sorted(out.seg_score, key=lambda s: -out.seg_score[s])


def test_priming_finds_a_faded_memory_by_its_level_text_the_point_keeps_its_record(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100)
    services = mem.services
    ids = memory_ids(services)
    run_until(services, ids["cat"], 3, last=10)
    row = services.stores.archive.memories.rows(USER, [ids["cat"]])[0]
    recorded = {r.segment_id: np.asarray(r.embedding) for r in services.stores.archive.segments(USER)}
    memory_vector = np.asarray(payload(services, ids["cat"])[MEMORY_VECTOR_FIELD])
    assert np.allclose(memory_vector, services.embedder.embed([row["text"]])[0], atol=1e-4)

    # Asked with exactly what was recorded: the record answers first, whatever the memory has faded to.
    query = recorded[ids["cat"]]
    assert _dense_ranking(services, query, remembered=False)[0] == ids["cat"]
    # Recall for a reply compares the memory as it is now: the cat memory counts with the cosine of its
    # keywords, and every point whose recorded text is closer than that comes first.
    closeness = float(memory_vector @ query / (np.linalg.norm(memory_vector) * np.linalg.norm(query)))
    assert closeness < 0.999
    hits = services.stores.vectors.search(USER, query.tolist(), 20, fields=("segment_id", MEMORY_VECTOR_FIELD))
    closer = [h for h in hits if h.payload["segment_id"] != ids["cat"] and h.payload.get(MEMORY_VECTOR_FIELD) is None
              and h.score > closeness]
    remembered = _dense_ranking(services, query, remembered=True)
    assert remembered.index(ids["cat"]) >= len(closer)

    # Asked with the keywords it has faded to, priming puts it first.
    assert _dense_ranking(services, memory_vector, remembered=True)[0] == ids["cat"]
