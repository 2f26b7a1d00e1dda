"""Every Cypher statement of the associative graph, shared by the ladybug and Neo4j adapters.

Rules every statement here follows:
- values travel only as ``$parameters``; no id, name or text is ever formatted into a statement;
- only the subset that ladybug, Neo4j and FalkorDB (our Neo4j stand-in in tests) all run the same way:
  MATCH / MERGE / UNWIND / SET / DELETE, ``IN $list``, ``count``/``max``, ``ORDER BY ... LIMIT $limit``;
- every node is matched with its owner (``user_id``) as well as its id, so one user's call can never
  reach another user's segments or concepts, even if an id were reused;
- writes are idempotent: MERGE on deterministic ids, SET of plain properties.

Schema statements are not portable and live at the bottom, one list per backend. The typed memory relations'
statements are in stores.cypher_relations and the knowledge items' in stores.cypher_knowledge; every statement
is read here as ``cypher.NAME``.
"""

from __future__ import annotations

from typing import Final

from .cypher_knowledge import (  # noqa: F401 - the adapters read every statement as cypher.NAME
    ADD_LEARNED_FROM, ADD_SUPERSEDES, DELETE_KNOWLEDGE, DELETE_UNSOURCED_KNOWLEDGE, DELETE_USER_KNOWLEDGE,
    DROP_LEARNED_FROM, DROP_SUPERSEDES, KNOWLEDGE_NODES_OF_USER, KNOWLEDGE_OF_SEGMENTS, KNOWLEDGE_OWNERS_OF_MANY,
    KNOWLEDGE_SOURCES_OF, KNOWLEDGE_SOURCES_OF_USER, KNOWLEDGE_SUPERSEDES_FROM, KNOWLEDGE_SUPERSEDES_OF_USER,
    KNOWLEDGE_SUPERSEDES_TO, UPSERT_KNOWLEDGE,
)
from .cypher_knowledge import (  # noqa: F401 - links between facts (F6), read as cypher.NAME too
    ADD_KNOWLEDGE_LINKS, DROP_KNOWLEDGE_LINKS, KNOWLEDGE_LINK_EDGES, KNOWLEDGE_LINK_KINDS, KNOWLEDGE_LINKS_FROM,
    KNOWLEDGE_LINKS_OF_USER, KNOWLEDGE_LINKS_TO,
)
from .cypher_relations import (  # noqa: F401 - the adapters read every statement as cypher.NAME
    DROP_RELATIONS, LADYBUG_RELATIONS_FROM_ONE, LADYBUG_RELATIONS_TO_ONE, RELATIONS_FROM, RELATIONS_TO,
    RELATION_EDGES, RELATION_KINDS, SET_RELATIONS, USER_RELATIONS,
)

NODE_LABELS: Final[tuple[str, ...]] = ("User", "Character", "Segment", "Concept", "Knowledge")

# Knowledge items (issue 18, A4): a Knowledge node per item of the archive's knowledge table, LEARNED_FROM each
# Segment (episode) it came from, SUPERSEDES from a newer item to the one it ended (history kept), and the links
# between facts (FACT_DERIVED_FROM, FACT_CONTRADICTS: stores.cypher_knowledge).
KNOWLEDGE_EDGES: Final[tuple[str, ...]] = ("LEARNED_FROM", "SUPERSEDES", *KNOWLEDGE_LINK_EDGES.values())

EDGE_TYPES: Final[tuple[str, ...]] = ("HAD", "PARTICIPATED", "MENTIONS", "ASSOCIATED", *RELATION_EDGES.values(),
                                      *KNOWLEDGE_EDGES)

# --- health checks ----------------------------------------------------------------------------------
# Segment nodes per owner, for doctor's and stats' comparison of the graph with the archive (every user at once).
SEGMENTS_PER_USER: Final = "MATCH (n:Segment) RETURN n.user_id AS user_id, count(n) AS n"

# --- writes ------------------------------------------------------------------------------------------
# $segment_id, $user_id, $summary, $ts, $importance
UPSERT_SEGMENT: Final = """
MERGE (u:User {id: $user_id})
MERGE (s:Segment {id: $segment_id, user_id: $user_id})
SET s.summary = $summary, s.ts = $ts, s.importance = $importance
MERGE (u)-[:HAD]->(s)
"""

# A segment that does not exist yet has no edges, so its edges are CREATEd: ladybug's MERGE of a relationship
# checks existing edges at a cost that grows with the table (3 ms per segment on an empty graph, 14 ms by 8,000
# segments), CREATE stays flat. Only sent while the caller holds the graph's write lock after checking that the
# segment is new (CypherGraph.create_new_edges); the parameters are those of the MERGE forms.
NEW_SEGMENT: Final = """
MERGE (u:User {id: $user_id})
CREATE (s:Segment {id: $segment_id, user_id: $user_id, summary: $summary, ts: $ts, importance: $importance})
CREATE (u)-[:HAD]->(s)
"""

NEW_PARTICIPANTS: Final = """
MATCH (s:Segment {id: $segment_id, user_id: $user_id})
UNWIND $characters AS cid
MERGE (c:Character {id: cid})
CREATE (c)-[:PARTICIPATED]->(s)
"""

NEW_MENTIONS: Final = """
MATCH (s:Segment {id: $segment_id, user_id: $user_id})
UNWIND $concepts AS cc
MERGE (c:Concept {id: cc.id})
SET c.user_id = $user_id, c.name = cc.name
CREATE (s)-[:MENTIONS]->(c)
"""

# The same for every new segment of one batch (a transcript batch closes several), one statement each kind:
# 5 statements per segment became 5 per batch, ~3x faster at 100,000 segments. Only for segments the
# owner check found new, under the write lock, like the forms above. A concept named by two segments of
# the batch is MERGEd once (later rows see the node earlier rows made).
# $user_id, $segments: list of {id, summary, ts, importance}
NEW_SEGMENTS: Final = """
MERGE (u:User {id: $user_id})
WITH u
UNWIND $segments AS sg
CREATE (s:Segment {id: sg.id, user_id: $user_id, summary: sg.summary, ts: sg.ts, importance: sg.importance})
CREATE (u)-[:HAD]->(s)
"""

# $user_id, $rows: list of {segment_id, character} (non-empty)
NEW_PARTICIPANTS_OF_MANY: Final = """
UNWIND $rows AS r
MATCH (s:Segment {id: r.segment_id, user_id: $user_id})
MERGE (c:Character {id: r.character})
CREATE (c)-[:PARTICIPATED]->(s)
"""

# $user_id, $rows: list of {segment_id, id, name} (non-empty)
NEW_MENTIONS_OF_MANY: Final = """
UNWIND $rows AS r
MATCH (s:Segment {id: r.segment_id, user_id: $user_id})
MERGE (c:Concept {id: r.id})
SET c.user_id = $user_id, c.name = r.name
CREATE (s)-[:MENTIONS]->(c)
"""

# $user_id, $rows: list of {segment_id, id, score} (non-empty). As LINK_SEGMENTS: a neighbour that is not
# this user's segment does not MATCH.
LINK_MANY_SEGMENTS: Final = """
UNWIND $rows AS r
MATCH (a:Segment {id: r.segment_id, user_id: $user_id})
MATCH (b:Segment {id: r.id, user_id: $user_id})
MERGE (a)-[x:ASSOCIATED]->(b)
SET x.score = r.score
"""

# A re-upsert states the segment's whole truth: edges to characters/concepts no longer listed go away,
# edges still listed are left untouched (no delete-and-recreate churn on a plain retry).
# $segment_id, $user_id, $characters (list of ids, may be empty)
DROP_STALE_PARTICIPANTS: Final = """
MATCH (c:Character)-[r:PARTICIPATED]->(s:Segment {id: $segment_id, user_id: $user_id})
WHERE NOT (c.id IN $characters)
DELETE r
"""

# $segment_id, $user_id, $characters (non-empty)
ADD_PARTICIPANTS: Final = """
MATCH (s:Segment {id: $segment_id, user_id: $user_id})
UNWIND $characters AS cid
MERGE (c:Character {id: cid})
MERGE (c)-[:PARTICIPATED]->(s)
"""

# $segment_id, $user_id, $concept_ids (may be empty)
DROP_STALE_MENTIONS: Final = """
MATCH (s:Segment {id: $segment_id, user_id: $user_id})-[r:MENTIONS]->(c:Concept)
WHERE NOT (c.id IN $concept_ids)
DELETE r
"""

# $segment_id, $user_id, $concepts: list of {id, name} (non-empty; id = ids.concept_id(user, name))
ADD_MENTIONS: Final = """
MATCH (s:Segment {id: $segment_id, user_id: $user_id})
UNWIND $concepts AS cc
MERGE (c:Concept {id: cc.id})
SET c.user_id = $user_id, c.name = cc.name
MERGE (s)-[:MENTIONS]->(c)
"""

# $segment_id, $user_id, $neighbours: list of {id, score}. Neighbours that are not this user's
# segments simply do not MATCH, so no edge can cross users.
LINK_SEGMENTS: Final = """
MATCH (a:Segment {id: $segment_id, user_id: $user_id})
UNWIND $neighbours AS nb
MATCH (b:Segment {id: nb.id, user_id: $user_id})
MERGE (a)-[r:ASSOCIATED]->(b)
SET r.score = nb.score
"""

# --- deleting single segments (a forgotten memory) ----------------------------------------------------------
# $user_id, $segment_ids: the concepts these segments mention (read before they go, to tidy up after).
CONCEPT_IDS_OF: Final = """
UNWIND $segment_ids AS sid
MATCH (s:Segment {id: sid, user_id: $user_id})-[:MENTIONS]->(c:Concept)
RETURN DISTINCT c.id AS id
"""

# $user_id, $segment_ids
COUNT_SEGMENTS_OF: Final = """
UNWIND $segment_ids AS sid
MATCH (s:Segment {id: sid, user_id: $user_id})
RETURN count(s) AS n
"""

# DETACH DELETE takes every edge of the segments with them: HAD, PARTICIPATED, MENTIONS, ASSOCIATED and
# the relations. $user_id, $segment_ids
DELETE_SEGMENTS_OF: Final = """
UNWIND $segment_ids AS sid
MATCH (s:Segment {id: sid, user_id: $user_id})
DETACH DELETE s
"""

# Of $concept_ids, the user's concepts no segment mentions any more: a forgotten memory's names should not
# outlive it when nothing else said them. $user_id, $concept_ids
DELETE_UNMENTIONED_CONCEPTS: Final = """
UNWIND $concept_ids AS cid
MATCH (c:Concept {id: cid, user_id: $user_id})
OPTIONAL MATCH (c)<-[m:MENTIONS]-(:Segment)
WITH c, count(m) AS uses
WHERE uses = 0
DETACH DELETE c
"""

# DETACH DELETE also removes every HAD/PARTICIPATED/MENTIONS/ASSOCIATED/relation edge of these nodes;
# Character nodes are shared by all users and stay. $user_id
DELETE_USER_CONCEPTS: Final = "MATCH (c:Concept {user_id: $user_id}) DETACH DELETE c"
DELETE_USER_SEGMENTS: Final = "MATCH (s:Segment {user_id: $user_id}) DETACH DELETE s"
DELETE_USER_NODE: Final = "MATCH (u:User {id: $user_id}) DETACH DELETE u"

# --- reads -------------------------------------------------------------------------------------------
# Rows > 0 when $segment_id is already taken by another user: upserting would hijack it (Neo4j/FalkorDB)
# or hit a primary-key violation (ladybug), so the caller refuses first with a clear error.
# Who owns segment $segment_id: no row for a new segment, else its user (a clash shows another).
SEGMENT_OWNERS: Final = """
MATCH (s:Segment {id: $segment_id})
RETURN s.user_id AS user_id
"""

# Who owns each of $segment_ids: a row per existing segment.
SEGMENT_OWNERS_OF_MANY: Final = """
UNWIND $segment_ids AS sid
MATCH (s:Segment {id: sid})
RETURN s.id AS id, s.user_id AS user_id
"""

SEGMENT_OWNED_BY_OTHER: Final = """
MATCH (s:Segment {id: $segment_id})
WHERE s.user_id <> $user_id
RETURN count(s) AS n
"""

# The seed segments by primary key and their ASSOCIATED neighbours, undirected so a link made from either
# end counts. graph_base filters owners, drops the seeds and keeps each neighbour's best score: in Cypher
# (max() over IN $ids, or NOT IN) ladybug planned a scan of every segment, 4 ms at 1,000 segments per user
# against ~1 ms for this.
# $segment_ids
ASSOCIATED_NEIGHBOURS: Final = """
UNWIND $segment_ids AS sid
MATCH (s:Segment {id: sid})-[r:ASSOCIATED]-(n:Segment)
RETURN n.id AS id, n.user_id AS owner, r.score AS score
"""

# Ladybug's form of ASSOCIATED_NEIGHBOURS, one seed per query: left to itself its planner hash-joined the
# seed's edges with a scan of the whole Segment table — every user's segments — 7-9 ms for 3 seeds at
# 3,000 segments with their links or at 40,000 without, growing with the store. The HINT (ladybug's own
# syntax, not portable) fixes the order: the seed by primary key, its edges, then their other ends;
# ~0.3-0.4 ms per seed at both sizes. HINT cannot follow an UNWIND (a correlated pattern), hence one
# query per seed.
# $segment_id
LADYBUG_ASSOCIATED_NEIGHBOURS_OF_ONE: Final = """
MATCH (s:Segment)-[r:ASSOCIATED]-(n:Segment)
WHERE s.id = $segment_id
HINT (s JOIN r) JOIN n
RETURN n.id AS id, n.user_id AS owner, r.score AS score
"""

# $concept_id: one concept by its primary key (a per-user uuid5), and at most $fan of the segments that
# mention it. A hub concept (a name said in every other segment) spreads little activation to each of its
# segments anyway (the fan effect), and reading all of them cost more than the rest of the query; sorting
# them first cost as much again, so which $fan is the engine's choice. One query per concept: with a list
# of ids (IN or UNWIND) ladybug scanned or joined the wrong way round, 5-10 ms instead of ~1 ms each.
SEGMENTS_FOR_CONCEPT: Final = """
MATCH (c:Concept {id: $concept_id})<-[:MENTIONS]-(s:Segment)
RETURN s.id AS id, s.user_id AS owner, s.importance AS importance, s.ts AS ts
LIMIT $fan
"""

# $user_id, $segment_ids
CONCEPTS_OF: Final = """
MATCH (s:Segment)-[:MENTIONS]->(c:Concept)
WHERE s.user_id = $user_id AND s.id IN $segment_ids
RETURN s.id AS id, c.name AS name
ORDER BY id ASC, name ASC
"""

# One statement per label/type (each returns a single row {n}); no label functions, which differ
# between engines. No parameters.
COUNT_NODES_ALL: Final[dict[str, str]] = {
    "User": "MATCH (n:User) RETURN count(n) AS n",
    "Character": "MATCH (n:Character) RETURN count(n) AS n",
    "Segment": "MATCH (n:Segment) RETURN count(n) AS n",
    "Concept": "MATCH (n:Concept) RETURN count(n) AS n",
    "Knowledge": "MATCH (n:Knowledge) RETURN count(n) AS n",
}
COUNT_EDGES_ALL: Final[dict[str, str]] = {
    "HAD": "MATCH (:User)-[r:HAD]->(:Segment) RETURN count(r) AS n",
    "PARTICIPATED": "MATCH (:Character)-[r:PARTICIPATED]->(:Segment) RETURN count(r) AS n",
    "MENTIONS": "MATCH (:Segment)-[r:MENTIONS]->(:Concept) RETURN count(r) AS n",
    "ASSOCIATED": "MATCH (:Segment)-[r:ASSOCIATED]->(:Segment) RETURN count(r) AS n",
    **{edge: f"MATCH (:Segment)-[r:{edge}]->(:Segment) RETURN count(r) AS n" for edge in RELATION_EDGES.values()},
    "LEARNED_FROM": "MATCH (:Knowledge)-[r:LEARNED_FROM]->(:Segment) RETURN count(r) AS n",
    "SUPERSEDES": "MATCH (:Knowledge)-[r:SUPERSEDES]->(:Knowledge) RETURN count(r) AS n",
    **{edge: f"MATCH (:Knowledge)-[r:{edge}]->(:Knowledge) RETURN count(r) AS n" for edge in KNOWLEDGE_LINK_EDGES.values()},
}

# A user's share: their own nodes, the characters who took part in their segments, and every edge
# touching one of their segments. $user_id
COUNT_NODES_USER: Final[dict[str, str]] = {
    "User": "MATCH (n:User {id: $user_id}) RETURN count(n) AS n",
    "Character": (
        "MATCH (c:Character)-[:PARTICIPATED]->(:Segment {user_id: $user_id}) RETURN count(DISTINCT c.id) AS n"
    ),
    "Segment": "MATCH (n:Segment {user_id: $user_id}) RETURN count(n) AS n",
    "Concept": "MATCH (n:Concept {user_id: $user_id}) RETURN count(n) AS n",
    "Knowledge": "MATCH (n:Knowledge {user_id: $user_id}) RETURN count(n) AS n",
}
COUNT_EDGES_USER: Final[dict[str, str]] = {
    "HAD": "MATCH (:User)-[r:HAD]->(:Segment {user_id: $user_id}) RETURN count(r) AS n",
    "PARTICIPATED": "MATCH (:Character)-[r:PARTICIPATED]->(:Segment {user_id: $user_id}) RETURN count(r) AS n",
    "MENTIONS": "MATCH (:Segment {user_id: $user_id})-[r:MENTIONS]->(:Concept) RETURN count(r) AS n",
    "ASSOCIATED": (
        "MATCH (a:Segment)-[r:ASSOCIATED]->(b:Segment) "
        "WHERE a.user_id = $user_id OR b.user_id = $user_id RETURN count(r) AS n"
    ),
    # Relations never cross users (both ends are matched with the user), so the source's owner is enough.
    **{edge: f"MATCH (a:Segment {{user_id: $user_id}})-[r:{edge}]->(:Segment) RETURN count(r) AS n"
       for edge in RELATION_EDGES.values()},
    # Knowledge edges never cross users either (both ends matched with the user when written).
    "LEARNED_FROM": "MATCH (:Knowledge {user_id: $user_id})-[r:LEARNED_FROM]->(:Segment) RETURN count(r) AS n",
    "SUPERSEDES": "MATCH (:Knowledge {user_id: $user_id})-[r:SUPERSEDES]->(:Knowledge) RETURN count(r) AS n",
    **{edge: f"MATCH (:Knowledge {{user_id: $user_id}})-[r:{edge}]->(:Knowledge) RETURN count(r) AS n"
       for edge in KNOWLEDGE_LINK_EDGES.values()},
}

# --- diagnostics (lumina-memory doctor; read-only) -----------------------------------------------------
LADYBUG_SHOW_TABLES: Final = "CALL show_tables() RETURN *"
NEO4J_LABELS: Final = "CALL db.labels()"
NEO4J_SHOW_CONSTRAINTS: Final = "SHOW CONSTRAINTS YIELD name"

# === backend-specific schema =========================================================================

# ladybug (like Kùzu) is schema-first: a label or edge type must be a table before MERGE can use it.
# The primary key gives the uniqueness Neo4j gets from constraints; REL tables fix the endpoint labels.
LADYBUG_SCHEMA: Final[tuple[str, ...]] = (
    "CREATE NODE TABLE IF NOT EXISTS User(id STRING, PRIMARY KEY (id))",
    "CREATE NODE TABLE IF NOT EXISTS Character(id STRING, PRIMARY KEY (id))",
    "CREATE NODE TABLE IF NOT EXISTS Segment("
    "id STRING, user_id STRING, summary STRING, ts DOUBLE, importance DOUBLE, PRIMARY KEY (id))",
    "CREATE NODE TABLE IF NOT EXISTS Concept(id STRING, user_id STRING, name STRING, PRIMARY KEY (id))",
    "CREATE REL TABLE IF NOT EXISTS HAD(FROM User TO Segment)",
    "CREATE REL TABLE IF NOT EXISTS PARTICIPATED(FROM Character TO Segment)",
    "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Segment TO Concept)",
    "CREATE REL TABLE IF NOT EXISTS ASSOCIATED(FROM Segment TO Segment, score DOUBLE)",
    *(f"CREATE REL TABLE IF NOT EXISTS {edge}(FROM Segment TO Segment, score DOUBLE)" for edge in RELATION_EDGES.values()),
    "CREATE NODE TABLE IF NOT EXISTS Knowledge("
    "id STRING, user_id STRING, subject STRING, attribute STRING, value STRING, polarity STRING, status STRING, "
    "PRIMARY KEY (id))",
    "CREATE REL TABLE IF NOT EXISTS LEARNED_FROM(FROM Knowledge TO Segment)",
    "CREATE REL TABLE IF NOT EXISTS SUPERSEDES(FROM Knowledge TO Knowledge)",
    *(f"CREATE REL TABLE IF NOT EXISTS {edge}(FROM Knowledge TO Knowledge, winner STRING)"
      for edge in KNOWLEDGE_LINK_EDGES.values()),
)

# Session setting, not schema: ladybug checkpoints its WAL once it holds this many bytes.
LADYBUG_CHECKPOINT_THRESHOLD: Final = "CALL checkpoint_threshold=2097152"

# Neo4j is schema-optional: these only add uniqueness and lookup speed. FalkorDB's Bolt endpoint
# rejects all of them (with a generic UnknownError), so the Neo4j adapter runs them one by one and
# tolerates exactly that failure. Named + IF NOT EXISTS keeps them idempotent on Neo4j 5.
NEO4J_SCHEMA: Final[tuple[str, ...]] = (
    "CREATE CONSTRAINT lumina_user_id IF NOT EXISTS FOR (n:User) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT lumina_character_id IF NOT EXISTS FOR (n:Character) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT lumina_segment_id IF NOT EXISTS FOR (n:Segment) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT lumina_concept_id IF NOT EXISTS FOR (n:Concept) REQUIRE n.id IS UNIQUE",
    "CREATE INDEX lumina_segment_user IF NOT EXISTS FOR (n:Segment) ON (n.user_id)",
    "CREATE INDEX lumina_concept_user IF NOT EXISTS FOR (n:Concept) ON (n.user_id)",
    "CREATE CONSTRAINT lumina_knowledge_id IF NOT EXISTS FOR (n:Knowledge) REQUIRE n.id IS UNIQUE",
    "CREATE INDEX lumina_knowledge_user IF NOT EXISTS FOR (n:Knowledge) ON (n.user_id)",
)

# Neo4j adapter only: finds servers that splice string parameters into the query text instead of
# binding them (FalkorDB 4.16's Bolt endpoint does: a quote in a value ends the literal). Sent with
# $probe = backslash + quote; a binding server returns it unchanged, a splicing one returns "'".
NEO4J_PARAM_PROBE: Final = "RETURN $probe AS probe"
