"""The two terms of the notes' spreading activation (A3) that recall's P6 score lacks:

    final_score = similarity + 0.2·0.5^(age_days/30) + 0.1·log(1 + access_count) [+ 0.5·pagerank_score]

(AnimaWorks, 拡散活性化による記憶検索). Recency is P6's β term already. Here:

- **access**: ``recall_access_weight`` × log(1 + the times the memory was recalled), the memory's ``recall_count``
  in the lifecycle's table (what the daily batch counts from recall's flags, F3) — Hebb's rule: a memory used
  often comes back more easily.
- **Personalized PageRank** (``recall_pagerank_weight``) over the graph of the memories around the best ones found:
  the explicit links (the typed relations, F6) and the implicit ones (ASSOCIATED: segments at cosine ≥
  ``association_similarity``, the notes' 0.75), walked ``recall_pagerank_hops`` links from the seeds, the walk
  restarting at the seeds in proportion to their relevance (networkx.pagerank with ``personalization``). Scores are
  divided by the best one, so 1 is the most activated memory. The subgraph is read per recall, from the graph store
  as it stands: nothing is kept that a write or an erasure would have to invalidate.

Both terms are in units of similarity as in the notes, so recall adds them × α (the purpose's relevance weight) to
a candidate turn's score; they order the candidates, they add none.
"""

from __future__ import annotations

import math

import networkx as nx


def access_boost(services, user_id: str, segment_ids, weight: float) -> dict[str, float]:
    """segment -> ``weight`` × log(1 + its recall_count), for the segments with a memory row recalled at least once."""
    table = getattr(services.stores.archive, "memories", None)
    if weight <= 0 or table is None:
        return {}
    rows, _gone = table.recall_view(user_id)
    out = {}
    for seg in segment_ids:
        row = rows.get(seg)
        if row and int(row.get("recall_count") or 0) > 0:
            out[seg] = weight * math.log1p(int(row["recall_count"]))
    return out


def neighbourhood(graph, user_id: str, seeds, hops: int, per_node: int) -> nx.Graph:
    """The memories within ``hops`` links of ``seeds`` and the links between them: typed relations (score as
    weight, at least a small one) and ASSOCIATED links (their cosine)."""
    g = nx.Graph()
    g.add_nodes_from(seeds)
    frontier = list(seeds)
    for _ in range(hops):
        if not frontier:
            break
        new: list[str] = []
        for src, dst, _kind, score in graph.relations(user_id, frontier):
            _link(g, src, dst, max(0.1, min(1.0, float(score))), new)
        for seg in frontier:
            for other, score in graph.associated(user_id, [seg], per_node):
                _link(g, seg, other, max(0.1, min(1.0, float(score))), new)
        frontier = new
    return g


def _link(g: nx.Graph, a: str, b: str, weight: float, new: list[str]) -> None:
    for end in (a, b):
        if end not in g:
            g.add_node(end)
            new.append(end)
    if weight > g.get_edge_data(a, b, {}).get("weight", 0.0):
        g.add_edge(a, b, weight=weight)


def pagerank_boost(graph, user_id: str, seeds: dict[str, float], weight: float, hops: int, per_node: int,
                   keep=None) -> dict[str, float]:
    """segment -> ``weight`` × its Personalized PageRank (restarts at ``seeds`` by their relevance) / the best one;
    ``keep(segment)``: only segments it accepts (the recall's scope)."""
    if weight <= 0 or not seeds:
        return {}
    g = neighbourhood(graph, user_id, list(seeds), hops, per_node)
    if keep is not None:
        g.remove_nodes_from([n for n in list(g) if not keep(n)])
    if g.number_of_edges() == 0:
        return {}  # no links: the walk only restarts at the seeds, which tells nothing beyond their relevance
    personal = {seg: value for seg, value in seeds.items() if seg in g and value > 0}
    if not personal:
        return {}
    rank = nx.pagerank(g, alpha=0.85, personalization=personal, weight="weight")
    top = max(rank.values())
    return {seg: weight * value / top for seg, value in rank.items()}
