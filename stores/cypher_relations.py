"""The Cypher statements of the typed memory relations between two segments of one user (stores.cypher's
rules hold: values only as $parameters, every node matched with its owner). Edge types cannot be $parameters,
so each statement exists once per type, built from the fixed RELATION_EDGES table only."""

from __future__ import annotations

from typing import Final

# Typed memory relations (issue 17, F6) between two segments of one user, next to ASSOCIATED: one edge type
# per kind, each with a score. The kind is the API's word, the edge type its Cypher name. Edge types cannot
# be $parameters, so each statement below exists once per type, built from this fixed table only.
RELATION_KINDS: Final[tuple[str, ...]] = ("continues", "references", "derived_from", "contradicts", "same_topic")
RELATION_EDGES: Final[dict[str, str]] = {kind: kind.upper() for kind in RELATION_KINDS}

# --- memory relations (per edge type; see RELATION_EDGES) -------------------------------------------------
# $user_id, $rows: list of {src, dst, score} (non-empty). Ends that are not this user's segments do not MATCH.
SET_RELATIONS: Final[dict[str, str]] = {
    edge: f"""
UNWIND $rows AS r
MATCH (a:Segment {{id: r.src, user_id: $user_id}})
MATCH (b:Segment {{id: r.dst, user_id: $user_id}})
MERGE (a)-[x:{edge}]->(b)
SET x.score = r.score
"""
    for edge in RELATION_EDGES.values()
}

# $user_id, $rows: list of {src, dst} (non-empty)
DROP_RELATIONS: Final[dict[str, str]] = {
    edge: f"""
UNWIND $rows AS r
MATCH (a:Segment {{id: r.src, user_id: $user_id}})-[x:{edge}]->(b:Segment {{id: r.dst, user_id: $user_id}})
DELETE x
"""
    for edge in RELATION_EDGES.values()
}

# Every relation leaving one of the user's segments, found from the User node by its key (HAD), not by a
# scan of every user's segments. graph_base keeps only those whose other end is the user's too. $user_id
USER_RELATIONS: Final[dict[str, str]] = {
    edge: f"""
MATCH (:User {{id: $user_id}})-[:HAD]->(a:Segment)-[x:{edge}]->(b:Segment)
RETURN a.id AS src, b.id AS dst, x.score AS score, a.user_id AS src_owner, b.user_id AS dst_owner
"""
    for edge in RELATION_EDGES.values()
}

# Relations leaving ($segment_ids as src) or entering ($segment_ids as dst) the given segments. $segment_ids
RELATIONS_FROM: Final[dict[str, str]] = {
    edge: f"""
UNWIND $segment_ids AS sid
MATCH (a:Segment {{id: sid}})-[x:{edge}]->(b:Segment)
RETURN a.id AS src, b.id AS dst, x.score AS score, a.user_id AS src_owner, b.user_id AS dst_owner
"""
    for edge in RELATION_EDGES.values()
}
RELATIONS_TO: Final[dict[str, str]] = {
    edge: f"""
UNWIND $segment_ids AS sid
MATCH (a:Segment)-[x:{edge}]->(b:Segment {{id: sid}})
RETURN a.id AS src, b.id AS dst, x.score AS score, a.user_id AS src_owner, b.user_id AS dst_owner
"""
    for edge in RELATION_EDGES.values()
}

# Ladybug's form of RELATIONS_FROM/TO, one seed per query, every relation type at once: the UNWIND forms
# scanned the Segment table (~2 ms each at 6,000 segments, ten per call, growing with the store); with the
# seed by primary key first (HINT, as LADYBUG_ASSOCIATED_NEIGHBOURS_OF_ONE) ~0.45 ms. ``label`` and the
# type alternation are ladybug's. $segment_id
_RELATION_TYPES = "|".join(RELATION_EDGES.values())
LADYBUG_RELATIONS_FROM_ONE: Final = f"""
MATCH (a:Segment)-[x:{_RELATION_TYPES}]->(b:Segment)
WHERE a.id = $segment_id
HINT (a JOIN x) JOIN b
RETURN a.id AS src, b.id AS dst, label(x) AS edge, x.score AS score, a.user_id AS src_owner, b.user_id AS dst_owner
"""
LADYBUG_RELATIONS_TO_ONE: Final = f"""
MATCH (a:Segment)-[x:{_RELATION_TYPES}]->(b:Segment)
WHERE b.id = $segment_id
HINT (b JOIN x) JOIN a
RETURN a.id AS src, b.id AS dst, label(x) AS edge, x.score AS score, a.user_id AS src_owner, b.user_id AS dst_owner
"""
