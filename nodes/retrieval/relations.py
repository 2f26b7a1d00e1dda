"""Related memories recalled to a set depth (F6, the notes' ``get_with_relations``): the memories recall found best
bring the memories they are related to, and those theirs, up to ``relation_traversal_depth`` hops.

Every relation the graph store holds is followed, in both directions: the typed ones (continues, references,
derived_from, contradicts, same_topic; stores.cypher_relations) and the ASSOCIATED links between segments near in
meaning. A fact resting on another is as much a reason to show the other as the reverse, so direction does not
matter here. A memory reached at hop h gets ``recall_relation_share``^h of the relevance of the memory it was
reached from (times the relation's score), so a related memory follows what brought it rather than passing it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Reached:
    segment_id: str
    lent: float  # the relevance it gets, a share of what reached it
    hop: int


def follow(graph, user_id: str, seeds: dict[str, float], depth: int, share: float, per_hop: int,
           scope=None) -> list[Reached]:
    """The memories reached from ``seeds`` (segment -> its relevance) within ``depth`` hops, each once, by the best
    path; at most ``per_hop`` new ones per hop, the most lent first; none outside ``scope`` (scope.Scope), not even
    on the way."""
    seen = dict(seeds)
    frontier = dict(seeds)
    reached: list[Reached] = []
    for hop in range(1, depth + 1):
        if not frontier:
            break
        offers: dict[str, float] = {}

        def offer(seg: str, source: str, score: float) -> None:
            lent = frontier[source] * share * min(1.0, max(0.0, score))
            if seg not in seen and lent > offers.get(seg, 0.0) and (scope is None or scope.keeps_segment(seg)):
                offers[seg] = lent

        for src, dst, _kind, score in graph.relations(user_id, list(frontier)):
            if src in frontier:
                offer(dst, src, score)
            if dst in frontier:
                offer(src, dst, score)
        best_source = max(frontier, key=frontier.get)
        for seg, score in graph.associated(user_id, list(frontier), per_hop):
            offer(seg, best_source, float(score))
        kept = sorted(offers, key=lambda s: -offers[s])[:per_hop]
        frontier = {seg: offers[seg] for seg in kept}
        seen.update(frontier)
        reached += [Reached(seg, offers[seg], hop) for seg in kept]
    return reached


def best_segments(index, rel: np.ndarray, seeds: int) -> dict[str, float]:
    """The ``seeds`` segments of the most relevant turns, each with its best turn's relevance."""
    best: dict[str, float] = {}
    for i in np.argsort(-rel, kind="stable"):
        if rel[i] <= 0 or len(best) >= seeds:
            break
        best.setdefault(index.segment_ids[index.segment_of[i]], float(rel[i]))
    return best


def lend_to_related(index, rel: np.ndarray, tiers: dict, graph, user_id: str, depth: int, share: float,
                    seeds: int, per_hop: int, scope=None) -> np.ndarray:
    """``rel`` with the turns of the memories related to the ``seeds`` best segments lent their share (a turn that
    matches the query on its own keeps its lead: it gets the share, the others half of it); memories outside the
    recall's ``scope`` are neither followed nor lent to."""
    if depth <= 0 or not rel.any():
        return rel
    best = best_segments(index, rel, seeds)
    out = rel.copy()
    for found in follow(graph, user_id, best, depth, share, per_hop, scope):
        for i in index.members.get(found.segment_id, ()):
            out[i] += found.lent * (1.0 if rel[i] > 0 else 0.5)
            tiers[i].add("graph")
    return out
