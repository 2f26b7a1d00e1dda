"""The associative graph as PostgreSQL tables: the schema, and the SQL form of each Cypher statement that
CypherGraph sends (stores.graph_pg runs them).

A node label is a table keyed by its id; an edge type is a table of (from, to) pairs keyed by both ends, whose
foreign keys cascade, so deleting a node deletes its edges as DETACH DELETE does. Two edge kinds need no table
of their own: HAD (User -> Segment) is a segment's ``user_id`` with its user's row present, and the five typed
memory relations share ``graph_relations`` with their edge type in ``kind``, as the links between facts
(FACT_DERIVED_FROM, FACT_CONTRADICTS) share ``graph_knowledge_links``.

Each statement's SQL keeps its Cypher meaning row for row: nodes matched with their owner where the Cypher
matches them so, MERGE as ``ON CONFLICT``, the same RETURN aliases. Writes are idempotent upserts, so the
Cypher forms meant for new segments only (NEW_*) are safe here even when another process writes the same
segment at the same moment: the keys make its edges once. Rows of one statement are written in key order, so
two transactions running the same statements over overlapping rows lock them in the same order; units of work
over one user's rows take turns (stores.graph_pg: a user's advisory lock), so batches restating the same segments
in different orders do not deadlock.
Values travel only as ``?`` parameters; results sort strings by code point (``COLLATE "C"``), as Cypher does.
"""

from __future__ import annotations

from typing import Any, Callable, Final, Mapping, Sequence

from . import cypher

SqlArgs = list[Any]
Statements = list[tuple[str, SqlArgs]]
Handler = Callable[[Mapping[str, Any]], Statements]

TABLES: Final[tuple[str, ...]] = (
    "graph_users", "graph_characters", "graph_segments", "graph_concepts", "graph_knowledge", "graph_participated",
    "graph_mentions", "graph_associated", "graph_relations", "graph_learned_from", "graph_supersedes",
    "graph_knowledge_links",
)


def _fk(column: str, table: str) -> str:
    return f"{column} VARCHAR NOT NULL REFERENCES {table} (id) ON DELETE CASCADE"


# Migration steps of the "graph" component (append new steps; never edit one).
SCHEMA: Final[tuple[tuple[str, ...], ...]] = ((
    "CREATE TABLE IF NOT EXISTS graph_users (id VARCHAR PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS graph_characters (id VARCHAR PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS graph_segments (id VARCHAR PRIMARY KEY, user_id VARCHAR NOT NULL, summary VARCHAR, "
    "ts DOUBLE PRECISION, importance DOUBLE PRECISION)",
    "CREATE INDEX IF NOT EXISTS graph_segments_user ON graph_segments (user_id)",
    "CREATE TABLE IF NOT EXISTS graph_concepts (id VARCHAR PRIMARY KEY, user_id VARCHAR NOT NULL, name VARCHAR)",
    "CREATE INDEX IF NOT EXISTS graph_concepts_user ON graph_concepts (user_id)",
    "CREATE TABLE IF NOT EXISTS graph_knowledge (id VARCHAR PRIMARY KEY, user_id VARCHAR NOT NULL, subject VARCHAR, "
    "attribute VARCHAR, value VARCHAR, polarity VARCHAR, status VARCHAR)",
    "CREATE INDEX IF NOT EXISTS graph_knowledge_user ON graph_knowledge (user_id)",
    f"CREATE TABLE IF NOT EXISTS graph_participated ({_fk('segment_id', 'graph_segments')}, "
    f"{_fk('character_id', 'graph_characters')}, PRIMARY KEY (segment_id, character_id))",
    "CREATE INDEX IF NOT EXISTS graph_participated_character ON graph_participated (character_id)",
    f"CREATE TABLE IF NOT EXISTS graph_mentions ({_fk('segment_id', 'graph_segments')}, "
    f"{_fk('concept_id', 'graph_concepts')}, PRIMARY KEY (segment_id, concept_id))",
    "CREATE INDEX IF NOT EXISTS graph_mentions_concept ON graph_mentions (concept_id)",
    f"CREATE TABLE IF NOT EXISTS graph_associated ({_fk('src', 'graph_segments')}, {_fk('dst', 'graph_segments')}, "
    "score DOUBLE PRECISION, PRIMARY KEY (src, dst))",
    "CREATE INDEX IF NOT EXISTS graph_associated_dst ON graph_associated (dst)",
    f"CREATE TABLE IF NOT EXISTS graph_relations ({_fk('src', 'graph_segments')}, {_fk('dst', 'graph_segments')}, "
    "kind VARCHAR NOT NULL, score DOUBLE PRECISION, PRIMARY KEY (src, dst, kind))",
    "CREATE INDEX IF NOT EXISTS graph_relations_dst ON graph_relations (dst)",
    f"CREATE TABLE IF NOT EXISTS graph_learned_from ({_fk('item_id', 'graph_knowledge')}, "
    f"{_fk('segment_id', 'graph_segments')}, PRIMARY KEY (item_id, segment_id))",
    "CREATE INDEX IF NOT EXISTS graph_learned_from_segment ON graph_learned_from (segment_id)",
    f"CREATE TABLE IF NOT EXISTS graph_supersedes ({_fk('src', 'graph_knowledge')}, {_fk('dst', 'graph_knowledge')}, "
    "PRIMARY KEY (src, dst))",
    "CREATE INDEX IF NOT EXISTS graph_supersedes_dst ON graph_supersedes (dst)",
), (
    # The links between facts (stores.cypher_knowledge.KNOWLEDGE_LINK_EDGES), their edge type in ``kind``.
    f"CREATE TABLE IF NOT EXISTS graph_knowledge_links ({_fk('src', 'graph_knowledge')}, "
    f"{_fk('dst', 'graph_knowledge')}, kind VARCHAR NOT NULL, winner VARCHAR NOT NULL DEFAULT '', "
    "PRIMARY KEY (src, dst, kind))",
    "CREATE INDEX IF NOT EXISTS graph_knowledge_links_dst ON graph_knowledge_links (dst)",
),)


def col(rows: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    return [r[key] for r in rows]


def _one(sql: str, *names: str) -> Handler:
    """A statement whose ``?`` take these parameters, in order."""
    return lambda p: [(sql, [p[n] for n in names])]


def _user(sql: str) -> Handler:
    return _one(sql, "user_id")


def _none(sql: str) -> Handler:
    return lambda _p: [(sql, [])]


# --- nodes ---------------------------------------------------------------------------------------------
_ADD_USER = "INSERT INTO graph_users (id) VALUES (?) ON CONFLICT (id) DO NOTHING"
# Nodes at an edge's far end are made only where its segment is this user's (Cypher's MATCH, then MERGE).
_OWN_SEGMENT = "JOIN graph_segments s ON s.id = t.segment_id AND s.user_id = ?"
_ADD_CHARACTERS = ("INSERT INTO graph_characters (id) SELECT t.character FROM unnest(?::VARCHAR[], "
                   f"?::VARCHAR[]) AS t(segment_id, character) {_OWN_SEGMENT} "
                   'ORDER BY t.character ON CONFLICT (id) DO NOTHING')
# A segment id held by another user is never taken over, even by a writer racing the owner check.
_UPSERT_SEGMENTS = (
    "INSERT INTO graph_segments (id, user_id, summary, ts, importance) "
    "SELECT DISTINCT ON (t.id) t.id, ?, t.summary, t.ts, t.importance "
    "FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::DOUBLE PRECISION[], ?::DOUBLE PRECISION[]) "
    'AS t(id, summary, ts, importance) ORDER BY t.id '
    "ON CONFLICT (id) DO UPDATE SET summary = excluded.summary, ts = excluded.ts, importance = excluded.importance "
    "WHERE graph_segments.user_id = excluded.user_id"
)
# Concept ids derive from (user, name), so an existing row already holds these values.
_ADD_CONCEPTS = (
    "INSERT INTO graph_concepts (id, user_id, name) SELECT t.concept, s.user_id, t.name "
    f"FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[]) AS t(segment_id, concept, name) {_OWN_SEGMENT} "
    'ORDER BY t.concept ON CONFLICT (id) DO NOTHING'
)


def _segments(p: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Statements:
    return [(_ADD_USER, [p["user_id"]]),
            (_UPSERT_SEGMENTS, [p["user_id"], col(rows, "id"), col(rows, "summary"), col(rows, "ts"),
                                col(rows, "importance")])]


def _one_segment(p: Mapping[str, Any]) -> Statements:
    return _segments(p, [{"id": p["segment_id"], **p}])


# --- edges of a segment (both ends must exist: the joins play Cypher's MATCH) -------------------------------
_ADD_PARTICIPANTS = (
    "INSERT INTO graph_participated (segment_id, character_id) SELECT s.id, t.character "
    f"FROM unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(segment_id, character) {_OWN_SEGMENT} "
    'ORDER BY s.id, t.character ON CONFLICT DO NOTHING'
)
_ADD_MENTIONS = (
    "INSERT INTO graph_mentions (segment_id, concept_id) SELECT s.id, t.concept "
    f"FROM unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(segment_id, concept) {_OWN_SEGMENT} "
    'ORDER BY s.id, t.concept ON CONFLICT DO NOTHING'
)
_LINK = (
    "INSERT INTO graph_associated (src, dst, score) SELECT DISTINCT ON (a.id, b.id) a.id, b.id, t.score "
    "FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::DOUBLE PRECISION[]) AS t(src, dst, score) "
    "JOIN graph_segments a ON a.id = t.src AND a.user_id = ? JOIN graph_segments b ON b.id = t.dst AND b.user_id = ? "
    'ORDER BY a.id, b.id ON CONFLICT (src, dst) DO UPDATE SET score = excluded.score'
)


def _participants(p: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Statements:
    return [(_ADD_CHARACTERS, [col(rows, "segment_id"), col(rows, "character"), p["user_id"]]),
            (_ADD_PARTICIPANTS, [col(rows, "segment_id"), col(rows, "character"), p["user_id"]])]


def _mentions(p: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Statements:
    return [(_ADD_CONCEPTS, [col(rows, "segment_id"), col(rows, "id"), col(rows, "name"), p["user_id"]]),
            (_ADD_MENTIONS, [col(rows, "segment_id"), col(rows, "id"), p["user_id"]])]


def _links(p: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Statements:
    return [(_LINK, [col(rows, "segment_id"), col(rows, "id"), col(rows, "score"), p["user_id"], p["user_id"]])]


def _of_segment(p: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    return [{"segment_id": p["segment_id"], **(v if isinstance(v, Mapping) else {"character": v})} for v in p[key]]


_DROP_STALE = (
    "DELETE FROM {table} e USING graph_segments s WHERE e.segment_id = s.id AND s.id = ? AND s.user_id = ? "
    "AND NOT (e.{column} = ANY(?::VARCHAR[]))"
)

WRITES: dict[str, Handler] = {
    cypher.UPSERT_SEGMENT: _one_segment,
    cypher.NEW_SEGMENT: _one_segment,
    cypher.NEW_SEGMENTS: lambda p: _segments(p, p["segments"]),
    cypher.ADD_PARTICIPANTS: lambda p: _participants(p, _of_segment(p, "characters")),
    cypher.NEW_PARTICIPANTS: lambda p: _participants(p, _of_segment(p, "characters")),
    cypher.NEW_PARTICIPANTS_OF_MANY: lambda p: _participants(p, p["rows"]),
    cypher.ADD_MENTIONS: lambda p: _mentions(p, _of_segment(p, "concepts")),
    cypher.NEW_MENTIONS: lambda p: _mentions(p, _of_segment(p, "concepts")),
    cypher.NEW_MENTIONS_OF_MANY: lambda p: _mentions(p, p["rows"]),
    cypher.LINK_SEGMENTS: lambda p: _links(p, _of_segment(p, "neighbours")),
    cypher.LINK_MANY_SEGMENTS: lambda p: _links(p, p["rows"]),
    cypher.DROP_STALE_PARTICIPANTS: _one(_DROP_STALE.format(table="graph_participated", column="character_id"),
                                         "segment_id", "user_id", "characters"),
    cypher.DROP_STALE_MENTIONS: _one(_DROP_STALE.format(table="graph_mentions", column="concept_id"),
                                     "segment_id", "user_id", "concept_ids"),
    # Deleting a node deletes its edges (the foreign keys cascade): DETACH DELETE.
    cypher.DELETE_SEGMENTS_OF: _one("DELETE FROM graph_segments WHERE id = ANY(?::VARCHAR[]) AND user_id = ?",
                                    "segment_ids", "user_id"),
    cypher.DELETE_UNMENTIONED_CONCEPTS: _one(
        "DELETE FROM graph_concepts c WHERE c.id = ANY(?::VARCHAR[]) AND c.user_id = ? "
        "AND NOT EXISTS (SELECT 1 FROM graph_mentions m WHERE m.concept_id = c.id)", "concept_ids", "user_id"),
    cypher.DELETE_USER_CONCEPTS: _user("DELETE FROM graph_concepts WHERE user_id = ?"),
    cypher.DELETE_USER_SEGMENTS: _user("DELETE FROM graph_segments WHERE user_id = ?"),
    cypher.DELETE_USER_NODE: _user("DELETE FROM graph_users WHERE id = ?"),
}

# --- reads -------------------------------------------------------------------------------------------------
_NEIGHBOURS = (
    "SELECT n.id AS id, n.user_id AS owner, x.score AS score FROM graph_associated x "
    "JOIN graph_segments n ON n.id = x.dst WHERE x.src = ANY(?::VARCHAR[]) "
    "UNION ALL SELECT n.id, n.user_id, x.score FROM graph_associated x "
    "JOIN graph_segments n ON n.id = x.src WHERE x.dst = ANY(?::VARCHAR[])"
)
# The HAD edge of a segment: its user's node exists.
_HAD = "graph_segments s JOIN graph_users u ON u.id = s.user_id"

READS: dict[str, Handler] = {
    cypher.SEGMENTS_PER_USER: _none("SELECT user_id, count(*) AS n FROM graph_segments GROUP BY user_id"),
    cypher.SEGMENT_OWNERS: _one("SELECT user_id FROM graph_segments WHERE id = ?", "segment_id"),
    cypher.SEGMENT_OWNED_BY_OTHER: _one("SELECT count(*) AS n FROM graph_segments WHERE id = ? AND user_id <> ?",
                                        "segment_id", "user_id"),
    cypher.SEGMENT_OWNERS_OF_MANY: _one("SELECT id, user_id FROM graph_segments WHERE id = ANY(?::VARCHAR[])",
                                        "segment_ids"),
    cypher.ASSOCIATED_NEIGHBOURS: _one(_NEIGHBOURS, "segment_ids", "segment_ids"),
    # Which $fan segments of a hub concept is the engine's choice, as in the Cypher (see SEGMENTS_FOR_CONCEPT).
    cypher.SEGMENTS_FOR_CONCEPT: _one(
        "SELECT s.id AS id, s.user_id AS owner, s.importance AS importance, s.ts AS ts FROM graph_mentions m "
        "JOIN graph_segments s ON s.id = m.segment_id WHERE m.concept_id = ? LIMIT ?", "concept_id", "fan"),
    cypher.CONCEPTS_OF: _one(
        "SELECT s.id AS id, c.name AS name FROM graph_segments s JOIN graph_mentions m ON m.segment_id = s.id "
        "JOIN graph_concepts c ON c.id = m.concept_id WHERE s.user_id = ? AND s.id = ANY(?::VARCHAR[]) "
        'ORDER BY s.id COLLATE "C", c.name COLLATE "C"', "user_id", "segment_ids"),
    cypher.CONCEPT_IDS_OF: _one(
        "SELECT DISTINCT m.concept_id AS id FROM graph_segments s JOIN graph_mentions m ON m.segment_id = s.id "
        "WHERE s.id = ANY(?::VARCHAR[]) AND s.user_id = ?", "segment_ids", "user_id"),
    cypher.COUNT_SEGMENTS_OF: _one(
        "SELECT count(*) AS n FROM graph_segments WHERE id = ANY(?::VARCHAR[]) AND user_id = ?",
        "segment_ids", "user_id"),
}

_COUNT_ALL = {
    "User": "graph_users", "Character": "graph_characters", "Segment": "graph_segments",
    "Concept": "graph_concepts", "Knowledge": "graph_knowledge",
    "PARTICIPATED": "graph_participated", "MENTIONS": "graph_mentions", "ASSOCIATED": "graph_associated",
    "LEARNED_FROM": "graph_learned_from", "SUPERSEDES": "graph_supersedes",
}
for _label, _query in {**cypher.COUNT_NODES_ALL, **cypher.COUNT_EDGES_ALL}.items():
    if _label in _COUNT_ALL:
        READS[_query] = _none(f"SELECT count(*) AS n FROM {_COUNT_ALL[_label]}")
READS[cypher.COUNT_EDGES_ALL["HAD"]] = _none(f"SELECT count(*) AS n FROM {_HAD}")

_COUNT_USER = {
    "User": "SELECT count(*) AS n FROM graph_users WHERE id = ?",
    "Character": "SELECT count(DISTINCT p.character_id) AS n FROM graph_participated p "
                 "JOIN graph_segments s ON s.id = p.segment_id WHERE s.user_id = ?",
    "Segment": "SELECT count(*) AS n FROM graph_segments WHERE user_id = ?",
    "Concept": "SELECT count(*) AS n FROM graph_concepts WHERE user_id = ?",
    "Knowledge": "SELECT count(*) AS n FROM graph_knowledge WHERE user_id = ?",
    "HAD": f"SELECT count(*) AS n FROM {_HAD} WHERE s.user_id = ?",
    "PARTICIPATED": "SELECT count(*) AS n FROM graph_participated p JOIN graph_segments s ON s.id = p.segment_id "
                    "WHERE s.user_id = ?",
    "MENTIONS": "SELECT count(*) AS n FROM graph_mentions m JOIN graph_segments s ON s.id = m.segment_id "
                "WHERE s.user_id = ?",
    "LEARNED_FROM": "SELECT count(*) AS n FROM graph_learned_from l JOIN graph_knowledge k ON k.id = l.item_id "
                    "WHERE k.user_id = ?",
    "SUPERSEDES": "SELECT count(*) AS n FROM graph_supersedes x JOIN graph_knowledge k ON k.id = x.src "
                  "WHERE k.user_id = ?",
}
for _label, _query in {**cypher.COUNT_NODES_USER, **cypher.COUNT_EDGES_USER}.items():
    if _label in _COUNT_USER:
        READS[_query] = _user(_COUNT_USER[_label])
for _edge in cypher.KNOWLEDGE_LINK_EDGES.values():
    READS[cypher.COUNT_EDGES_ALL[_edge]] = _none(f"SELECT count(*) AS n FROM graph_knowledge_links WHERE kind = '{_edge}'")
    READS[cypher.COUNT_EDGES_USER[_edge]] = _user(
        "SELECT count(*) AS n FROM graph_knowledge_links x JOIN graph_knowledge k ON k.id = x.src "
        f"WHERE x.kind = '{_edge}' AND k.user_id = ?")
READS[cypher.COUNT_EDGES_USER["ASSOCIATED"]] = _one(
    "SELECT count(*) AS n FROM graph_associated x JOIN graph_segments a ON a.id = x.src "
    "JOIN graph_segments b ON b.id = x.dst WHERE a.user_id = ? OR b.user_id = ?", "user_id", "user_id")

# --- memory relations: one table, the edge type in ``kind`` -------------------------------------------------
_RELATION_COLUMNS = ("SELECT a.id AS src, b.id AS dst, x.score AS score, a.user_id AS src_owner, "
                     "b.user_id AS dst_owner{edge} FROM graph_relations x JOIN graph_segments a ON a.id = x.src "
                     "JOIN graph_segments b ON b.id = x.dst")
# Every relation with an end among the seeds, all kinds in one read (PostgresGraph._relation_rows).
RELATIONS_OF_SEGMENTS: Final = (_RELATION_COLUMNS.format(edge=", x.kind AS edge")
                                + " WHERE x.src = ANY(?::VARCHAR[]) OR x.dst = ANY(?::VARCHAR[])")

for _edge in cypher.RELATION_EDGES.values():
    READS[cypher.COUNT_EDGES_ALL[_edge]] = _none(f"SELECT count(*) AS n FROM graph_relations WHERE kind = '{_edge}'")
    READS[cypher.COUNT_EDGES_USER[_edge]] = _user(
        "SELECT count(*) AS n FROM graph_relations x JOIN graph_segments a ON a.id = x.src "
        f"WHERE x.kind = '{_edge}' AND a.user_id = ?")
    READS[cypher.USER_RELATIONS[_edge]] = _user(
        _RELATION_COLUMNS.format(edge="") + f" JOIN graph_users u ON u.id = a.user_id WHERE x.kind = '{_edge}' "
        "AND a.user_id = ?")
    READS[cypher.RELATIONS_FROM[_edge]] = _one(
        _RELATION_COLUMNS.format(edge="") + f" WHERE x.kind = '{_edge}' AND x.src = ANY(?::VARCHAR[])", "segment_ids")
    READS[cypher.RELATIONS_TO[_edge]] = _one(
        _RELATION_COLUMNS.format(edge="") + f" WHERE x.kind = '{_edge}' AND x.dst = ANY(?::VARCHAR[])", "segment_ids")
    WRITES[cypher.SET_RELATIONS[_edge]] = lambda p, e=_edge: [(
        "INSERT INTO graph_relations (src, dst, kind, score) SELECT DISTINCT ON (a.id, b.id) a.id, b.id, ?, t.score "
        "FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::DOUBLE PRECISION[]) AS t(src, dst, score) "
        "JOIN graph_segments a ON a.id = t.src AND a.user_id = ? JOIN graph_segments b ON b.id = t.dst "
        'AND b.user_id = ? ORDER BY a.id, b.id '
        "ON CONFLICT (src, dst, kind) DO UPDATE SET score = excluded.score",
        [e, col(p["rows"], "src"), col(p["rows"], "dst"), col(p["rows"], "score"), p["user_id"], p["user_id"]])]
    WRITES[cypher.DROP_RELATIONS[_edge]] = lambda p, e=_edge: [(
        "DELETE FROM graph_relations x USING unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(src, dst), graph_segments a, "
        "graph_segments b WHERE x.kind = ? AND x.src = t.src AND x.dst = t.dst AND a.id = x.src AND a.user_id = ? "
        "AND b.id = x.dst AND b.user_id = ?",
        [col(p["rows"], "src"), col(p["rows"], "dst"), e, p["user_id"], p["user_id"]])]
