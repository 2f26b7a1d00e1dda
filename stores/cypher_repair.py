"""Cypher that finds and removes edges joining two users' nodes (store upkeep's repair, doctor's check).

Every edge of the graph but PARTICIPATED (a Character is shared by every user) joins two nodes that each belong
to one user: the protocol writes them only within one user, so an edge across two users is a leak a bug or a
hand-edited store left, never data. Each edge type has a statement that lists its crossing edges (their ends
and both owners) and one that deletes them; neither takes a parameter. Same portable subset as stores.cypher.
"""

from __future__ import annotations

from typing import Final

from .cypher_knowledge import KNOWLEDGE_LINK_EDGES
from .cypher_relations import RELATION_EDGES

# edge type -> (start label, end label, start owner, end owner)
OWNED_EDGES: Final[dict[str, tuple[str, str, str, str]]] = {
    "HAD": ("User", "Segment", "a.id", "b.user_id"),
    "MENTIONS": ("Segment", "Concept", "a.user_id", "b.user_id"),
    "ASSOCIATED": ("Segment", "Segment", "a.user_id", "b.user_id"),
    **{edge: ("Segment", "Segment", "a.user_id", "b.user_id") for edge in RELATION_EDGES.values()},
    "LEARNED_FROM": ("Knowledge", "Segment", "a.user_id", "b.user_id"),
    "SUPERSEDES": ("Knowledge", "Knowledge", "a.user_id", "b.user_id"),
    **{edge: ("Knowledge", "Knowledge", "a.user_id", "b.user_id") for edge in KNOWLEDGE_LINK_EDGES.values()},
}


def _crossing(edge: str) -> str:
    start, end, start_owner, end_owner = OWNED_EDGES[edge]
    return f"MATCH (a:{start})-[x:{edge}]->(b:{end}) WHERE {start_owner} <> {end_owner}"


CROSS_USER_EDGES: Final[dict[str, str]] = {
    edge: _crossing(edge) + f" RETURN a.id AS a, b.id AS b, {OWNED_EDGES[edge][2]} AS a_user, "
                            f"{OWNED_EDGES[edge][3]} AS b_user"
    for edge in OWNED_EDGES
}
"""Edge type -> rows (a, b, a_user, b_user) of its edges whose ends belong to two users."""

DELETE_CROSS_USER_EDGES: Final[dict[str, str]] = {edge: _crossing(edge) + " DELETE x" for edge in OWNED_EDGES}
"""Edge type -> the statement deleting its edges whose ends belong to two users (the nodes stay)."""
