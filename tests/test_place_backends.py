"""The graph and vector places on every backend: the embedded ones (ladybug, qdrant-edge) and the
production adapters (Neo4j through FalkorDB's Bolt endpoint, qdrant-client in local mode): count, erase,
scrub, export, restore and forget_in_export, with another user untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import neo4j
import numpy as np
import pytest

from lumina_memory.stores import ids
from lumina_memory.stores.graph_ladybug import LadybugGraph
from lumina_memory.stores.graph_neo4j import Neo4jGraph
from lumina_memory.stores.places.graph_place import GraphPlace
from lumina_memory.stores.places.vector_place import VectorPlace
from lumina_memory.stores.vector_filters import PreparedPoint
from lumina_memory.stores.vectors_client import ClientVectorStore
from lumina_memory.stores.vectors_edge import EdgeVectorStore
from tests.falkordb_bolt import absorb_handshake_hang, falkordb_bolt

USERS = {"pia": "PIAMARKQV", "pia2": "KEEPMARKQU"}
DIM = 16


def _raw(paths: list[Path]) -> bytes:
    out = b""
    for root in paths:
        files = [root] if root.is_file() else list(root.rglob("*")) if root.exists() else []
        out += b"".join(p.read_bytes() for p in files if p.is_file())
    return out


# --- graph -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bolt_driver(tmp_path_factory) -> Iterator[neo4j.Driver]:
    with falkordb_bolt(tmp_path_factory.mktemp("falkordb")) as port:
        absorb_handshake_hang(port)
        driver = neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None)
        try:
            yield driver
        finally:
            driver.close()


def _graph(kind: str, where: Path, request):
    if kind == "ladybug":
        return LadybugGraph(where / "graph")
    driver = request.getfixturevalue("bolt_driver")
    driver.execute_query("MATCH (n) DETACH DELETE n")
    return Neo4jGraph(driver)


def _fill_graph(graph) -> None:
    for user, mark in USERS.items():
        segs = [ids.segment_id(user, f"t{i}") for i in range(3)]
        for i, seg in enumerate(segs):
            graph.upsert_linked_segment(user, seg, ["lumina", "nox"], [f"猫{i}", mark], f"summary {mark} {i}",
                                        1_760_000_000.0 + i, 0.5, [(s, 0.8) for s in segs[:i]])
        graph.set_relations(user, [(segs[0], segs[1], "continues", 0.9), (segs[2], segs[0], "same_topic", 0.87)])


@pytest.mark.parametrize("kind", ["ladybug", "neo4j"])
def test_graph_place(kind, tmp_path, request):
    graph = _graph(kind, tmp_path, request)
    try:
        _fill_graph(graph)
        place = GraphPlace(graph)
        assert place.count("pia") == 1 + 3 + 4 and place.count("pia2") == 8  # User, Segments, Concepts
        kept, kept_relations = graph.counts("pia2"), graph.relations("pia2")
        assert len(kept_relations) == 2 and kept.edges["CONTINUES"] == 1
        assert place.export(tmp_path / "exp") > 0
        assert place.erase("pia") == 8
        place.scrub()
        assert place.count("pia") == 0 and graph.counts("pia2") == kept and graph.relations("pia") == []
        assert graph.associated("pia2", [ids.segment_id("pia2", "t0")], 5)
        assert graph.relations("pia2") == kept_relations  # the rewrite (ladybug) carried them over
        if kind == "ladybug":  # the rewrite leaves no freed page holding her strings
            raw = _raw(place.raw_paths())
            assert USERS["pia"].encode() not in raw and USERS["pia2"].encode() in raw
        # Back up -> restore into an empty graph, leaving out an erased user.
        for statement in ("MATCH (n:Segment) DETACH DELETE n", "MATCH (n:Concept) DETACH DELETE n",
                          "MATCH (n:User) DETACH DELETE n"):
            graph._write([(statement, {})])
        assert place.restore(tmp_path / "exp", lambda u: u == "pia") > 0
        assert place.count("pia") == 0 and graph.counts("pia2") == kept
        assert graph.relations("pia2") == kept_relations and graph.relations("pia") == []
        assert graph.segments_for_concepts("pia2", ["猫1"], 5) == [(ids.segment_id("pia2", "t1"), 1)]
        # ...and erasing her from the export itself.
        assert place.forget_in_export(tmp_path / "exp", "pia") > 0
        assert USERS["pia"].encode() not in _raw([tmp_path / "exp"])
    finally:
        graph.close()


# --- vectors -----------------------------------------------------------------------------------------
def _vectors(kind: str, where: Path):
    name = ids.collection_name("segments", "test", DIM)
    if kind == "edge":
        return EdgeVectorStore(where / name, name, DIM, "test")
    return ClientVectorStore.local(where / "local", name, DIM, "test")


@pytest.mark.parametrize("kind", ["edge", "client"])
def test_vector_place(kind, tmp_path):
    rng = np.random.default_rng(0)
    store = _vectors(kind, tmp_path / "a")
    try:
        points = [PreparedPoint(ids.point_id(u, f"s{i}"), (rng.normal(size=DIM)).tolist(),
                                {"user_id": u, "segment_id": f"s{i}", "text": f"{m} {i}", "characters": ["nox"],
                                 "end_ts": 1.0, "importance": 0.5})
                  for u, m in USERS.items() for i in range(20)]
        store.write_points(points)
        place = VectorPlace("vectors.segments", store)
        assert place.count("pia") == 20 and place.export(tmp_path / "exp") == 40
        assert place.erase("pia") == 20
        place.scrub()
        assert place.count("pia") == 0 and place.count("pia2") == 20
        raw = _raw(place.raw_paths())
        assert USERS["pia"].encode() not in raw and USERS["pia2"].encode() in raw
        query = points[25].vector
        assert store.search("pia2", query, 1)[0].payload["segment_id"] == "s5"
    finally:
        store.close()
    fresh = _vectors(kind, tmp_path / "b")
    try:
        place = VectorPlace("vectors.segments", fresh)
        assert place.restore(tmp_path / "exp", lambda u: u == "pia") == 20
        assert place.count("pia") == 0 and place.count("pia2") == 20
        assert place.forget_in_export(tmp_path / "exp", "pia") == 20
    finally:
        fresh.close()
