"""A user's slice of the associative graph, and how recall's graph channel walked it — for notebooks.

Read only through the tier protocols (archive ``segments``, graph ``concepts_of`` / ``associated`` /
``segments_for_concepts``, vectors ``search``), so it works on ladybug and Neo4j alike and never sees Cypher.
Plain data out (no networkx here): the notebook decides how to draw it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lumina_memory.nodes.services import Services
from lumina_memory.nodes.text.tokenize import nouns


@dataclass
class Subgraph:
    """Segment and Concept nodes of one user with their MENTIONS, ASSOCIATED and PARTICIPATED edges."""

    segments: list[dict[str, Any]] = field(default_factory=list)
    """Oldest first: segment_id, label (S1, S2, ...), summary, start_ts, importance, characters."""
    concepts: list[str] = field(default_factory=list)
    mentions: list[tuple[str, str]] = field(default_factory=list)
    """(segment_id, concept)"""
    associated: list[tuple[str, str, float]] = field(default_factory=list)
    """(segment_id, segment_id, score), each undirected pair once."""
    participated: list[tuple[str, str]] = field(default_factory=list)
    """(character, segment_id)"""

    def label(self, segment_id: str) -> str:
        return next((s["label"] for s in self.segments if s["segment_id"] == segment_id), segment_id[:8])


def user_subgraph(services: Services, user_id: str, limit: int = 200) -> Subgraph:
    """The user's newest ``limit`` segments (as the archive lists them) and what the graph links them to."""
    stores = services.stores
    records = sorted(stores.archive.segments(user_id, limit=limit), key=lambda r: r.start_ts)
    view = Subgraph()
    seg_ids = [r.segment_id for r in records]
    for n, record in enumerate(records, 1):
        view.segments.append({
            "segment_id": record.segment_id, "label": f"S{n}", "summary": record.summary,
            "start_ts": record.start_ts, "importance": record.importance, "characters": list(record.characters),
        })
        view.participated += [(c, record.segment_id) for c in record.characters]
    concepts = stores.graph.concepts_of(user_id, seg_ids) if seg_ids else {}
    seen: dict[str, None] = {}
    for seg_id in seg_ids:
        for concept in concepts.get(seg_id, []):
            view.mentions.append((seg_id, concept))
            seen.setdefault(concept)
    view.concepts = list(seen)
    pairs: dict[tuple[str, str], float] = {}
    known = set(seg_ids)
    for seg_id in seg_ids:
        for other, score in stores.graph.associated(user_id, [seg_id], limit=len(seg_ids) or 1):
            if other in known:
                key = (min(seg_id, other), max(seg_id, other))
                pairs[key] = max(score, pairs.get(key, float("-inf")))
    view.associated = [(a, b, s) for (a, b), s in sorted(pairs.items(), key=lambda kv: -kv[1])]
    return view


def explain_graph_channel(services: Services, user_id: str, query: str) -> dict[str, Any]:
    """What recall's graph channel (nodes.retrieval.recall) does for ``query``, step by step.

    Mirrors it with the same settings and store calls: the query's nouns select segments that MENTION
    them (signal = share of the query's concepts matched); the top three long-term vector hits seed a
    spread over ASSOCIATED edges (signal = 0.5 x edge score). Returns the query's concepts, the seeds,
    and every segment reached with how and how strongly.
    """
    settings = services.settings
    stores = services.stores
    concepts = list(dict.fromkeys(nouns(query)))
    reached: dict[str, dict[str, Any]] = {}

    def note(seg_id: str, via: str, signal: float) -> None:
        item = reached.setdefault(seg_id, {"segment_id": seg_id, "via": [], "signal": 0.0})
        item["via"].append(via)
        item["signal"] = max(item["signal"], signal)

    if concepts:
        for seg_id, n in stores.graph.segments_for_concepts(user_id, concepts, settings.retrieve_graph):
            note(seg_id, f"mentions {n}/{len(concepts)} concepts", n / len(concepts))
    qvec = services.embedder.embed([query])[0]
    hits = stores.vectors.search(user_id, qvec.tolist(), settings.retrieve_semantic)
    seeds = [(h.payload["segment_id"], round(h.score, 4)) for h in hits[:3]]
    if seeds:
        for seg_id, score in stores.graph.associated(user_id, [s for s, _ in seeds], settings.retrieve_graph):
            note(seg_id, f"associated to a seed ({score:.2f})", 0.5 * score)
    return {
        "query": query,
        "concepts": concepts,
        "seeds": seeds,
        "reached": sorted(reached.values(), key=lambda r: -r["signal"]),
    }
