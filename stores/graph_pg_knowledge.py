"""SQL forms of the knowledge items' Cypher statements (stores.cypher_knowledge) and of the backup's
(stores.cypher_backup) over the graph's PostgreSQL tables; the rules of stores.graph_pg_sql hold."""

from __future__ import annotations

from typing import Any, Final, Mapping

from . import cypher, cypher_backup
from .graph_pg_sql import Handler, Statements, _none, _one, _user, col

_KNOWLEDGE_FIELDS: Final = ("subject", "attribute", "value", "polarity", "status")


def _upsert_knowledge(user_id: Any, rows: list[Mapping[str, Any]]) -> Statements:
    """Knowledge nodes: an item id held by another user is never taken over (as segments in graph_pg_sql)."""
    fields = ", ".join(_KNOWLEDGE_FIELDS)
    return [(
        f"INSERT INTO graph_knowledge (id, user_id, {fields}) "
        f"SELECT DISTINCT ON (t.id) t.id, ?, {', '.join('t.' + f for f in _KNOWLEDGE_FIELDS)} "
        f"FROM unnest(?::VARCHAR[], {', '.join('?::VARCHAR[]' for _ in _KNOWLEDGE_FIELDS)}) AS t(id, {fields}) "
        "ORDER BY t.id ON CONFLICT (id) DO UPDATE SET "
        + ", ".join(f"{f} = excluded.{f}" for f in _KNOWLEDGE_FIELDS)
        + " WHERE graph_knowledge.user_id = excluded.user_id",
        [user_id, col(rows, "id"), *(col(rows, f) for f in _KNOWLEDGE_FIELDS)],
    )]


def _pairs(sql: str, a: str, b: str, users: int) -> Handler:
    """A statement over ``$rows`` of pairs: the ``a`` and ``b`` columns, then the user id ``users`` times."""
    return lambda p: [(sql, [col(p["rows"], a), col(p["rows"], b), *([p["user_id"]] * users)])]


def _add_links(edge: str) -> Handler:
    """MERGE of (src, dst) with SET of winner; both ends this user's items, as the Cypher matches them."""
    sql = ("INSERT INTO graph_knowledge_links (src, dst, kind, winner) SELECT DISTINCT ON (a.id, b.id) a.id, b.id, ?, "
           "t.winner FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[]) AS t(src, dst, winner) "
           "JOIN graph_knowledge a ON a.id = t.src AND a.user_id = ? JOIN graph_knowledge b ON b.id = t.dst "
           "AND b.user_id = ? ORDER BY a.id, b.id ON CONFLICT (src, dst, kind) DO UPDATE SET winner = excluded.winner")
    return lambda p: [(sql, [edge, col(p["rows"], "src"), col(p["rows"], "dst"), col(p["rows"], "winner"),
                             p["user_id"], p["user_id"]])]


def _drop_links(edge: str) -> Handler:
    sql = ("DELETE FROM graph_knowledge_links x USING unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(src, dst), graph_knowledge b "
           "WHERE x.kind = ? AND x.src = t.src AND x.dst = t.dst AND b.id = x.dst AND b.user_id = ?")
    return lambda p: [(sql, [col(p["rows"], "src"), col(p["rows"], "dst"), edge, p["user_id"]])]


def _links_of(edge: str, end: str) -> Handler:
    sql = (f"SELECT x.src AS src, x.dst AS dst, x.winner AS winner FROM graph_knowledge_links x JOIN graph_knowledge k "
           f"ON k.id = x.{end} WHERE x.kind = ? AND x.{end} = ANY(?::VARCHAR[]) AND k.user_id = ?")
    return lambda p: [(sql, [edge, p["item_ids"], p["user_id"]])]


def _links_of_user(edge: str) -> Handler:
    sql = ("SELECT a.id AS src, b.id AS dst, x.winner AS winner, b.user_id AS owner FROM graph_knowledge_links x "
           "JOIN graph_knowledge a ON a.id = x.src JOIN graph_knowledge b ON b.id = x.dst WHERE x.kind = ? AND a.user_id = ?")
    return lambda p: [(sql, [edge, p["user_id"]])]


KNOWLEDGE_WRITES: dict[str, Handler] = {
    **{cypher.ADD_KNOWLEDGE_LINKS[e]: _add_links(e) for e in cypher.KNOWLEDGE_LINK_EDGES.values()},
    **{cypher.DROP_KNOWLEDGE_LINKS[e]: _drop_links(e) for e in cypher.KNOWLEDGE_LINK_EDGES.values()},
    cypher.UPSERT_KNOWLEDGE: lambda p: _upsert_knowledge(p["user_id"], p["items"]),
    cypher.ADD_LEARNED_FROM: _pairs(
        "INSERT INTO graph_learned_from (item_id, segment_id) SELECT k.id, s.id "
        "FROM unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(id, segment_id) JOIN graph_knowledge k ON k.id = t.id "
        "AND k.user_id = ? JOIN graph_segments s ON s.id = t.segment_id AND s.user_id = ? ORDER BY k.id, s.id "
        "ON CONFLICT DO NOTHING", "id", "segment_id", 2),
    cypher.DROP_LEARNED_FROM: _pairs(
        "DELETE FROM graph_learned_from l USING unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(id, segment_id), "
        "graph_knowledge k WHERE l.item_id = t.id AND l.segment_id = t.segment_id AND k.id = l.item_id "
        "AND k.user_id = ?", "id", "segment_id", 1),
    cypher.ADD_SUPERSEDES: _pairs(
        "INSERT INTO graph_supersedes (src, dst) SELECT a.id, b.id FROM unnest(?::VARCHAR[], ?::VARCHAR[]) "
        "AS t(src, dst) JOIN graph_knowledge a ON a.id = t.src AND a.user_id = ? "
        "JOIN graph_knowledge b ON b.id = t.dst AND b.user_id = ? ORDER BY a.id, b.id ON CONFLICT DO NOTHING",
        "src", "dst", 2),
    # As the Cypher: the item the edge enters must be this user's.
    cypher.DROP_SUPERSEDES: _pairs(
        "DELETE FROM graph_supersedes x USING unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(src, dst), graph_knowledge b "
        "WHERE x.src = t.src AND x.dst = t.dst AND b.id = x.dst AND b.user_id = ?", "src", "dst", 1),
    cypher.DELETE_KNOWLEDGE: _one("DELETE FROM graph_knowledge WHERE id = ANY(?::VARCHAR[]) AND user_id = ?",
                                  "item_ids", "user_id"),
    cypher.DELETE_UNSOURCED_KNOWLEDGE: _one(
        "DELETE FROM graph_knowledge k WHERE k.id = ANY(?::VARCHAR[]) AND k.user_id = ? "
        "AND NOT EXISTS (SELECT 1 FROM graph_learned_from l WHERE l.item_id = k.id)", "item_ids", "user_id"),
    cypher.DELETE_USER_KNOWLEDGE: _user("DELETE FROM graph_knowledge WHERE user_id = ?"),
}

_SUPERSEDES = "SELECT x.src AS src, x.dst AS dst FROM graph_supersedes x JOIN graph_knowledge k ON k.id = x.{end} " \
              "WHERE x.{end} = ANY(?::VARCHAR[]) AND k.user_id = ?"

KNOWLEDGE_READS: dict[str, Handler] = {
    **{cypher.KNOWLEDGE_LINKS_FROM[e]: _links_of(e, "src") for e in cypher.KNOWLEDGE_LINK_EDGES.values()},
    **{cypher.KNOWLEDGE_LINKS_TO[e]: _links_of(e, "dst") for e in cypher.KNOWLEDGE_LINK_EDGES.values()},
    **{cypher.KNOWLEDGE_LINKS_OF_USER[e]: _links_of_user(e) for e in cypher.KNOWLEDGE_LINK_EDGES.values()},
    cypher.KNOWLEDGE_OWNERS_OF_MANY: _one("SELECT id, user_id FROM graph_knowledge WHERE id = ANY(?::VARCHAR[])",
                                          "item_ids"),
    cypher.KNOWLEDGE_SOURCES_OF: _one(
        "SELECT k.id AS id, l.segment_id AS segment_id FROM graph_knowledge k JOIN graph_learned_from l "
        "ON l.item_id = k.id WHERE k.id = ANY(?::VARCHAR[]) AND k.user_id = ?", "item_ids", "user_id"),
    cypher.KNOWLEDGE_SUPERSEDES_FROM: _one(_SUPERSEDES.format(end="src"), "item_ids", "user_id"),
    cypher.KNOWLEDGE_SUPERSEDES_TO: _one(_SUPERSEDES.format(end="dst"), "item_ids", "user_id"),
    cypher.KNOWLEDGE_NODES_OF_USER: _user(
        f"SELECT id, {', '.join(_KNOWLEDGE_FIELDS)} FROM graph_knowledge WHERE user_id = ?"),
    cypher.KNOWLEDGE_SOURCES_OF_USER: _user(
        "SELECT k.id AS id, s.id AS segment_id, s.user_id AS owner FROM graph_knowledge k "
        "JOIN graph_learned_from l ON l.item_id = k.id JOIN graph_segments s ON s.id = l.segment_id "
        "WHERE k.user_id = ?"),
    cypher.KNOWLEDGE_SUPERSEDES_OF_USER: _user(
        "SELECT a.id AS src, b.id AS dst, b.user_id AS owner FROM graph_supersedes x "
        "JOIN graph_knowledge a ON a.id = x.src JOIN graph_knowledge b ON b.id = x.dst WHERE a.user_id = ?"),
    cypher.KNOWLEDGE_OF_SEGMENTS: _one(
        "SELECT DISTINCT l.item_id AS id FROM graph_learned_from l JOIN graph_segments s ON s.id = l.segment_id "
        "WHERE s.id = ANY(?::VARCHAR[]) AND s.user_id = ?", "segment_ids", "user_id"),
}

# --- backups: every node and edge by kind, and back (stores.cypher_backup's DUMP and LOAD) -------------------
_EDGE_DUMPS: Final[dict[str, str]] = {
    "HAD": "SELECT u.id AS a, s.id AS b, s.user_id AS user_id FROM graph_segments s JOIN graph_users u ON u.id = s.user_id",
    "PARTICIPATED": "SELECT p.character_id AS a, s.id AS b, s.user_id AS user_id FROM graph_participated p "
                    "JOIN graph_segments s ON s.id = p.segment_id",
    "MENTIONS": "SELECT s.id AS a, m.concept_id AS b, s.user_id AS user_id FROM graph_mentions m "
                "JOIN graph_segments s ON s.id = m.segment_id",
    "ASSOCIATED": "SELECT x.src AS a, x.dst AS b, x.score AS score, s.user_id AS user_id FROM graph_associated x "
                  "JOIN graph_segments s ON s.id = x.src",
    "LEARNED_FROM": "SELECT k.id AS a, l.segment_id AS b, k.user_id AS user_id FROM graph_learned_from l "
                    "JOIN graph_knowledge k ON k.id = l.item_id",
    "SUPERSEDES": "SELECT x.src AS a, x.dst AS b, k.user_id AS user_id FROM graph_supersedes x "
                  "JOIN graph_knowledge k ON k.id = x.src",
    **{edge: "SELECT x.src AS a, x.dst AS b, x.winner AS winner, k.user_id AS user_id FROM graph_knowledge_links x "
             f"JOIN graph_knowledge k ON k.id = x.src WHERE x.kind = '{edge}'" for edge in cypher.KNOWLEDGE_LINK_EDGES.values()},
    **{edge: "SELECT x.src AS a, x.dst AS b, x.score AS score, s.user_id AS user_id FROM graph_relations x "
             f"JOIN graph_segments s ON s.id = x.src WHERE x.kind = '{edge}'" for edge in cypher.RELATION_EDGES.values()},
}
DUMPS: Final[dict[str, str]] = {
    "User": "SELECT id, id AS user_id FROM graph_users",
    "Character": "SELECT id FROM graph_characters",
    "Segment": "SELECT id, user_id, summary, ts, importance FROM graph_segments",
    "Concept": "SELECT id, user_id, name FROM graph_concepts",
    "Knowledge": f"SELECT id, user_id, {', '.join(_KNOWLEDGE_FIELDS)} FROM graph_knowledge",
    **_EDGE_DUMPS,
}
assert DUMPS.keys() == cypher_backup.DUMP.keys()


def _load_ids(table: str) -> Handler:
    return lambda p: [(f"INSERT INTO {table} (id) SELECT i FROM unnest(?::VARCHAR[]) AS i ORDER BY i "
                       "ON CONFLICT (id) DO NOTHING", [col(p["rows"], "id")])]


def _load_owned(table: str, fields: tuple[str, ...]) -> Handler:
    """Nodes with an owner: MERGE on (id, user_id) and SET of the rest; a row whose id another user holds is left out."""
    names = ", ".join(fields)
    sql = (f"INSERT INTO {table} (id, user_id, {names}) SELECT DISTINCT ON (t.id) t.id, t.user_id, "
           f"{', '.join('t.' + f for f in fields)} FROM unnest(?::VARCHAR[], ?::VARCHAR[], "
           f"{', '.join('?::VARCHAR[]' if f not in ('ts', 'importance') else '?::DOUBLE PRECISION[]' for f in fields)}) "
           f"AS t(id, user_id, {names}) ORDER BY t.id ON CONFLICT (id) DO UPDATE SET "
           + ", ".join(f"{f} = excluded.{f}" for f in fields) + f" WHERE {table}.user_id = excluded.user_id")
    return lambda p: [(sql, [col(p["rows"], "id"), col(p["rows"], "user_id"), *(col(p["rows"], f) for f in fields)])]


def _load_edges(table: str, columns: str, ends: tuple[str, str], owned: bool = False, kind: str | None = None) -> Handler:
    """Edges between existing nodes (``ends``: the tables of a and b); ``owned``: both ends the row's user's."""
    own = " AND {x}.user_id = t.user_id" if owned else ""
    scored = columns.endswith("score")
    values = "t.a, t.b" + (f", '{kind}'" if kind else "") + (", t.score" if scored else "")
    sql = (f"INSERT INTO {table} ({columns}) SELECT DISTINCT ON (t.a, t.b) {values} "
           f"FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[], ?::DOUBLE PRECISION[]) AS t(a, b, user_id, score) "
           f"JOIN {ends[0]} x ON x.id = t.a{own.format(x='x')} JOIN {ends[1]} y ON y.id = t.b{own.format(x='y')} "
           "ORDER BY t.a, t.b ON CONFLICT "
           + (f"({columns.removesuffix(', score')}) DO UPDATE SET score = excluded.score" if scored else "DO NOTHING"))

    def handler(p: Mapping[str, Any]) -> Statements:
        rows = p["rows"]
        return [(sql, [col(rows, "a"), col(rows, "b"), [r.get("user_id") for r in rows],
                       [r.get("score") for r in rows]])]
    return handler


def _load_links(edge: str) -> Handler:
    """Links between existing items of the row's user (as the backup's LOAD matches them), winner kept."""
    sql = ("INSERT INTO graph_knowledge_links (src, dst, kind, winner) SELECT DISTINCT ON (t.a, t.b) t.a, t.b, ?, "
           "coalesce(t.winner, '') FROM unnest(?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[]) "
           "AS t(a, b, user_id, winner) JOIN graph_knowledge x ON x.id = t.a AND x.user_id = t.user_id "
           "JOIN graph_knowledge y ON y.id = t.b AND y.user_id = t.user_id ORDER BY t.a, t.b "
           "ON CONFLICT (src, dst, kind) DO UPDATE SET winner = excluded.winner")
    return lambda p: [(sql, [edge, col(p["rows"], "a"), col(p["rows"], "b"), [r.get("user_id") for r in p["rows"]],
                             [r.get("winner") for r in p["rows"]]])]


_SEGMENT_FIELDS: Final = ("summary", "ts", "importance")
LOADS: Final[dict[str, Handler]] = {
    "User": _load_ids("graph_users"),
    "Character": _load_ids("graph_characters"),
    "Segment": _load_owned("graph_segments", _SEGMENT_FIELDS),
    "Concept": _load_owned("graph_concepts", ("name",)),
    "Knowledge": _load_owned("graph_knowledge", _KNOWLEDGE_FIELDS),
    "HAD": lambda _p: [],  # a segment's user_id with its user's row: nothing of its own to write
    "PARTICIPATED": _load_edges("graph_participated", "character_id, segment_id",
                                ("graph_characters", "graph_segments")),
    "MENTIONS": _load_edges("graph_mentions", "segment_id, concept_id", ("graph_segments", "graph_concepts")),
    "ASSOCIATED": _load_edges("graph_associated", "src, dst, score", ("graph_segments", "graph_segments")),
    **{edge: _load_edges("graph_relations", "src, dst, kind, score", ("graph_segments", "graph_segments"),
                         owned=True, kind=edge) for edge in cypher.RELATION_EDGES.values()},
    "LEARNED_FROM": _load_edges("graph_learned_from", "item_id, segment_id", ("graph_knowledge", "graph_segments"),
                                owned=True),
    "SUPERSEDES": _load_edges("graph_supersedes", "src, dst", ("graph_knowledge", "graph_knowledge"), owned=True),
    **{edge: _load_links(edge) for edge in cypher.KNOWLEDGE_LINK_EDGES.values()},
}
assert LOADS.keys() == cypher_backup.LOAD.keys()

_CLEARED: Final = {"Knowledge": "graph_knowledge", "Segment": "graph_segments", "Concept": "graph_concepts",
                   "User": "graph_users", "Character": "graph_characters"}
BACKUP_WRITES: dict[str, Handler] = {
    **{cypher_backup.LOAD[kind]: handler for kind, handler in LOADS.items()},
    **{f"MATCH (n:{label}) DETACH DELETE n": _none(f"DELETE FROM {table}") for label, table in _CLEARED.items()},
}
assert set(cypher_backup.CLEAR) <= BACKUP_WRITES.keys()
BACKUP_READS: dict[str, Handler] = {cypher_backup.DUMP[kind]: _none(sql) for kind, sql in DUMPS.items()}
