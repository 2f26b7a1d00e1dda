"""Cypher that reads the whole graph out and writes it back (backups, restore, and the rewrite that
erasure does so deleted nodes leave the file). Same portable subset as stores.cypher."""

from __future__ import annotations

from typing import Final

from .cypher import KNOWLEDGE_LINK_EDGES, RELATION_EDGES

# kind -> statement returning that kind's rows; each row names the user it belongs to (user_id, or None
# for the shared Character nodes).
DUMP: Final[dict[str, str]] = {
    "User": "MATCH (u:User) RETURN u.id AS id, u.id AS user_id",
    "Character": "MATCH (c:Character) RETURN c.id AS id",
    "Segment": (
        "MATCH (s:Segment) RETURN s.id AS id, s.user_id AS user_id, s.summary AS summary, s.ts AS ts, "
        "s.importance AS importance"
    ),
    "Concept": "MATCH (c:Concept) RETURN c.id AS id, c.user_id AS user_id, c.name AS name",
    "Knowledge": (
        "MATCH (k:Knowledge) RETURN k.id AS id, k.user_id AS user_id, k.subject AS subject, "
        "k.attribute AS attribute, k.value AS value, k.polarity AS polarity, k.status AS status"
    ),
    "HAD": "MATCH (u:User)-[:HAD]->(s:Segment) RETURN u.id AS a, s.id AS b, s.user_id AS user_id",
    "PARTICIPATED": (
        "MATCH (c:Character)-[:PARTICIPATED]->(s:Segment) RETURN c.id AS a, s.id AS b, s.user_id AS user_id"
    ),
    "MENTIONS": "MATCH (s:Segment)-[:MENTIONS]->(c:Concept) RETURN s.id AS a, c.id AS b, s.user_id AS user_id",
    "ASSOCIATED": (
        "MATCH (s:Segment)-[x:ASSOCIATED]->(t:Segment) RETURN s.id AS a, t.id AS b, x.score AS score, "
        "s.user_id AS user_id"
    ),
    **{edge: (f"MATCH (s:Segment)-[x:{edge}]->(t:Segment) RETURN s.id AS a, t.id AS b, x.score AS score, "
              "s.user_id AS user_id") for edge in RELATION_EDGES.values()},
    "LEARNED_FROM": "MATCH (k:Knowledge)-[:LEARNED_FROM]->(s:Segment) RETURN k.id AS a, s.id AS b, k.user_id AS user_id",
    "SUPERSEDES": "MATCH (k:Knowledge)-[:SUPERSEDES]->(o:Knowledge) RETURN k.id AS a, o.id AS b, k.user_id AS user_id",
    **{edge: (f"MATCH (k:Knowledge)-[x:{edge}]->(o:Knowledge) RETURN k.id AS a, o.id AS b, x.winner AS winner, "
              "k.user_id AS user_id") for edge in KNOWLEDGE_LINK_EDGES.values()},
}

# kind -> statement taking $rows (the DUMP rows of that kind); nodes before edges (the order of LOAD).
LOAD: Final[dict[str, str]] = {
    "User": "UNWIND $rows AS r MERGE (u:User {id: r.id})",
    "Character": "UNWIND $rows AS r MERGE (c:Character {id: r.id})",
    "Segment": (
        "UNWIND $rows AS r MERGE (s:Segment {id: r.id, user_id: r.user_id}) "
        "SET s.summary = r.summary, s.ts = r.ts, s.importance = r.importance"
    ),
    "Concept": "UNWIND $rows AS r MERGE (c:Concept {id: r.id}) SET c.user_id = r.user_id, c.name = r.name",
    "Knowledge": (
        "UNWIND $rows AS r MERGE (k:Knowledge {id: r.id, user_id: r.user_id}) "
        "SET k.subject = r.subject, k.attribute = r.attribute, k.value = r.value, k.polarity = r.polarity, "
        "k.status = r.status"
    ),
    "HAD": "UNWIND $rows AS r MATCH (u:User {id: r.a}) MATCH (s:Segment {id: r.b}) MERGE (u)-[:HAD]->(s)",
    "PARTICIPATED": (
        "UNWIND $rows AS r MATCH (c:Character {id: r.a}) MATCH (s:Segment {id: r.b}) MERGE (c)-[:PARTICIPATED]->(s)"
    ),
    "MENTIONS": (
        "UNWIND $rows AS r MATCH (s:Segment {id: r.a}) MATCH (c:Concept {id: r.b}) MERGE (s)-[:MENTIONS]->(c)"
    ),
    "ASSOCIATED": (
        "UNWIND $rows AS r MATCH (s:Segment {id: r.a}) MATCH (t:Segment {id: r.b}) "
        "MERGE (s)-[x:ASSOCIATED]->(t) SET x.score = r.score"
    ),
    # Memory relations: both ends must be the row's user's, as set_relations writes them.
    **{edge: ("UNWIND $rows AS r MATCH (s:Segment {id: r.a, user_id: r.user_id}) "
              f"MATCH (t:Segment {{id: r.b, user_id: r.user_id}}) MERGE (s)-[x:{edge}]->(t) SET x.score = r.score")
       for edge in RELATION_EDGES.values()},
    # Knowledge edges: both ends the row's user's, as the graph adapters write them.
    "LEARNED_FROM": ("UNWIND $rows AS r MATCH (k:Knowledge {id: r.a, user_id: r.user_id}) "
                     "MATCH (s:Segment {id: r.b, user_id: r.user_id}) MERGE (k)-[:LEARNED_FROM]->(s)"),
    "SUPERSEDES": ("UNWIND $rows AS r MATCH (k:Knowledge {id: r.a, user_id: r.user_id}) "
                   "MATCH (o:Knowledge {id: r.b, user_id: r.user_id}) MERGE (k)-[:SUPERSEDES]->(o)"),
    **{edge: ("UNWIND $rows AS r MATCH (k:Knowledge {id: r.a, user_id: r.user_id}) "
              f"MATCH (o:Knowledge {{id: r.b, user_id: r.user_id}}) MERGE (k)-[x:{edge}]->(o) SET x.winner = r.winner")
       for edge in KNOWLEDGE_LINK_EDGES.values()},
}

# Everything (a rewrite empties the graph before loading it back). Nodes' edges go with them.
CLEAR: Final[tuple[str, ...]] = tuple(f"MATCH (n:{label}) DETACH DELETE n" for label in ("Knowledge", "Segment", "Concept", "User", "Character"))
