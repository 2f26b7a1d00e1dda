"""Edges across two users' nodes (a leak the protocol never writes) found and removed on every graph adapter
(GraphStore.cross_user_edges), and by the maintenance's store upkeep (nodes.store_upkeep), which counts them
in its report and records the repair in the audit trail and each touched user's activity log."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from lumina_memory.nodes.store_upkeep import graph_integrity
from lumina_memory.stores import ids
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.graph_pg import PostgresGraph
from lumina_memory.stores.records import KnowledgeNode
from tests.test_graph_conformance import bolt_driver, bolt_port, graph  # noqa: F401 - fixtures: every adapter
from tests.test_store_upkeep import segment, stored
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

USER, OTHER = "kana", "ren"
pytestmark = pytest.mark.slow  # servers for two adapters

# Planted underneath the protocol, as a bug or a hand-edited store would leave them: (Cypher, SQL) per edge.
PLANT = {
    "ASSOCIATED": ("MATCH (s:Segment {id: $a}), (t:Segment {id: $b}) CREATE (s)-[:ASSOCIATED {score: 0.7}]->(t)",
                   "INSERT INTO graph_associated (src, dst, score) VALUES (?, ?, 0.7)"),
    "CONTINUES": ("MATCH (s:Segment {id: $a}), (t:Segment {id: $b}) CREATE (s)-[:CONTINUES {score: 0.6}]->(t)",
                  "INSERT INTO graph_relations (src, dst, kind, score) VALUES (?, ?, 'CONTINUES', 0.6)"),
    "LEARNED_FROM": ("MATCH (k:Knowledge {id: $a}), (s:Segment {id: $b}) CREATE (k)-[:LEARNED_FROM]->(s)",
                     "INSERT INTO graph_learned_from (item_id, segment_id) VALUES (?, ?)"),
    "MENTIONS": ("MATCH (s:Segment {id: $a}), (c:Concept {id: $b}) CREATE (s)-[:MENTIONS]->(c)",
                 "INSERT INTO graph_mentions (segment_id, concept_id) VALUES (?, ?)"),
    "SUPERSEDES": ("MATCH (k:Knowledge {id: $a}), (o:Knowledge {id: $b}) CREATE (k)-[:SUPERSEDES]->(o)",
                   "INSERT INTO graph_supersedes (src, dst) VALUES (?, ?)"),
    "FACT_CONTRADICTS": (
        "MATCH (k:Knowledge {id: $a}), (o:Knowledge {id: $b}) CREATE (k)-[:FACT_CONTRADICTS {winner: ''}]->(o)",
        "INSERT INTO graph_knowledge_links (src, dst, kind, winner) VALUES (?, ?, 'FACT_CONTRADICTS', '')"),
    # PostgreSQL has no HAD table (a segment's user_id is its edge): only the Cypher engines can hold this one.
    "HAD": ("MATCH (u:User {id: $a}), (s:Segment {id: $b}) CREATE (u)-[:HAD]->(s)", None),
}


def plant(graph, edge: str, a: str, b: str) -> None:
    query, sql = PLANT[edge]
    if isinstance(graph, PostgresGraph):
        with graph._db.tx() as con:
            con.execute(sql, [a, b])
    else:
        graph._write([(query, {"a": a, "b": b})])


def concept_of(graph, user: str, segment_id: str) -> str:
    rows = [r for r in graph.dump()["MENTIONS"] if str(r["a"]) == segment_id and r["user_id"] == user]
    return str(rows[0]["b"])


def own_edges(graph) -> dict[str, set[tuple[str, str]]]:
    dump = graph.dump()
    return {kind: {(str(r["a"]), str(r["b"])) for r in dump[kind]}
            for kind in ("ASSOCIATED", "CONTINUES", "LEARNED_FROM", "MENTIONS", "HAD", "SUPERSEDES",
                         "FACT_CONTRADICTS")}


def knowledge(user: str, segment_id: str) -> KnowledgeNode:
    return KnowledgeNode(item_id=ids.segment_id(user, "fact"), subject="user", attribute="likes", value="散歩",
                         polarity="positive", status="current", episode_ids=[segment_id])


def test_planted_cross_user_edges_are_listed_then_removed_and_each_users_own_edges_stay(graph):
    mine1, mine2 = (graph.upsert_segment(USER, s, ["lumina"], ["散歩"], "海辺", 1.0, 0.5) or s
                    for s in (ids.segment_id(USER, "t1"), ids.segment_id(USER, "t2")))
    theirs1, theirs2 = (graph.upsert_segment(OTHER, s, ["nox"], ["映画"], "映画館", 2.0, 0.5) or s
                        for s in (ids.segment_id(OTHER, "t1"), ids.segment_id(OTHER, "t2")))
    graph.link_segments(USER, mine1, [(mine2, 0.9)])
    graph.link_segments(OTHER, theirs1, [(theirs2, 0.8)])
    graph.set_relations(USER, [(mine1, mine2, "continues", 0.5)])
    graph.upsert_knowledge(USER, [knowledge(USER, mine1)])
    graph.upsert_knowledge(OTHER, [knowledge(OTHER, theirs1)])
    assert graph.cross_user_edges() == []
    before = own_edges(graph)

    plant(graph, "ASSOCIATED", mine1, theirs1)
    plant(graph, "CONTINUES", theirs2, mine2)
    plant(graph, "LEARNED_FROM", ids.segment_id(USER, "fact"), theirs2)
    plant(graph, "MENTIONS", mine2, concept_of(graph, OTHER, theirs1))
    plant(graph, "SUPERSEDES", ids.segment_id(OTHER, "fact"), ids.segment_id(USER, "fact"))
    plant(graph, "FACT_CONTRADICTS", ids.segment_id(USER, "fact"), ids.segment_id(OTHER, "fact"))
    planted = {("ASSOCIATED", USER, OTHER), ("CONTINUES", OTHER, USER), ("LEARNED_FROM", USER, OTHER),
               ("MENTIONS", USER, OTHER), ("SUPERSEDES", OTHER, USER), ("FACT_CONTRADICTS", USER, OTHER)}
    if not isinstance(graph, PostgresGraph):
        plant(graph, "HAD", USER, theirs2)
        planted.add(("HAD", USER, OTHER))
    found = graph.cross_user_edges()
    assert {(r["kind"], r["a_user"], r["b_user"]) for r in found} == planted
    assert graph.cross_user_edges() == found  # listing changes nothing

    removed = graph.cross_user_edges(delete=True)
    assert removed == found
    assert graph.cross_user_edges() == []
    assert own_edges(graph) == before  # both users' own edges intact
    assert graph.counts(USER).nodes["Segment"] == 2 and graph.counts(OTHER).nodes["Segment"] == 2


def test_upkeep_removes_a_planted_cross_user_edge_and_counts_it_on_every_graph_adapter(graph, tmp_path):
    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    try:
        services = SimpleNamespace(stores=SimpleNamespace(graph=graph, archive=archive))
        mine, mine2 = stored(graph, archive, segment(USER, 1)), stored(graph, archive, segment(USER, 2))
        theirs, theirs2 = stored(graph, archive, segment(OTHER, 1)), stored(graph, archive, segment(OTHER, 2))
        graph.link_segments(USER, mine, [(mine2, 0.9)])
        graph.link_segments(OTHER, theirs, [(theirs2, 0.9)])
        plant(graph, "ASSOCIATED", mine, theirs)

        reported = graph_integrity(services, repair=False)
        assert reported["cross_user_edges"] == 1 and reported["cross_user_removed"] == {}
        assert len(graph.cross_user_edges()) == 1  # reported, not touched

        repaired = graph_integrity(services, repair=True)
        assert repaired["cross_user_edges"] == 1 and repaired["cross_user_removed"] == {"ASSOCIATED": 1}
        assert graph.cross_user_edges() == []
        assert {s for s, _ in graph.associated(USER, [mine], 10)} == {mine2}
        assert {s for s, _ in graph.associated(OTHER, [theirs], 10)} == {theirs2}
        again = graph_integrity(services, repair=True)
        assert again["cross_user_edges"] == 0 and again["cross_user_removed"] == {}
    finally:
        archive.close()


def test_the_maintenance_run_removes_a_cross_user_edge_and_records_it_for_both_users(memory_factory):
    from lumina_memory.graphs.maintenance_graph import run_maintenance
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.activity import activity_log
    from lumina_memory.nodes.store_upkeep import REPAIRED
    from lumina_memory.stores.factory import open_audit_log
    from lumina_memory.stores.secret import memory_secret
    from tests.test_store_upkeep import conversation

    mem = memory_factory()
    for user in (USER, OTHER):
        replay(mem.graph, user, conversation(user), flush=True)
    services = mem.services
    graph = services.stores.graph
    mine, theirs = (services.stores.archive.segments(u)[0].segment_id for u in (USER, OTHER))
    plant(graph, "ASSOCIATED", mine, theirs)
    before = {u: graph.counts(u).nodes["Segment"] for u in (USER, OTHER)}

    report = run_maintenance(services, force=True)["store_upkeep"]["graph"]
    assert report["cross_user_edges"] == 1 and report["cross_user_removed"] == {"ASSOCIATED": 1}
    assert graph.cross_user_edges() == []
    assert {u: graph.counts(u).nodes["Segment"] for u in (USER, OTHER)} == before
    trail = open_audit_log(services.stores.archive, memory_secret(services.settings))
    rows = [r for r in trail.rows() if r["event"] == REPAIRED]
    assert sorted(r["user_ref"] for r in rows) == sorted(trail.ref(u) for u in (USER, OTHER))
    assert all(json.loads(r["detail"]) == {"cross_user_edges": 1} for r in rows)
    for user in (USER, OTHER):
        events = [e for e in activity_log(services.settings).events(user) if e.get("event") == REPAIRED]
        assert len(events) == 1 and events[0]["cross_user_edges"] == 1
    # Nothing left to repair: the next forced run records nothing more.
    assert run_maintenance(services, force=True)["store_upkeep"]["graph"]["cross_user_edges"] == 0
    assert len([r for r in trail.rows() if r["event"] == REPAIRED]) == 2


def test_doctor_flags_a_cross_user_edge_on_every_graph_backend(graph, tmp_path, request):
    from lumina_memory.graphs.doctor import FAIL, OK, _Doctor
    from tests.conftest import make_settings

    where = {"ladybug": lambda: {},  # the fixture's graph is the data dir's: tmp_path / "graph"
             "postgres": lambda: {"database_url": request.getfixturevalue("pg_uri")},
             "neo4j": lambda: {"neo4j_uri": f"bolt://127.0.0.1:{request.getfixturevalue('bolt_port')}"}}
    settings = make_settings(tmp_path, **where[graph.backend]())
    mine, theirs = (graph.upsert_segment(u, ids.segment_id(u, "t1"), ["lumina"], ["散歩"], "海辺", 1.0, 0.5)
                    or ids.segment_id(u, "t1") for u in (USER, OTHER))

    def boundary():
        if graph.backend == "ladybug":
            graph.close()  # the doctor opens the embedded graph read-only, as from another process
        try:
            [row] = _Doctor(settings).graph_boundary_checks()
        finally:
            if graph.backend == "neo4j":
                from tests.falkordb_bolt import absorb_handshake_hang

                absorb_handshake_hang(request.getfixturevalue("bolt_port"))  # the doctor's driver said GOODBYE
        return row

    clean = boundary()
    assert (clean.component, clean.check, clean.status) == ("graph", "user boundary", OK), clean
    if graph.backend == "ladybug":
        graph = type(graph)(tmp_path / "graph")
        request.addfinalizer(graph.close)
    plant(graph, "ASSOCIATED", mine, theirs)
    flagged = boundary()
    assert flagged.status == FAIL and "1 edge(s) join two users' nodes (ASSOCIATED 1)" in flagged.detail


def test_upkeep_counts_the_dangling_edges_its_orphan_removal_takes(graph, tmp_path):
    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    try:
        services = SimpleNamespace(stores=SimpleNamespace(graph=graph, archive=archive))
        a, b = stored(graph, archive, segment(USER, 1)), stored(graph, archive, segment(USER, 2))
        ghost = ids.segment_id(USER, "ghost")  # only the graph holds it: an orphan, linked from both real ones
        graph.upsert_segment(USER, ghost, ["nox"], ["幽霊"], "the archive never had this", 9.0, 0.5)
        graph.link_segments(USER, a, [(b, 0.9), (ghost, 0.8)])
        graph.link_segments(USER, b, [(ghost, 0.7)])

        reported = graph_integrity(services, repair=False)
        assert reported["dangling_edges"] == {"ASSOCIATED": 2} and reported["dangling_removed"] == 0
        repaired = graph_integrity(services, repair=True)
        assert repaired["orphans_removed"] == 1 and repaired["dangling_removed"] == 2
        assert {(str(r["a"]), str(r["b"])) for r in graph.dump()["ASSOCIATED"]} == {(a, b)}
    finally:
        archive.close()
