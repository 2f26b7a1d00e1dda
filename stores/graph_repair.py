"""Repair of the graph's user boundary (mixed into CypherGraph): edges joining two users' nodes found and
removed (stores.cypher_repair), for store upkeep and doctor."""

from __future__ import annotations

from typing import Any

from .cypher_repair import CROSS_USER_EDGES, DELETE_CROSS_USER_EDGES


class GraphRepair:
    """``CypherGraph``'s repair of edges across users."""

    def cross_user_edges(self, *, delete: bool = False) -> list[dict[str, Any]]:
        """Every edge whose two ends belong to two users, as {kind, a, b, a_user, b_user} (kind: the edge type);
        with ``delete`` they are removed in the same unit of work as the read (their nodes and every other edge
        stay). Such an edge is never written by the protocol: this finds what a bug or a hand edit left."""
        with self._exclusive():  # type: ignore[attr-defined]
            found = [{"kind": edge, **row} for edge, query in CROSS_USER_EDGES.items()
                     for row in self._read(query, {})]  # type: ignore[attr-defined]
            if delete and found:
                kinds = sorted({row["kind"] for row in found})
                self._write([(DELETE_CROSS_USER_EDGES[kind], {}) for kind in kinds])  # type: ignore[attr-defined]
        return sorted(found, key=lambda r: (r["kind"], str(r["a"]), str(r["b"])))
