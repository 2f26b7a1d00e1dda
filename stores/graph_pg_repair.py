"""SQL forms of stores.cypher_repair's statements over the graph's PostgreSQL tables (stores.graph_pg_sql):
edges whose two ends belong to two users, listed and deleted.

HAD has no table here (a segment's ``user_id`` is its owner's edge), so it never crosses users: its forms read
and delete nothing. The memory relations and the links between facts share a table each, their edge type in
``kind`` (a fixed name from the edge tables, never input).
"""

from __future__ import annotations

from typing import Final

from .cypher_knowledge import KNOWLEDGE_LINK_EDGES
from .cypher_relations import RELATION_EDGES
from .cypher_repair import CROSS_USER_EDGES, DELETE_CROSS_USER_EDGES
from .graph_pg_sql import Handler, _none

# edge type -> (table, start column, start node table, end column, end node table, extra condition)
_TABLES: Final[dict[str, tuple[str, str, str, str, str, str]]] = {
    "MENTIONS": ("graph_mentions", "segment_id", "graph_segments", "concept_id", "graph_concepts", ""),
    "ASSOCIATED": ("graph_associated", "src", "graph_segments", "dst", "graph_segments", ""),
    **{edge: ("graph_relations", "src", "graph_segments", "dst", "graph_segments", f" AND x.kind = '{edge}'")
       for edge in RELATION_EDGES.values()},
    "LEARNED_FROM": ("graph_learned_from", "item_id", "graph_knowledge", "segment_id", "graph_segments", ""),
    "SUPERSEDES": ("graph_supersedes", "src", "graph_knowledge", "dst", "graph_knowledge", ""),
    **{edge: ("graph_knowledge_links", "src", "graph_knowledge", "dst", "graph_knowledge", f" AND x.kind = '{edge}'")
       for edge in KNOWLEDGE_LINK_EDGES.values()},
}


def _find(edge: str) -> str:
    table, a_col, a_table, b_col, b_table, extra = _TABLES[edge]
    return (f"SELECT a.id AS a, b.id AS b, a.user_id AS a_user, b.user_id AS b_user FROM {table} x "
            f"JOIN {a_table} a ON a.id = x.{a_col} JOIN {b_table} b ON b.id = x.{b_col} "
            f"WHERE a.user_id <> b.user_id{extra} ORDER BY a.id, b.id")


def _delete(edge: str) -> str:
    table, a_col, a_table, b_col, b_table, extra = _TABLES[edge]
    return (f"DELETE FROM {table} x USING {a_table} a, {b_table} b WHERE a.id = x.{a_col} AND b.id = x.{b_col} "
            f"AND a.user_id <> b.user_id{extra}")


_NO_HAD = "SELECT NULL::VARCHAR AS a, NULL::VARCHAR AS b, NULL::VARCHAR AS a_user, NULL::VARCHAR AS b_user WHERE false"

REPAIR_READS: dict[str, Handler] = {
    CROSS_USER_EDGES["HAD"]: _none(_NO_HAD),
    **{CROSS_USER_EDGES[edge]: _none(_find(edge)) for edge in _TABLES},
}
REPAIR_WRITES: dict[str, Handler] = {
    DELETE_CROSS_USER_EDGES["HAD"]: _none("DELETE FROM graph_users WHERE false"),
    **{DELETE_CROSS_USER_EDGES[edge]: _none(_delete(edge)) for edge in _TABLES},
}

FIND_SQL: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    edge: ((_TABLES[edge][0], _TABLES[edge][2], _TABLES[edge][4]), _find(edge)) for edge in _TABLES}
"""Edge type -> (the tables its read needs, the read): doctor reads them where the tables exist."""
