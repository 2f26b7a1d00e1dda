"""The Cypher statements of knowledge items: Knowledge nodes, their LEARNED_FROM segments and SUPERSEDES
edges (stores.cypher's rules hold: values only as $parameters, every node matched with its owner)."""

from __future__ import annotations

from typing import Final

# --- knowledge items (issue 18) -----------------------------------------------------------------------------
# Who owns each of $item_ids: a row per existing Knowledge node (item ids derive from their user's turns, so a
# clash is a caller's bug, refused before a MERGE could hijack it or hit ladybug's primary key).
KNOWLEDGE_OWNERS_OF_MANY: Final = """
UNWIND $item_ids AS kid
MATCH (k:Knowledge {id: kid})
RETURN k.id AS id, k.user_id AS user_id
"""

# $user_id, $items: list of {id, subject, attribute, value, polarity, status} (non-empty)
UPSERT_KNOWLEDGE: Final = """
UNWIND $items AS it
MERGE (k:Knowledge {id: it.id, user_id: $user_id})
SET k.subject = it.subject, k.attribute = it.attribute, k.value = it.value, k.polarity = it.polarity,
    k.status = it.status
"""

# The LEARNED_FROM edges the items have now. $user_id, $item_ids
KNOWLEDGE_SOURCES_OF: Final = """
UNWIND $item_ids AS kid
MATCH (k:Knowledge {id: kid, user_id: $user_id})-[:LEARNED_FROM]->(s:Segment)
RETURN k.id AS id, s.id AS segment_id
"""

# $user_id, $rows: list of {id, segment_id} (non-empty). A segment that is not this user's (or not in the graph
# yet) does not MATCH: no edge crosses users.
ADD_LEARNED_FROM: Final = """
UNWIND $rows AS r
MATCH (k:Knowledge {id: r.id, user_id: $user_id})
MATCH (s:Segment {id: r.segment_id, user_id: $user_id})
MERGE (k)-[:LEARNED_FROM]->(s)
"""

# $user_id, $rows: list of {id, segment_id} (non-empty)
DROP_LEARNED_FROM: Final = """
UNWIND $rows AS r
MATCH (k:Knowledge {id: r.id, user_id: $user_id})-[x:LEARNED_FROM]->(s:Segment {id: r.segment_id})
DELETE x
"""

# SUPERSEDES edges leaving ($..._FROM) or entering ($..._TO) the items. $user_id, $item_ids
KNOWLEDGE_SUPERSEDES_FROM: Final = """
UNWIND $item_ids AS kid
MATCH (a:Knowledge {id: kid, user_id: $user_id})-[:SUPERSEDES]->(b:Knowledge)
RETURN a.id AS src, b.id AS dst
"""
KNOWLEDGE_SUPERSEDES_TO: Final = """
UNWIND $item_ids AS kid
MATCH (a:Knowledge)-[:SUPERSEDES]->(b:Knowledge {id: kid, user_id: $user_id})
RETURN a.id AS src, b.id AS dst
"""

# $user_id, $rows: list of {src, dst} (non-empty); both ends must be this user's items.
ADD_SUPERSEDES: Final = """
UNWIND $rows AS r
MATCH (a:Knowledge {id: r.src, user_id: $user_id})
MATCH (b:Knowledge {id: r.dst, user_id: $user_id})
MERGE (a)-[:SUPERSEDES]->(b)
"""
DROP_SUPERSEDES: Final = """
UNWIND $rows AS r
MATCH (a:Knowledge {id: r.src})-[x:SUPERSEDES]->(b:Knowledge {id: r.dst, user_id: $user_id})
DELETE x
"""

# Reads of a user's knowledge in the graph (inspection, tests). $user_id
KNOWLEDGE_NODES_OF_USER: Final = """
MATCH (k:Knowledge {user_id: $user_id})
RETURN k.id AS id, k.subject AS subject, k.attribute AS attribute, k.value AS value, k.polarity AS polarity,
    k.status AS status
"""
KNOWLEDGE_SOURCES_OF_USER: Final = """
MATCH (k:Knowledge {user_id: $user_id})-[:LEARNED_FROM]->(s:Segment)
RETURN k.id AS id, s.id AS segment_id, s.user_id AS owner
"""
KNOWLEDGE_SUPERSEDES_OF_USER: Final = """
MATCH (a:Knowledge {user_id: $user_id})-[:SUPERSEDES]->(b:Knowledge)
RETURN a.id AS src, b.id AS dst, b.user_id AS owner
"""

# The items learned from these segments, read before the segments go. $user_id, $segment_ids
KNOWLEDGE_OF_SEGMENTS: Final = """
UNWIND $segment_ids AS sid
MATCH (s:Segment {id: sid, user_id: $user_id})<-[:LEARNED_FROM]-(k:Knowledge)
RETURN DISTINCT k.id AS id
"""

# A forgotten item's node and its edges. $user_id, $item_ids
DELETE_KNOWLEDGE: Final = """
UNWIND $item_ids AS kid
MATCH (k:Knowledge {id: kid, user_id: $user_id})
DETACH DELETE k
"""

# Of $item_ids, the user's items no segment supports any more: an item left without sources goes (its
# SUPERSEDES edges with it). $user_id, $item_ids
DELETE_UNSOURCED_KNOWLEDGE: Final = """
UNWIND $item_ids AS kid
MATCH (k:Knowledge {id: kid, user_id: $user_id})
OPTIONAL MATCH (k)-[m:LEARNED_FROM]->(:Segment)
WITH k, count(m) AS uses
WHERE uses = 0
DETACH DELETE k
"""

DELETE_USER_KNOWLEDGE: Final = "MATCH (k:Knowledge {user_id: $user_id}) DETACH DELETE k"

# --- links between two facts of one user (F6): derived_from and contradicts -----------------------------------
# One edge type per kind (edge types cannot be $parameters), each with ``winner``: for contradicts the item id of
# the fact that won ("" when both hold, each in its context), for derived_from always "". Named apart from the
# segments' DERIVED_FROM / CONTRADICTS: ladybug fixes a relationship table's end labels.
KNOWLEDGE_LINK_KINDS: Final[tuple[str, ...]] = ("derived_from", "contradicts")
KNOWLEDGE_LINK_EDGES: Final[dict[str, str]] = {"derived_from": "FACT_DERIVED_FROM", "contradicts": "FACT_CONTRADICTS"}

# $user_id, $rows: list of {src, dst, winner} (non-empty); both ends must be this user's items.
ADD_KNOWLEDGE_LINKS: Final[dict[str, str]] = {
    edge: f"""
UNWIND $rows AS r
MATCH (a:Knowledge {{id: r.src, user_id: $user_id}})
MATCH (b:Knowledge {{id: r.dst, user_id: $user_id}})
MERGE (a)-[x:{edge}]->(b)
SET x.winner = r.winner
"""
    for edge in KNOWLEDGE_LINK_EDGES.values()
}
# $user_id, $rows: list of {src, dst} (non-empty)
DROP_KNOWLEDGE_LINKS: Final[dict[str, str]] = {
    edge: f"""
UNWIND $rows AS r
MATCH (a:Knowledge {{id: r.src}})-[x:{edge}]->(b:Knowledge {{id: r.dst, user_id: $user_id}})
DELETE x
"""
    for edge in KNOWLEDGE_LINK_EDGES.values()
}
# Links leaving ($..._FROM) or entering ($..._TO) the items. $user_id, $item_ids
KNOWLEDGE_LINKS_FROM: Final[dict[str, str]] = {
    edge: f"""
UNWIND $item_ids AS kid
MATCH (a:Knowledge {{id: kid, user_id: $user_id}})-[x:{edge}]->(b:Knowledge)
RETURN a.id AS src, b.id AS dst, x.winner AS winner
"""
    for edge in KNOWLEDGE_LINK_EDGES.values()
}
KNOWLEDGE_LINKS_TO: Final[dict[str, str]] = {
    edge: f"""
UNWIND $item_ids AS kid
MATCH (a:Knowledge)-[x:{edge}]->(b:Knowledge {{id: kid, user_id: $user_id}})
RETURN a.id AS src, b.id AS dst, x.winner AS winner
"""
    for edge in KNOWLEDGE_LINK_EDGES.values()
}
# Every link leaving one of the user's items. $user_id
KNOWLEDGE_LINKS_OF_USER: Final[dict[str, str]] = {
    edge: f"""
MATCH (a:Knowledge {{user_id: $user_id}})-[x:{edge}]->(b:Knowledge)
RETURN a.id AS src, b.id AS dst, x.winner AS winner, b.user_id AS owner
"""
    for edge in KNOWLEDGE_LINK_EDGES.values()
}
