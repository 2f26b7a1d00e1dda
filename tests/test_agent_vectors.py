"""Agents' vectors (stores.agent_vectors): one conformance suite over every engine reachable here.

qdrant-edge runs in-process in the test's tmp dir; the Qdrant adapter runs on qdrant-client's local mode (no
Qdrant server binary on these machines, as in tests/test_vectors_conformance.py); pgvector runs on the private
PostgreSQL of tests.pg_server, a database per test.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from lumina_memory.stores import ids
from lumina_memory.stores.agent_vectors import LAYER_KINDS, LAYERS, AgentVectorSet, _layer_class, open_agent_vectors
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.protocols_agents import AgentVectors
from lumina_memory.stores.settings_agents import AgentParams
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401

DIM = 16
EMBEDDER = "test-embedder"
BACKENDS = ["edge", "client", "pgvector"]

Opener = Callable[..., AgentVectorSet]


def _open(kind: str, data_dir: Path, uri: str | None, quantization: str, dim: int) -> AgentVectorSet:
    """The three layers on one engine, LTM quantised as asked: through open_agent_vectors as the stores open them,
    except qdrant-client's local mode, which the settings cannot name (they name a server by its URL)."""
    if kind != "client":
        settings = make_settings(data_dir, database_url=uri, agents=AgentParams(quantization=quantization))
        return open_agent_vectors(settings, EMBEDDER, dim)
    stores = {}
    for layer in LAYERS:
        collection = ids.collection_name(LAYER_KINDS[layer], EMBEDDER, dim)
        mode = quantization if layer == "ltm" else "none"
        stores[layer] = _layer_class("qdrant", mode).local(data_dir / layer, collection, dim, EMBEDDER)
    return AgentVectorSet(stores, dim)


@pytest.fixture(params=BACKENDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """open(quantization=..., dim=...) -> the agent vectors of this test's tmp dir (or database); closed after."""
    uri = request.getfixturevalue("pg_uri") if request.param == "pgvector" else None

    def open_(quantization: str = "none", dim: int = DIM) -> AgentVectorSet:
        store = _open(request.param, tmp_path, uri, quantization, dim)
        request.addfinalizer(store.close)  # with this fixture, before pg_uri drops the database
        return store

    return open_


@pytest.fixture
def vectors(opener: Opener) -> AgentVectorSet:
    return opener()


def units(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def clustered(rng: np.random.Generator, clusters: int, per: int, dim: int, spread: float) -> np.ndarray:
    """Points around ``clusters`` random centres: near neighbours are close calls, as real embeddings are."""
    centres = units(rng, clusters, dim)
    points = np.repeat(centres, per, axis=0) + rng.normal(scale=spread, size=(clusters * per, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def exact_top(data: np.ndarray, names: list[str], query: np.ndarray, k: int) -> list[str]:
    scores = data @ (query / np.linalg.norm(query))
    return [names[i] for i in np.argsort(-scores, kind="stable")[:k]]


def test_is_the_protocol_and_names_its_engine(vectors: AgentVectorSet) -> None:
    assert isinstance(vectors, AgentVectors)
    assert vectors.backend in ("qdrant-edge", "qdrant", "pgvector")
    assert vectors.dim == DIM and vectors.quantization == "none"
    assert {store.collection for store in vectors.collections()} == {
        f"lumina_agent_{layer}_test_embedder_{DIM}" for layer in LAYERS}


def test_upsert_search_count_and_points(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(1)
    data = units(rng, 40)
    names = [f"m{i}" for i in range(40)]
    assert vectors.upsert("ltm", "agent-1", names, data) == 40
    assert vectors.upsert("ltm", "agent-1", names[:5], data[:5]) == 5  # replaced, not added
    assert vectors.count("ltm", "agent-1") == 40 and vectors.count("ltm") == 40
    assert vectors.count("stm", "agent-1") == 0 and vectors.count("shared") == 0
    hits = vectors.search("ltm", "agent-1", data[7], 5)
    assert [h[0] for h in hits] == exact_top(data, names, data[7], 5)
    assert hits[0][1] == pytest.approx(1.0, abs=1e-4)
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:]))
    assert vectors.search("ltm", "agent-1", data[7], 0) == []
    assert vectors.search("ltm", "nobody", data[7], 5) == []
    rows = list(vectors.points("ltm"))
    assert len(rows) == 40 and {r[2]["item_id"] for r in rows} == set(names)
    assert all(r[2]["user_id"] == "agent-1" and len(r[1]) == DIM for r in rows)


def test_among_filters_inside_the_search(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(2)
    data = clustered(rng, 4, 50, DIM, 0.05)
    names = [f"e{i}" for i in range(200)]
    vectors.upsert("stm", "agent-1", names, data)
    # The query sits in cluster 0; the ids asked for are in cluster 3, far below any top-k of the whole tenant.
    among = ["e150", "e170", "e199", "missing-id"]
    hits = vectors.search("stm", "agent-1", data[0], 10, among=among)
    assert [h[0] for h in hits] == exact_top(data[[150, 170, 199]], ["e150", "e170", "e199"], data[0], 3)
    assert vectors.search("stm", "agent-1", data[0], 2, among=among)[0][0] == hits[0][0]
    assert vectors.search("stm", "agent-1", data[0], 10, among=[]) == []
    vectors.upsert("stm", "agent-2", ["e150"], data[:1])
    assert [h[0] for h in vectors.search("stm", "agent-2", data[0], 10, among=among)] == ["e150"]


def test_vectors_of_delete_and_delete_tenant(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(3)
    data = units(rng, 6)
    vectors.upsert("shared", "run-1", [f"s{i}" for i in range(6)], data)
    got = vectors.vectors_of("shared", "run-1", ["s1", "s4", "absent"])
    assert set(got) == {"s1", "s4"} and got["s1"].dtype == np.float32
    np.testing.assert_allclose(got["s4"], data[4], atol=1e-5)
    assert vectors.vectors_of("shared", "run-1", []) == {}
    assert vectors.delete("shared", "run-1", ["s1", "s2", "absent"]) == 2
    assert vectors.delete("shared", "run-1", ["s1"]) == 0
    assert vectors.count("shared", "run-1") == 4
    assert "s1" not in dict(vectors.search("shared", "run-1", data[1], 10))
    assert vectors.delete_tenant("shared", "run-1") == 4
    assert vectors.delete_tenant("shared", "run-1") == 0
    assert vectors.count("shared") == 0 and list(vectors.points("shared")) == []


def test_tenants_are_isolated_even_with_look_alike_ids(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(4)
    tenants = ["agent-1", "Agent-1", "agent-1:", "agent-10", "agent_1"]
    data = {t: units(rng, 3) for t in tenants}
    for t in tenants:
        vectors.upsert("ltm", t, ["m0", "m1", "m2"], data[t])
    for t in tenants:
        assert vectors.count("ltm", t) == 3
        for i in range(3):
            # The other tenants hold the same ids, some with nearer vectors: only this tenant's come back.
            hits = vectors.search("ltm", t, data[t][i], 10)
            assert len(hits) == 3 and hits[0] == (f"m{i}", pytest.approx(1.0, abs=1e-4))
        got = vectors.vectors_of("ltm", t, ["m0", "m1", "m2"])
        for i in range(3):
            np.testing.assert_allclose(got[f"m{i}"], data[t][i], atol=1e-5)
    assert vectors.delete("ltm", "agent-1", ["m0"]) == 1
    assert vectors.delete_tenant("ltm", "Agent-1") == 3
    assert [vectors.count("ltm", t) for t in tenants] == [2, 0, 3, 3, 3]
    assert vectors.count("ltm") == 11


HOSTILE = ["../x", "'; DROP TABLE lumina_vector_collections; --", "a\" OR 1=1", "MATCH (n) DETACH DELETE n",
           "a/b", "a..b", "", " ", "x" * 129, "bad\ud800id", "nul\x00id", "日本語"]


def test_hostile_ids_are_refused_and_nothing_is_written(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(5)
    data = units(rng, 2)
    for bad in HOSTILE:
        calls = [lambda: vectors.upsert("stm", bad, ["e1"], data[:1]),
                 lambda: vectors.upsert("stm", "agent-1", ["e1", bad], data),  # the good id is not written either
                 lambda: vectors.search("stm", bad, data[0], 5), lambda: vectors.vectors_of("stm", bad, ["e1"]),
                 lambda: vectors.delete("stm", bad, ["e1"]), lambda: vectors.delete_tenant("stm", bad),
                 lambda: vectors.count("stm", bad), lambda: vectors.search("stm", "agent-1", data[0], 5, among=[bad]),
                 lambda: vectors.delete("stm", "agent-1", [bad])]
        for call in calls:
            with pytest.raises(InvalidInput):
                call()
    assert vectors.count("stm") == 0


def test_long_ids_and_large_batches_are_kept(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(6)
    tenant, item = "a" * 128, "e" * 127 + "1"
    names = [f"e{i}" for i in range(1_499)] + [item]
    data = units(rng, 1_500)
    assert vectors.upsert("stm", tenant, names, data) == 1_500
    assert vectors.count("stm", tenant) == 1_500
    assert vectors.search("stm", tenant, data[-1], 1)[0][0] == item
    assert vectors.upsert("stm", tenant, [], np.zeros((0, DIM), dtype=np.float32)) == 0


def test_bad_layers_vectors_and_limits_are_refused(vectors: AgentVectorSet) -> None:
    rng = np.random.default_rng(7)
    good = units(rng, 2)
    bad_calls = [
        lambda: vectors.upsert("wm", "agent-1", ["e1"], good[:1]),  # not a vector layer
        lambda: vectors.search("ltm; DROP TABLE x", "agent-1", good[0], 5),
        lambda: vectors.count(None, "agent-1"),  # type: ignore[arg-type]
        lambda: vectors.upsert("stm", "agent-1", ["e1", "e2"], [good[0], good[1][:-1]]),  # one of wrong dimension
        lambda: vectors.upsert("stm", "agent-1", ["e1"], [np.zeros(DIM)]),  # no direction
        lambda: vectors.upsert("stm", "agent-1", ["e1"], [np.full(DIM, np.nan)]),
        lambda: vectors.upsert("stm", "agent-1", ["e1", "e2"], good[:1]),  # one vector short
        lambda: vectors.upsert("stm", "agent-1", "e1", good[:1]),  # a single string is not a list of ids
        lambda: vectors.search("stm", "agent-1", good[0][:-1], 5),  # wrong dimension
        lambda: vectors.search("stm", "agent-1", good[0], -1),
        lambda: vectors.search("stm", "agent-1", good[0], True),  # type: ignore[arg-type]
        lambda: vectors.search("stm", "agent-1", good[0], 5, among="e1"),  # type: ignore[arg-type]
    ]
    for call in bad_calls:
        with pytest.raises(InvalidInput):
            call()
    assert sum(vectors.count(layer) for layer in LAYERS) == 0


def test_a_reopened_store_keeps_its_points(opener: Opener) -> None:
    rng = np.random.default_rng(8)
    data = units(rng, 5)
    first = opener()
    first.upsert("ltm", "agent-1", [f"m{i}" for i in range(5)], data)
    first.close()
    again = opener()
    assert again.count("ltm", "agent-1") == 5
    assert again.search("ltm", "agent-1", data[2], 1)[0][0] == "m2"


@pytest.mark.parametrize("mode", ["scalar", "binary"])
def test_quantised_modes_find_the_nearest_on_clustered_data(opener: Opener, mode: str) -> None:
    dim = 64
    rng = np.random.default_rng(9)
    data = clustered(rng, 10, 40, dim, 0.12)
    names = [f"m{i}" for i in range(len(data))]
    store = opener(quantization=mode, dim=dim)
    assert store.quantization == ("none" if store.backend == "qdrant" else mode)  # qdrant-client's local mode has none
    assert store.collections()[0].quantization == "none"  # STM stays full
    store.upsert("ltm", "agent-1", names, data)
    store.upsert("ltm", "agent-2", names, clustered(rng, 10, 40, dim, 0.12))
    store.optimize()
    for target in range(0, len(data), 37):
        query = data[target] + rng.normal(scale=0.01, size=dim).astype(np.float32)
        hits = store.search("ltm", "agent-1", query, 10)
        assert hits[0][0] == names[target]
        assert hits[0][1] == pytest.approx(float(data[target] @ (query / np.linalg.norm(query))), abs=1e-3)
        assert len(hits) == 10 and all(a[1] >= b[1] for a, b in zip(hits, hits[1:]))
        among = [names[target], names[(target + 200) % len(names)]]
        assert {h[0] for h in store.search("ltm", "agent-1", query, 10, among=among)} == set(among)


def test_open_agent_vectors_follows_the_settings_and_logs_the_mode(tmp_path: Path, pg_uri: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lumina")
    embedded = make_settings(tmp_path, agents=AgentParams(quantization="binary"))
    store = open_agent_vectors(embedded, EMBEDDER, DIM)
    try:
        assert store.backend == "qdrant-edge" and store.quantization == "binary"
        assert all((tmp_path / "qdrant" / ids.collection_name(kind, EMBEDDER, DIM)).is_dir()
                   for kind in LAYER_KINDS.values())
    finally:
        store.close()
    assert "quantization 'binary'" in caplog.text
    server = make_settings(tmp_path / "server", database_url=pg_uri, agents=AgentParams(quantization="scalar"))
    store = open_agent_vectors(server, EMBEDDER, DIM)
    try:
        assert store.backend == "pgvector" and store.quantization == "scalar"
    finally:
        store.close()
