"""PostgresGraph beyond the shared conformance suite (tests/test_graph_conformance.py runs that on it too):
several processes on one database, every statement CypherGraph sends has its SQL, text PostgreSQL cannot
store, what the rewrite reaches, a server that is not there. All on the private PostgreSQL (tests/pg_server.py).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lumina_memory.stores import cypher, cypher_backup, ids
from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.graph_base import LinkedSegment
from lumina_memory.stores.graph_pg import PostgresGraph, _READS, _WRITES
from lumina_memory.stores.graph_pg_sql import TABLES
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

A, B = "alice", "bob"
ROOT = Path(__file__).resolve().parents[1]


def seg(user: str, n: int) -> str:
    return ids.segment_id(user, f"turn-{n}")


@pytest.fixture
def graph(pg_uri):
    store = PostgresGraph(pg_uri, timeout=30.0)
    try:
        yield store
    finally:
        store.close()


def _statements_of(module) -> set[str]:
    found: set[str] = set()
    for name, value in vars(module).items():
        if name.isupper() and not name.startswith(("LADYBUG_", "NEO4J_", "_")):
            values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
            found |= {v for v in values if isinstance(v, str) and any(w in v for w in ("MATCH", "MERGE", "UNWIND"))}
    return found


def test_every_statement_the_shared_logic_sends_has_its_sql():
    """A Cypher statement added or edited in stores.cypher* without its SQL form fails here, not in production."""
    statements = _statements_of(cypher) | _statements_of(cypher_backup)
    missing = [s.strip()[:70] for s in statements if s not in _READS and s not in _WRITES]
    assert len(statements) > 60 and missing == []


def test_two_stores_on_one_database_see_each_other_and_make_a_new_segments_edges_once(pg_uri):
    """Two PostgresGraph objects hold their own connections, as two processes do: both write the same new
    segments at the same moment (the batch path for new segments and the one-segment path) and its nodes and
    edges exist once; segments sharing concepts written in opposite orders do not deadlock."""
    first, second = PostgresGraph(pg_uri, timeout=30.0), PostgresGraph(pg_uri, timeout=30.0)
    try:
        s1, s2 = seg(A, 1), seg(A, 2)
        batch = [LinkedSegment(s1, ["lumina", "nox"], ["猫", "映画", "旅行"], "one", 1.0, 0.5, []),
                 LinkedSegment(s2, ["clarisse"], ["旅行", "猫"], "two", 2.0, 0.6, [(s1, 0.8)])]
        start = threading.Barrier(8)
        errors: list[BaseException] = []

        def write(store: PostgresGraph, n: int) -> None:
            try:
                start.wait()
                if n % 2:
                    store.upsert_linked_segments(A, batch)
                else:
                    store.upsert_segment(A, s1, ["lumina", "nox"], ["猫", "映画", "旅行"], "one", 1.0, 0.5)
                    # Another segment each, naming shared concepts in another order.
                    store.upsert_segment(A, seg(A, 10 + n), ["nox"], ["旅行", "映画", "猫"][:: 1 if n % 4 else -1],
                                         f"x{n}", 3.0, 0.1)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(store, n)) for n, store in enumerate([first, second] * 4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        counts = second.counts(A)
        assert counts.nodes == {"User": 1, "Character": 3, "Segment": 2 + 4, "Concept": 3, "Knowledge": 0}
        assert counts.edges["HAD"] == 6 and counts.edges["PARTICIPATED"] == 3 + 4
        assert counts.edges["MENTIONS"] == 3 + 2 + 4 * 3 and counts.edges["ASSOCIATED"] == 1
        assert first.associated(A, [s1], 5) == [(s2, pytest.approx(0.8))]
        assert first.concepts_of(A, [s2]) == {s2: sorted(["旅行", "猫"])}
    finally:
        first.close()
        second.close()


def test_a_write_by_another_process_is_read_here_and_isolation_holds(graph, pg_uri):
    child = subprocess.run(
        [sys.executable, "-c",
         "import sys; from lumina_memory.stores.graph_pg import PostgresGraph; from lumina_memory.stores import ids\n"
         "g = PostgresGraph(sys.argv[1], timeout=30.0)\n"
         "g.upsert_segment('bob', ids.segment_id('bob', 'turn-1'), ['nox'], ['秘密'], 'from a child', 1.0, 0.5)\n"
         "g.close()", pg_uri],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert child.returncode == 0, child.stderr
    b1 = seg(B, 1)
    assert graph.segments_for_concepts(B, ["秘密"], 5) == [(b1, 1)]
    assert graph.segments_for_concepts(A, ["秘密"], 5) == [] and graph.concepts_of(A, [b1]) == {b1: []}
    with pytest.raises(InvalidInput, match="not found for this user"):
        graph.upsert_segment(A, b1, [], ["x"], "hijack", 1.0, 0.1)
    assert graph.select("SELECT summary FROM graph_segments WHERE id = ?", [b1]) == [{"summary": "from a child"}]


def test_opening_again_applies_the_schema_once(graph, pg_uri):
    again = PostgresGraph(pg_uri, timeout=30.0)
    try:
        from lumina_memory.stores.graph_pg_sql import SCHEMA

        steps = again.select("SELECT step FROM lumina_migrations WHERE component = ? ORDER BY step", ["graph"])
        assert steps == [{"step": n} for n in range(1, len(SCHEMA) + 1)]
        again.upsert_segment(A, seg(A, 1), ["nox"], ["猫"], "s", 1.0, 0.5)
        assert graph.counts(A).nodes["Segment"] == 1
    finally:
        again.close()


@pytest.mark.parametrize("text", ["lone \ud800 surrogate", "nul \x00 byte"])
def test_text_postgresql_cannot_store_is_named_invalid_input_and_writes_nothing(graph, text):
    from lumina_memory.stores.graph_base import KnowledgeNode

    s1, s2 = seg(A, 1), seg(A, 2)
    graph.upsert_segment(A, s1, ["nox"], ["猫"], "kept", 1.0, 0.5)
    before = graph.counts()
    calls = [lambda: graph.upsert_segment(A, s2, ["nox"], ["猫"], text, 2.0, 0.5),
             lambda: graph.upsert_linked_segments(A, [LinkedSegment(s2, [], ["ok"], text, 2.0, 0.5, [(s1, 0.5)])]),
             lambda: graph.upsert_knowledge(A, [KnowledgeNode("k1", "user", "drink", text, "positive", "current", [s1])])]
    if "\x00" in text:  # a concept's id is derived from its name, which a lone surrogate cannot even be hashed as
        calls.append(lambda: graph.upsert_segment(A, s2, ["nox"], ["ok", text], "s", 2.0, 0.5))
    for call in calls:
        with pytest.raises(InvalidInput, match="text"):
            call()
    assert graph.counts() == before and graph.concepts_of(A, [s1, s2]) == {s1: ["猫"], s2: []}


def _table_bytes(graph: PostgresGraph, data_dir: Path) -> bytes:
    """The graph's table and index files as they are on disk, after a checkpoint."""
    graph.select("CHECKPOINT")
    relations = graph.select(
        "SELECT pg_relation_filepath(c.oid) AS path FROM pg_class c WHERE c.relname = ANY(?::VARCHAR[]) "
        "OR c.oid IN (SELECT indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
        "WHERE t.relname = ANY(?::VARCHAR[]))", [list(TABLES), list(TABLES)])
    return b"".join((data_dir / r["path"]).read_bytes() for r in relations if (data_dir / r["path"]).exists())


def test_rewrite_takes_a_deleted_users_strings_out_of_the_table_files(graph):
    secret = "秘密の合言葉-7f3a"
    graph.upsert_segment(A, seg(A, 1), ["nox"], [secret], f"summary {secret}", 1.0, 0.5)
    kept = seg(B, 1)
    graph.upsert_segment(B, kept, ["nox"], ["残る"], "bob stays", 1.0, 0.5)
    data_dir = Path(graph.select("SHOW data_directory")[0]["data_directory"])
    assert secret.encode() in _table_bytes(graph, data_dir)
    assert graph.delete_user(A) == 1 + 1 + 1
    assert secret.encode() in _table_bytes(graph, data_dir)  # a delete only marks the tuples dead
    graph.rewrite()
    assert secret.encode() not in _table_bytes(graph, data_dir)
    assert graph.concepts_of(B, [kept]) == {kept: ["残る"]}


def test_a_server_that_is_not_there_is_store_unavailable(tmp_path):
    with pytest.raises(StoreUnavailable) as info:
        PostgresGraph(f"postgresql://postgres@/postgres?host={tmp_path}", timeout=1.0)
    assert info.value.tier == "graph"


def test_a_closed_store_is_store_unavailable(graph):
    graph.close()
    with pytest.raises(StoreUnavailable):
        graph.counts()


def test_from_settings_needs_a_database_url():
    from lumina_memory.stores.settings import LuminaSettings

    with pytest.raises(InvalidInput, match="database_url"):
        PostgresGraph.from_settings(LuminaSettings(LUMINA_DATABASE_URL=None))


def test_hostile_ids_are_refused_before_any_sql(graph):
    for hostile in ("../etc", "'; DROP TABLE graph_segments; --", "x') DETACH DELETE n //", "a b", ""):
        with pytest.raises(InvalidInput):
            graph.upsert_segment(hostile, seg(A, 1), [], [], "", 0.0, 0.0)
        with pytest.raises(InvalidInput):
            graph.associated(A, [hostile], 5)
    assert graph.select("SELECT count(*) AS n FROM graph_segments") == [{"n": 0}]


def test_a_ladybug_dump_loads_into_postgres_and_back_unchanged(graph, tmp_path):
    """Moving an embedded memory to the server mode: the backup rows of one adapter load into the other."""
    from lumina_memory.stores.graph_base import KnowledgeNode
    from lumina_memory.stores.graph_ladybug import LadybugGraph

    embedded = LadybugGraph(tmp_path / "graph")
    try:
        s = [seg(A, n) for n in range(4)]
        embedded.upsert_linked_segments(A, [
            LinkedSegment(s[0], ["lumina"], ["猫", "it's \"quoted\""], "zero", 1.0, 0.4, []),
            LinkedSegment(s[1], ["nox"], ["猫"], "one", 2.0, 0.6, [(s[0], 0.8)]),
            LinkedSegment(s[2], ["clarisse"], ["雨"], "two", 3.0, 0.5, [(s[1], 0.3)]),
            LinkedSegment(s[3], [], ["雨", "猫"], "three", 4.0, 0.9, [(s[0], 0.6)])])
        embedded.upsert_linked_segments(B, [LinkedSegment(seg(B, 0), ["nox"], ["猫"], "bob", 1.0, 0.5, [])])
        embedded.set_relations(A, [(s[0], s[1], "continues", 0.9), (s[3], s[2], "contradicts", 0.4)])
        embedded.upsert_knowledge(A, [KnowledgeNode("k1", "user", "pet", "猫", "positive", "superseded", [s[0]]),
                                      KnowledgeNode("k2", "user", "pet", "犬", "positive", "current", [s[1], s[3]])],
                                  [("k2", "k1")])
        rows = embedded.dump()

        def reads(store) -> list:
            return [store.counts(), store.counts(A), store.relations(A), store.knowledge(A),
                    store.associated(A, [s[0]], 10), store.segments_for_concepts(A, ["猫", "雨"], 10),
                    store.concepts_of(A, s), store.segments_per_user()]

        expected = reads(embedded)
        assert graph.load(rows) == sum(len(v) for v in rows.values())
        assert reads(graph) == expected
        assert graph.load(graph.dump()) and reads(graph) == expected  # loading again changes nothing
        back = LadybugGraph(tmp_path / "graph-back")
        try:
            back.load(graph.dump())
            assert reads(back) == expected
        finally:
            back.close()
    finally:
        embedded.close()
