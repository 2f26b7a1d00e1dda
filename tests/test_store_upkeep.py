"""Store maintenance (nodes.store_upkeep): the integrity check of the graph against the archive, on every graph
adapter with a dangling edge planted in a real graph store, reached through the maintenance graph on the embedded
defaults; and the compaction of the archive's DuckDB file."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.store_upkeep import graph_integrity
from lumina_memory.stores import ids
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.models import SegmentRecord, Turn
from tests.test_graph_conformance import bolt_driver, bolt_port, graph  # noqa: F401 - fixtures: every adapter
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

USER, OTHER = "kana", "ren"
pytestmark = pytest.mark.slow  # servers for two adapters, a whole maintenance run, a 20,000-turn archive


def segment(user: str, n: int) -> SegmentRecord:
    return SegmentRecord(segment_id=ids.segment_id(user, f"t{n}"), user_id=user, turn_ids=[f"t{n}"],
                         source_ids=[f"t{n}"], start_ts=float(n), end_ts=float(n) + 1, summary=f"海辺の散歩 {n}")


def stored(graph, archive, record: SegmentRecord) -> str:
    """A segment as ingest leaves it: in the archive and in the graph."""
    archive.put_segment(record)
    graph.upsert_segment(record.user_id, record.segment_id, ["lumina"], ["散歩"], record.summary, record.start_ts, 0.5)
    return record.segment_id


def test_a_planted_dangling_edge_is_found_and_its_orphan_removed_on_every_graph_adapter(graph, tmp_path):
    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    try:
        services = SimpleNamespace(stores=SimpleNamespace(graph=graph, archive=archive))
        a, b = stored(graph, archive, segment(USER, 1)), stored(graph, archive, segment(USER, 2))
        other = stored(graph, archive, segment(OTHER, 1))
        graph.link_segments(USER, a, [(b, 0.9)])
        clean = graph_integrity(services, repair=True)
        assert clean["orphan_segments"] == 0 and clean["dangling_edges"] == {} and clean["orphans_removed"] == 0

        # Planted: a segment only the graph holds (the archive never had it), linked from a real one.
        ghost = ids.segment_id(USER, "ghost")
        graph.upsert_segment(USER, ghost, ["nox"], ["幽霊"], "the archive never had this", 9.0, 0.5)
        graph.link_segments(USER, a, [(ghost, 0.8)])
        found = graph_integrity(services, repair=False)
        assert found["orphan_segments"] == 1 and found["dangling_edges"] == {"ASSOCIATED": 1}
        assert found["orphans_removed"] == 0 and found["cross_user_edges"] == 0
        assert ghost in {s for s, _ in graph.associated(USER, [a], 10)}  # reported, not touched

        repaired = graph_integrity(services, repair=True)
        assert repaired["orphans_removed"] == 1
        assert {s for s, _ in graph.associated(USER, [a], 10)} == {b}  # the real edge stays
        assert {str(r["id"]) for r in graph.dump()["Segment"]} == {a, b, other}
        again = graph_integrity(services, repair=True)
        assert again["orphan_segments"] == 0 and again["dangling_edges"] == {}
    finally:
        archive.close()


def conversation(user: str) -> list[dict]:
    lines = ["週末は海辺を散歩した", "いいね、どうだった？", "風が強かったけど楽しかった", "また行こうね"]
    return [{"speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": 1_767_225_600.0 + i * 60, "user_id": user}
            for i, t in enumerate(lines)]


def test_the_maintenance_graph_reports_and_removes_an_orphan_of_the_embedded_graph(memory_factory):
    mem = memory_factory()
    replay(mem.graph, USER, conversation(USER), flush=True)
    services = mem.services
    real = [s.segment_id for s in services.stores.archive.segments(USER)]
    assert real
    ghost = ids.segment_id(USER, "ghost")
    services.stores.graph.upsert_segment(USER, ghost, ["nox"], ["幽霊"], "never archived", 1.0, 0.5)
    services.stores.graph.link_segments(USER, real[0], [(ghost, 0.8)])

    report = run_maintenance(services)["store_upkeep"]
    assert report["due"] is True
    assert report["graph"]["orphan_segments"] == 1 and report["graph"]["dangling_edges"] == {"ASSOCIATED": 1}
    assert report["graph"]["orphans_removed"] == 1
    assert report["archive"]["relations_to_missing_memories"] == 0
    assert report["archive_file"]["engine"] == "duckdb"
    assert ghost not in {str(r["id"]) for r in services.stores.graph.dump()["Segment"]}
    assert set(real) <= {str(r["id"]) for r in services.stores.graph.dump()["Segment"]}
    # Daily: the next run within the day does not read the graph again, unless forced.
    services.stores.graph.upsert_segment(USER, ghost, ["nox"], ["幽霊"], "never archived", 1.0, 0.5)
    assert run_maintenance(services)["store_upkeep"]["due"] is False
    forced = run_maintenance(services, force=True)["store_upkeep"]
    assert forced["due"] is True and forced["graph"]["orphans_removed"] == 1


def test_compaction_rewrites_a_mostly_free_archive_file_and_keeps_every_row(tmp_path):
    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    try:
        turns = [Turn(turn_id=f"t{n}", source_id=f"t{n}", user_id=USER, speaker="user", text="海辺の散歩 " * 40 + str(n),
                      ts=float(n)) for n in range(20_000)]
        archive.put_turns(turns)
        assert archive.compact(free_share=0.5)["dead_row_share"] == 0.0  # checkpointed: the rows are in the file
        archive.delete_turns(USER, [t.turn_id for t in turns[:19_000]])
        kept = archive.compact(free_share=1.0)  # never rewritten: a checkpoint only
        assert kept["rewritten"] is False and kept["dead_row_share"] > 0.9
        size = (tmp_path / "archive.duckdb").stat().st_size
        compacted = archive.compact(free_share=0.5)
        assert compacted["rewritten"] is True and compacted["blocks_after"] < compacted["blocks"]
        assert compacted["dead_row_share_after"] == 0.0 and (tmp_path / "archive.duckdb").stat().st_size < size / 2
        assert archive.counts(USER)["turns"] == 1_000
        assert archive.compact(free_share=0.5)["rewritten"] is False  # nothing left to reclaim
    finally:
        archive.close()


def test_an_edge_between_two_users_segments_is_reported(tmp_path):
    from lumina_memory.stores.graph_ladybug import LadybugGraph

    graph, archive = LadybugGraph(tmp_path / "graph"), DuckDBArchive(tmp_path / "archive.duckdb")
    try:
        services = SimpleNamespace(stores=SimpleNamespace(graph=graph, archive=archive))
        mine, theirs = stored(graph, archive, segment(USER, 1)), stored(graph, archive, segment(OTHER, 1))
        graph.link_segments(USER, mine, [(theirs, 0.7)])  # the protocol never links across users...
        assert graph_integrity(services, repair=True)["cross_user_edges"] == 0
        # ...so the breach is planted underneath it, as a bug or a hand-edited store would leave it.
        graph._write([("MATCH (s:Segment {id: $a}), (t:Segment {id: $b}) CREATE (s)-[:ASSOCIATED {score: 0.7}]->(t)",
                       {"a": mine, "b": theirs})])
        found = graph_integrity(services, repair=True)
        assert found["cross_user_edges"] == 1 and found["orphan_segments"] == 0 and found["orphans_removed"] == 0
    finally:
        graph.close()
        archive.close()


def test_compaction_on_postgresql_leaves_the_tables_to_the_servers_autovacuum(pg_uri):
    from lumina_memory.stores.archive_postgres import PostgresArchive

    with PostgresArchive(pg_uri, timeout=10) as archive:
        archive.put_segment(segment(USER, 1))
        assert archive.compact(free_share=0.0) == {"engine": "postgres", "action": "none (the server's autovacuum)"}
        assert archive.counts(USER)["segments"] == 1
