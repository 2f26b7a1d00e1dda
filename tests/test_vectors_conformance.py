"""One conformance suite for every VectorStore adapter, each on its real engine.

qdrant-edge runs in-process in a temp dir; the qdrant-client adapter runs against qdrant-client's local mode
(``QdrantClient(path=tmp)``), the only Qdrant engine reachable without a server binary; the pgvector adapter runs
on a private PostgreSQL (tests.pg_server), a database per test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest

from lumina_memory.stores import ids
from lumina_memory.stores.errors import DataDirLocked, EmbedderMismatch, InvalidInput, StoreUnavailable
from lumina_memory.stores.models import SegmentRecord
from lumina_memory.stores.protocols import VectorStore
from lumina_memory.stores.vectors_client import ClientVectorStore
from lumina_memory.stores.vectors_edge import EdgeVectorStore
from lumina_memory.stores.vectors_pg import PgVectorStore
from tests.pg_server import pg_server, pg_uri  # noqa: F401

DIM = 16
EMBEDDER = "test-embedder"
COLLECTION = ids.collection_name("segments", EMBEDDER, DIM)

Opener = Callable[..., VectorStore]


def _open_edge(root: Path, dim: int = DIM, embedder: str = EMBEDDER, collection: str = COLLECTION) -> VectorStore:
    return EdgeVectorStore(root / "qdrant" / collection, collection, dim, embedder)


def _open_client(root: Path, dim: int = DIM, embedder: str = EMBEDDER, collection: str = COLLECTION) -> VectorStore:
    return ClientVectorStore.local(root / "qdrant-local", collection, dim, embedder)


def _open_pg(uri: str, dim: int = DIM, embedder: str = EMBEDDER, collection: str = COLLECTION) -> VectorStore:
    return PgVectorStore.from_uri(uri, collection, dim, embedder, timeout=10)


def _place(request: pytest.FixtureRequest, tmp_path: Path, kind: str) -> object:
    """Where a store of ``kind`` lives: the test's tmp dir, or a database of its own on the private PostgreSQL."""
    return request.getfixturevalue("pg_uri") if kind == "pgvector" else tmp_path


@pytest.fixture(params=["edge", "client", "pgvector"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """open(**kw) -> a store on this test's tmp dir (or database); every store it opened is closed at teardown."""
    raw = {"edge": _open_edge, "client": _open_client, "pgvector": _open_pg}[request.param]
    where = _place(request, tmp_path, request.param)
    opened: list[VectorStore] = []

    def open_(**kw: object) -> VectorStore:
        store = raw(where, **kw)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> VectorStore:
    return opener()


def unit(rng: np.random.Generator, dim: int = DIM) -> list[float]:
    v = rng.normal(size=dim)
    return (v / np.linalg.norm(v)).tolist()


def near(base: list[float], rng: np.random.Generator, noise: float) -> list[float]:
    v = np.asarray(base) + rng.normal(scale=noise, size=len(base))
    return (v / np.linalg.norm(v)).tolist()


def record(user: str, n: int, vector: list[float], characters: list[str] | None = None) -> SegmentRecord:
    seg = f"seg-{n}"
    return SegmentRecord(
        segment_id=seg,
        user_id=user,
        turn_ids=[ids.turn_id(user, f"{seg}-t{i}") for i in range(3)],
        source_ids=[f"D1:{n}", f"D1:{n + 1}", f"D1:{n + 2}"],
        characters=characters if characters is not None else ["lumina"],
        start_ts=1_700_000_000.0 + n * 60,
        end_ts=1_700_000_000.25 + n * 60 + 30,
        summary=f"summary {n} 映画の話",
        keywords=["映画", f"kw{n}"],
        embedding=vector,
        importance=0.1 * (n % 10),
        text=f"user: hello {n}\nlumina: hi",
    )


def test_is_a_vector_store(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)
    assert store.backend in {"qdrant-edge", "qdrant", "pgvector"}
    assert store.info() == {
        "collection": COLLECTION, "embedder": EMBEDDER, "dim": DIM, "points": 0, "backend": store.backend
    }


def test_search_nearest_first_payload_intact(store: VectorStore) -> None:
    rng = np.random.default_rng(1)
    recs = [record("alice", n, unit(rng)) for n in range(20)]
    store.upsert(recs)
    target = recs[7]
    hits = store.search("alice", near(target.embedding, rng, 0.01), limit=5)
    assert len(hits) == 5
    assert hits[0].point_id == ids.point_id("alice", target.segment_id)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score > 0.99
    assert hits[0].payload == target.payload()  # lists, floats, unicode: all round-trip exactly


def test_reupsert_is_idempotent(store: VectorStore) -> None:
    rng = np.random.default_rng(2)
    recs = [record("alice", n, unit(rng)) for n in range(130)]  # > one batch of 100
    store.upsert(recs)
    store.upsert(recs)
    assert store.count() == store.count("alice") == 130
    changed = recs[3].model_copy(update={"summary": "rewritten"})
    store.upsert([changed])
    assert store.count() == 130
    assert store.get("alice", [changed.segment_id])[0].payload["summary"] == "rewritten"


def test_user_isolation(store: VectorStore) -> None:
    rng = np.random.default_rng(3)
    a = [record("alice", n, unit(rng)) for n in range(10)]
    b = [record("bob", n, unit(rng)) for n in range(10)]  # same segment ids as alice's, other points
    store.upsert(a + b)
    assert store.count() == 20
    for rec in a:  # even with alice's exact vector, bob only ever sees bob
        hits = store.search("bob", rec.embedding, limit=20)
        assert len(hits) == 10
        assert all(h.payload["user_id"] == "bob" for h in hits)
    assert store.search("carol", a[0].embedding, limit=5) == []
    assert store.get("bob", ["seg-1"])[0].payload["user_id"] == "bob"
    assert store.get("carol", ["seg-1"]) == []


def test_character_filter(store: VectorStore) -> None:
    rng = np.random.default_rng(4)
    casts = [["lumina"], ["nox"], ["clarisse", "nox"], ["lumina", "clarisse"]]
    recs = [record("alice", n, unit(rng), casts[n % 4]) for n in range(12)]
    store.upsert(recs)
    for who in ("lumina", "nox", "clarisse"):
        hits = store.search("alice", recs[0].embedding, limit=20, character=who)
        assert len(hits) == sum(who in c for c in (r.characters for r in recs))
        assert all(who in h.payload["characters"] for h in hits)


def test_get(store: VectorStore) -> None:
    rng = np.random.default_rng(5)
    recs = [record("alice", n, unit(rng)) for n in range(5)]
    store.upsert(recs)
    got = store.get("alice", ["seg-3", "missing", "seg-1", "seg-3"])
    assert [h.payload["segment_id"] for h in got] == ["seg-3", "seg-1"]
    assert got[0].point_id == ids.point_id("alice", "seg-3")
    assert got[0].payload == recs[3].payload()
    assert store.get("alice", []) == []


def test_delete_user_only_removes_that_user(store: VectorStore) -> None:
    rng = np.random.default_rng(6)
    store.upsert([record("alice", n, unit(rng)) for n in range(7)] + [record("bob", n, unit(rng)) for n in range(4)])
    assert store.delete_user("alice") == 7
    assert store.count("alice") == 0 and store.count("bob") == 4 and store.count() == 4
    assert store.search("alice", unit(rng), limit=10) == []
    assert store.delete_user("alice") == 0


def test_persists_across_close_and_reopen(opener: Opener) -> None:
    rng = np.random.default_rng(7)
    recs = [record("alice", n, unit(rng)) for n in range(25)]
    first = opener()
    first.upsert(recs)
    first.close()
    first.close()  # idempotent
    with pytest.raises(StoreUnavailable):
        first.count()
    second = opener()
    assert second.count() == 25
    hits = second.search("alice", recs[11].embedding, limit=1)
    assert hits[0].payload == recs[11].payload()


def test_second_open_is_refused_clearly(opener: Opener) -> None:
    first = opener()
    if first.backend == "pgvector":
        # A server is shared by design: a second handle (another process's) opens and sees the first's writes.
        first.upsert([record("alice", 1, unit(np.random.default_rng(1)))])
        assert opener().count("alice") == 1
        return
    with pytest.raises(DataDirLocked):
        opener()


@pytest.mark.parametrize("change", [{"dim": DIM * 2}, {"embedder": "another-model"}])
def test_embedder_mismatch_on_reopen(opener: Opener, change: dict) -> None:
    rng = np.random.default_rng(8)
    first = opener()
    first.upsert([record("alice", 1, unit(rng))])
    first.close()
    with pytest.raises(EmbedderMismatch, match="another-model|32"):
        opener(**change)  # same collection name, other model: must not open
    assert opener().count() == 1  # and the collection is untouched


def test_bad_vectors_rejected_before_any_write(store: VectorStore) -> None:
    rng = np.random.default_rng(9)
    good = record("alice", 1, unit(rng))
    for bad_vector in (unit(rng, DIM - 1), [0.0] * DIM, [float("nan")] + unit(rng)[1:]):
        with pytest.raises(InvalidInput) as err:
            store.upsert([good, record("alice", 2, bad_vector)])
        assert err.value.field == "records[1].embedding"
        assert isinstance(err.value, ValueError)
    assert store.count() == 0
    with pytest.raises(InvalidInput, match="vector"):
        store.search("alice", unit(rng, DIM + 1), limit=3)
    with pytest.raises(InvalidInput, match="user_id"):
        store.search("../etc", unit(rng), limit=3)


def test_unreachable_server_is_store_unavailable(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as err:
        ClientVectorStore.from_url("http://127.0.0.1:9", None, COLLECTION, DIM, EMBEDDER, timeout=2)
    assert err.value.tier == "long-term"
    with pytest.raises(StoreUnavailable, match="PostgreSQL") as err:  # a socket folder with no server in it
        PgVectorStore.from_uri(f"postgresql://postgres@/lumina?host={tmp_path}", COLLECTION, DIM, EMBEDDER, timeout=2)
    assert err.value.tier == "long-term"


def test_optimize_keeps_every_search_the_same(store: VectorStore) -> None:
    # Below the engine's thresholds nothing is indexed, but optimize() must run, report, and change no answer.
    rng = np.random.default_rng(21)
    store.upsert([record(user, n, unit(rng)) for user in ("alice", "bob") for n in range(30)])
    query = unit(rng)
    before = [(h.point_id, round(h.score, 5)) for h in store.search("alice", query, 10)]
    report = store.optimize()  # type: ignore[attr-defined]
    assert report["collection"] == store.collection and isinstance(report["optimized"], bool)
    assert [(h.point_id, round(h.score, 5)) for h in store.search("alice", query, 10)] == before


def test_edge_optimize_builds_a_per_user_index_that_finds_what_a_scan_finds(tmp_path: Path) -> None:
    # Thresholds of 1 KB so 2 users × 400 small vectors get indexed and searched through the index.
    dim = 32
    collection = ids.collection_name("segments", EMBEDDER, dim)
    store = EdgeVectorStore(tmp_path / "q" / collection, collection, dim, EMBEDDER,
                            indexing_threshold_kb=1, full_scan_threshold_kb=1)
    rng = np.random.default_rng(5)
    vectors = {user: [unit(rng, dim) for _ in range(400)] for user in ("alice", "bob")}
    store.upsert([record(user, n, v) for user, vs in vectors.items() for n, v in enumerate(vs)])
    assert store.indexed_vectors() == 0
    queries = [unit(rng, dim) for _ in range(20)]

    def exact(user: str, q: list[float]) -> list[str]:
        scores = np.asarray(vectors[user]) @ np.asarray(q)
        return [ids.point_id(user, f"seg-{n}") for n in np.argsort(-scores)[:10]]

    assert all([h.point_id for h in store.search("alice", q, 10)] == exact("alice", q) for q in queries)
    report = store.optimize()
    assert report["optimized"] and report["indexed_vectors"] == 800
    overlap = []
    for user in ("alice", "bob"):
        for q in queries:
            hits = store.search(user, q, 10)
            assert {h.payload["user_id"] for h in hits} == {user}  # the index never crosses users
            overlap.append(len({h.point_id for h in hits} & set(exact(user, q))) / 10)
    assert np.mean(overlap) >= 0.95
    store.close()
    reopened = EdgeVectorStore(tmp_path / "q" / collection, collection, dim, EMBEDDER)
    try:
        assert reopened.indexed_vectors() == 800 and reopened.count() == 800  # the index is on disk
    finally:
        reopened.close()


def test_search_can_return_only_the_payload_fields_asked_for(store: VectorStore) -> None:
    rng = np.random.default_rng(8)
    store.upsert([record(user, n, unit(rng)) for user in ("alice", "bob") for n in range(12)])
    query = unit(rng)
    full = store.search("alice", query, 5)
    slim = store.search("alice", query, 5, fields=["segment_id", "importance"])
    assert [(h.point_id, round(h.score, 5)) for h in slim] == [(h.point_id, round(h.score, 5)) for h in full]
    assert all(set(h.payload) == {"user_id", "segment_id", "importance"} for h in slim)  # the tenant key always comes
    assert [h.payload["importance"] for h in slim] == [h.payload["importance"] for h in full]
    assert "text" in full[0].payload and all(h.payload["user_id"] == "alice" for h in slim)


def test_search_many_is_one_search_per_vector_in_one_call(store: VectorStore) -> None:
    rng = np.random.default_rng(9)
    store.upsert([record(user, n, unit(rng)) for user in ("alice", "bob") for n in range(15)])
    queries = [unit(rng) for _ in range(4)]
    limits = [3, 0, 7, 1]
    many = store.search_many("alice", queries, limits, fields=["segment_id"])
    assert [len(h) for h in many] == [3, 0, 7, 1]
    for query, limit, hits in zip(queries, limits, many):
        one = store.search("alice", query, limit, fields=["segment_id"])
        assert [(h.point_id, round(h.score, 5), h.payload) for h in hits] == [(h.point_id, round(h.score, 5), h.payload) for h in one]
    assert all(h.payload["user_id"] == "alice" for hits in many for h in hits)  # never another user's
    assert store.search_many("carol", queries, limits) == [[], [], [], []]
    assert store.search_many("alice", [], []) == []
    with pytest.raises(InvalidInput, match="limits"):
        store.search_many("alice", queries, [1, 2])
    with pytest.raises(InvalidInput, match=r"vectors\[1\]"):
        store.search_many("alice", [queries[0], [0.0] * DIM], [1, 1])
    with pytest.raises(InvalidInput):
        store.search_many("../bob", queries[:1], [1])


# --- per-memory operations of the forgetting lifecycle (issue 17) ------------------------------------
HOSTILE_IDS = ["../etc", "x') OR 1=1 --", "a b", "", "猫", "seg-1\n", "a..b"]


def _payloads(store: VectorStore, user: str, segs: list[str]) -> dict[str, dict]:
    return {h.payload["segment_id"]: h.payload for h in store.get(user, segs)}


def test_delete_removes_only_those_segments_of_that_user(store: VectorStore) -> None:
    rng = np.random.default_rng(31)
    store.upsert([record(u, n, unit(rng)) for u in ("alice", "bob") for n in range(6)])
    assert store.delete("alice", ["seg-1", "seg-4", "seg-99", "seg-1"]) == 2  # a missing id counts nothing
    assert store.count("alice") == 4 and store.count("bob") == 6  # bob's seg-1 and seg-4 are other points
    assert [h.payload["segment_id"] for h in store.get("alice", ["seg-0", "seg-1", "seg-4"])] == ["seg-0"]
    assert all(h.payload["segment_id"] not in {"seg-1", "seg-4"} for h in store.search("alice", unit(rng), 10))
    assert store.delete("alice", ["seg-1", "seg-4"]) == 0  # idempotent
    assert store.delete("carol", ["seg-0"]) == 0 and store.delete("alice", []) == 0
    assert store.count() == 10
    for bad in (*HOSTILE_IDS, None):
        with pytest.raises(InvalidInput):
            store.delete("alice", [bad])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        store.delete("alice", "seg-0")
    with pytest.raises(InvalidInput):
        store.delete("../bob", ["seg-0"])
    assert store.count() == 10


def test_set_payload_merges_fields_and_keeps_the_rest(store: VectorStore) -> None:
    rng = np.random.default_rng(32)
    recs = {u: [record(u, n, unit(rng)) for n in range(4)] for u in ("alice", "bob")}
    store.upsert(recs["alice"] + recs["bob"])
    changed = store.set_payload("alice", {
        "seg-0": {"level": 2, "retention": 41.5, "text_at_level": "要約: 映画の話"},
        "seg-1": {"level": 2, "retention": 12.0, "protected": True, "tags": ["joy", "calm"]},
        "seg-9": {"level": 3},  # no such point: skipped
        "seg-2": {},  # nothing to merge
    })
    assert changed == 2
    got = _payloads(store, "alice", ["seg-0", "seg-1", "seg-2"])
    assert got["seg-0"] == {**recs["alice"][0].payload(), "level": 2, "retention": 41.5, "text_at_level": "要約: 映画の話"}
    assert got["seg-1"] == {**recs["alice"][1].payload(), "level": 2, "retention": 12.0, "protected": True,
                            "tags": ["joy", "calm"]}
    assert got["seg-2"] == recs["alice"][2].payload()
    # A later merge changes only what it names.
    assert store.set_payload("alice", {"seg-0": {"retention": 40.0, "archived": False}}) == 1
    assert _payloads(store, "alice", ["seg-0"])["seg-0"] == {**got["seg-0"], "retention": 40.0, "archived": False}
    assert store.set_payload("carol", {"seg-0": {"level": 4}}) == 0
    assert {s: p for s, p in _payloads(store, "bob", [f"seg-{n}" for n in range(4)]).items()} == {
        r.segment_id: r.payload() for r in recs["bob"]}  # same segment ids, other user's points: untouched
    assert store.count() == 8


@pytest.mark.parametrize("fields", [
    {"user_id": "bob"}, {"segment_id": "seg-3"}, {"level": 5}, {"level": 0}, {"level": True}, {"level": "2"},
    {"retention": float("nan")}, {"retention": float("inf")}, {"a.b": 1}, {"tags[0]": "x"}, {"": 1}, {"x y": 1},
    {"obj": object()}, "level=2",
])
def test_set_payload_refuses_bad_fields_before_writing(store: VectorStore, fields: object) -> None:
    rng = np.random.default_rng(33)
    recs = [record("alice", n, unit(rng)) for n in range(2)]
    store.upsert(recs)
    with pytest.raises(InvalidInput):
        store.set_payload("alice", {"seg-0": {"level": 2}, "seg-1": fields})  # type: ignore[dict-item]
    assert _payloads(store, "alice", ["seg-0", "seg-1"]) == {r.segment_id: r.payload() for r in recs}


def test_set_payload_and_replace_vector_refuse_hostile_ids(store: VectorStore) -> None:
    rng = np.random.default_rng(34)
    store.upsert([record("alice", 0, unit(rng))])
    for bad in HOSTILE_IDS:
        with pytest.raises(InvalidInput):
            store.set_payload("alice", {"seg-0": {"level": 2}, bad: {"level": 2}})
        with pytest.raises(InvalidInput):
            store.replace_vector("alice", {bad: unit(rng)})
        with pytest.raises(InvalidInput):
            store.set_payload(bad, {"seg-0": {"level": 2}})
    with pytest.raises(InvalidInput):
        store.set_payload("alice", [("seg-0", {"level": 2})])  # type: ignore[arg-type]
    assert "level" not in store.get("alice", ["seg-0"])[0].payload


def test_replace_vector_keeps_the_payload(store: VectorStore) -> None:
    rng = np.random.default_rng(35)
    recs = {u: [record(u, n, unit(rng)) for n in range(5)] for u in ("alice", "bob")}
    store.upsert(recs["alice"] + recs["bob"])
    store.set_payload("alice", {"seg-2": {"retention": 33.0, "protected": False}})
    fresh = unit(rng)
    assert store.replace_vector("alice", {"seg-2": fresh, "seg-8": unit(rng)},
                                {"seg-2": {"level": 3, "text_at_level": "映画, 週末"}}) == 1
    hit = store.search("alice", fresh, 1)[0]
    assert hit.payload["segment_id"] == "seg-2" and hit.score > 0.999
    assert hit.payload == {**recs["alice"][2].payload(), "retention": 33.0, "protected": False, "level": 3,
                           "text_at_level": "映画, 週末"}
    old = store.search("alice", recs["alice"][2].embedding, 5)
    assert all(h.payload["segment_id"] != "seg-2" or h.score < 0.99 for h in old)  # the old vector is gone
    # bob's seg-2 is another point: still found by its own vector, payload untouched.
    bob = store.search("bob", recs["bob"][2].embedding, 1)[0]
    assert bob.score > 0.999 and bob.payload == recs["bob"][2].payload()
    assert store.replace_vector("bob", {"seg-7": fresh}) == 0 and store.count() == 10
    assert store.replace_vector("alice", {"seg-3": unit(rng)}) == 1  # fields are optional
    assert store.get("alice", ["seg-3"])[0].payload == recs["alice"][3].payload()


def test_replace_vector_checks_everything_before_writing(store: VectorStore) -> None:
    rng = np.random.default_rng(36)
    recs = [record("alice", n, unit(rng)) for n in range(3)]
    store.upsert(recs)
    good = unit(rng)
    bad_calls = [
        ({"seg-0": good, "seg-1": [0.0] * DIM}, None),
        ({"seg-0": good, "seg-1": unit(rng, DIM + 1)}, None),
        ({"seg-0": good, "seg-1": [float("nan")] * DIM}, None),
        ({"seg-0": good}, {"seg-0": {"level": 9}}),
        ({"seg-0": good}, {"seg-1": {"level": 2}}),  # fields for a point with no new vector
        ({"seg-0": good}, {"seg-0": {"user_id": "bob"}}),
    ]
    for vectors, fields in bad_calls:
        with pytest.raises(InvalidInput):
            store.replace_vector("alice", vectors, fields)
    assert store.search("alice", recs[0].embedding, 1)[0].score > 0.999  # nothing was written
    assert _payloads(store, "alice", ["seg-0", "seg-1", "seg-2"]) == {r.segment_id: r.payload() for r in recs}


def test_max_level_leaves_out_higher_levels_and_treats_no_level_as_one(store: VectorStore) -> None:
    rng = np.random.default_rng(37)
    casts = [["lumina"], ["nox"]]
    store.upsert([record(u, n, unit(rng), casts[n % 2]) for u in ("alice", "bob") for n in range(8)])
    # seg-0, seg-1: no level (older data); seg-2..7: levels 1, 2, 3, 4, 4, 2.
    levels = {"seg-2": 1, "seg-3": 2, "seg-4": 3, "seg-5": 4, "seg-6": 4, "seg-7": 2}
    assert store.set_payload("alice", {s: {"level": lv} for s, lv in levels.items()}) == 6
    store.set_payload("bob", {f"seg-{n}": {"level": 4} for n in range(8)})  # all of bob's are archived

    def found(**kw: object) -> set[str]:
        return {h.payload["segment_id"] for h in store.search("alice", unit(rng), 20, **kw)}  # type: ignore[arg-type]

    everything = {f"seg-{n}" for n in range(8)}
    assert found() == found(max_level=4) == found(max_level=10) == everything
    assert found(max_level=3) == everything - {"seg-5", "seg-6"}
    assert found(max_level=2) == {"seg-0", "seg-1", "seg-2", "seg-3", "seg-7"}
    assert found(max_level=1) == {"seg-0", "seg-1", "seg-2"}
    assert found(max_level=0) == set()
    assert found(max_level=3, character="nox") == {"seg-1", "seg-3", "seg-7"}  # filters combine
    assert store.search("bob", unit(rng), 20, max_level=3) == [] and len(store.search("bob", unit(rng), 20)) == 8
    many = store.search_many("alice", [unit(rng), unit(rng)], [20, 2], fields=["level"], max_level=3)
    assert {h.point_id for h in many[0]} == {ids.point_id("alice", s) for s in everything - {"seg-5", "seg-6"}}
    assert len(many[1]) == 2 and all(h.payload.get("level", 1) <= 3 for hits in many for h in hits)
    for bad in ("3", 2.5, True):
        with pytest.raises(InvalidInput, match="max_level"):
            store.search("alice", unit(rng), 5, max_level=bad)  # type: ignore[arg-type]


def test_max_level_holds_through_the_vector_index(tmp_path: Path) -> None:
    """After optimize() qdrant-edge searches the level filter through its payload index, not a scan."""
    store = EdgeVectorStore(tmp_path / "q" / COLLECTION, COLLECTION, DIM, EMBEDDER,
                            indexing_threshold_kb=1, full_scan_threshold_kb=1)
    try:
        rng = np.random.default_rng(38)
        store.upsert([record("alice", n, unit(rng)) for n in range(300)])
        store.set_payload("alice", {f"seg-{n}": {"level": 4} for n in range(0, 300, 3)})
        store.optimize()
        assert store.indexed_vectors() == 300
        for _ in range(10):
            hits = store.search("alice", unit(rng), 50, max_level=3)
            assert len(hits) == 50 and all(int(h.payload["segment_id"][4:]) % 3 != 0 for h in hits)
    finally:
        store.close()


@pytest.fixture(params=["edge", "client", "pgvector"])
def turn_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    from lumina_memory.stores.turn_vectors import EdgeTurnVectors, client_turn_vectors, pg_turn_vectors

    collection = ids.collection_name("turns", EMBEDDER, DIM)
    if request.param == "edge":
        store = EdgeTurnVectors(tmp_path / "turns", collection, DIM, EMBEDDER)
    elif request.param == "pgvector":
        store = pg_turn_vectors().from_uri(request.getfixturevalue("pg_uri"), collection, DIM, EMBEDDER)
    else:
        store = client_turn_vectors().local(tmp_path / "turns-local", collection, DIM, EMBEDDER)
    yield store
    store.close()


def test_turn_delete_removes_only_those_turns_of_that_user(turn_store) -> None:
    rng = np.random.default_rng(39)
    for user in ("alice", "bob"):
        turns = [{"turn_id": f"t{n}", "source_id": f"D1:{n}", "speaker": "lumina", "text": f"{user} {n}",
                  "ts": float(n), "segment_id": "seg-1"} for n in range(5)]
        turn_store.upsert_turns(user, turns, [unit(rng) for _ in turns])
    assert turn_store.delete("alice", ["t1", "t3", "t9"]) == 2
    assert sorted(turn_store.vectors_of("alice", [f"t{n}" for n in range(5)])) == ["t0", "t2", "t4"]
    assert sorted(turn_store.vectors_of("bob", [f"t{n}" for n in range(5)])) == [f"t{n}" for n in range(5)]
    assert turn_store.delete("alice", ["t1", "t3"]) == 0 and turn_store.delete("carol", ["t0"]) == 0
    assert turn_store.count("alice") == 3 and turn_store.count("bob") == 5
    for bad in HOSTILE_IDS:
        with pytest.raises(InvalidInput):
            turn_store.delete("alice", [bad])
    with pytest.raises(InvalidInput):
        turn_store.delete("alice", "t0")
    assert turn_store.count() == 8


# --- knowledge points (issue 18) ---------------------------------------------------------------------
@pytest.fixture(params=["edge", "client", "pgvector"])
def knowledge_store(request: pytest.FixtureRequest, tmp_path: Path):
    from lumina_memory.stores.knowledge_vectors import EdgeKnowledgeVectors, client_knowledge_vectors, pg_knowledge_vectors

    collection = ids.collection_name("knowledge", EMBEDDER, DIM)
    if request.param == "edge":
        store = EdgeKnowledgeVectors(tmp_path / "knowledge", collection, DIM, EMBEDDER)
    elif request.param == "pgvector":
        store = pg_knowledge_vectors().from_uri(request.getfixturevalue("pg_uri"), collection, DIM, EMBEDDER)
    else:
        store = client_knowledge_vectors().local(tmp_path / "knowledge-local", collection, DIM, EMBEDDER)
    yield store
    store.close()


def _item(n: int, episodes: list[str], status: str = "current") -> dict:
    return {"item_id": f"k{n}", "subject": "user", "attribute": "drink", "value": f"紅茶 {n}", "status": status,
            "valid_from": 1_760_000_000.0 + n, "valid_to": None if status == "current" else 1_770_000_000.0,
            "episode_ids": episodes, "text": "ignored: the payload keeps only its fields"}


def test_knowledge_points_are_per_user_and_by_item(knowledge_store) -> None:
    store = knowledge_store
    rng = np.random.default_rng(40)
    vectors = {u: [unit(rng) for _ in range(4)] for u in ("alice", "bob")}
    for user in ("alice", "bob"):
        items = [_item(n, [f"seg-{n}", "seg-9"], "superseded" if n == 0 else "current") for n in range(4)]
        assert store.upsert_items(user, items, vectors[user]) == 4
        assert store.upsert_items(user, items, vectors[user]) == 4  # idempotent: same ids, same points
    assert store.count("alice") == store.count("bob") == 4 and store.count() == 8
    # Search: this user's items only, nearest first, as (item id, cosine).
    found = store.search_items("alice", near(vectors["alice"][2], rng, 0.01), 2)
    assert found[0][0] == "k2" and found[0][1] > 0.99 and len(found) == 2
    assert all(item != "k2" or score < 0.99 for item, score in store.search_items("bob", vectors["alice"][2], 4))
    assert store.items_of("alice", ["k0", "k7"]) == {"k0": {
        "user_id": "alice", "item_id": "k0", "subject": "user", "attribute": "drink", "value": "紅茶 0",
        "polarity": "positive", "status": "superseded", "valid_from": 1_760_000_000.0, "valid_to": 1_770_000_000.0, "episode_ids": ["seg-0", "seg-9"]}}
    # A forgotten episode: an item keeps its other sources; delete goes by item, only this user's.
    assert store.set_episodes("alice", {"k1": ["seg-1"], "k7": ["seg-7"]}) == 1
    assert store.items_of("alice", ["k1"])["k1"]["episode_ids"] == ["seg-1"]
    assert store.items_of("bob", ["k1"])["k1"]["episode_ids"] == ["seg-1", "seg-9"]
    assert store.delete("alice", ["k0", "k3", "k99"]) == 2 and store.delete("alice", ["k0"]) == 0
    assert sorted(store.items_of("alice", [f"k{n}" for n in range(4)])) == ["k1", "k2"] and store.count("bob") == 4
    assert store.delete_user("alice") == 2 and store.count() == 4


def test_knowledge_input_is_checked_before_writing(knowledge_store) -> None:
    store = knowledge_store
    rng = np.random.default_rng(41)
    good = _item(1, ["seg-1"])
    bad_calls = [
        ([good, {**_item(2, ["seg-2"]), "item_id": HOSTILE_IDS[1]}], [unit(rng), unit(rng)]),
        ([good, _item(2, [HOSTILE_IDS[0]])], [unit(rng), unit(rng)]),
        ([good, _item(2, "seg-2")], [unit(rng), unit(rng)]),  # type: ignore[arg-type]
        ([good, {**_item(2, ["seg-2"]), "value": ""}], [unit(rng), unit(rng)]),
        ([good, _item(2, ["seg-2"])], [unit(rng), [0.0] * DIM]),
        ([good, _item(2, ["seg-2"])], [unit(rng)]),
    ]
    for items, vectors in bad_calls:
        with pytest.raises(InvalidInput):
            store.upsert_items("alice", items, vectors)
    with pytest.raises(InvalidInput):
        store.upsert_items(HOSTILE_IDS[1], [good], [unit(rng)])
    for bad in HOSTILE_IDS:
        with pytest.raises(InvalidInput):
            store.delete("alice", [bad])
    assert store.count() == 0  # nothing was written


def test_turn_search_finds_nearest_first_and_one_users_only(turn_store) -> None:
    rng = np.random.default_rng(11)
    vectors = {}
    for user in ("alice", "bob"):
        turns = [{"turn_id": f"t{n}", "source_id": f"D1:{n}", "speaker": "lumina", "text": f"{user} {n}",
                  "ts": float(n), "segment_id": "s1"} for n in range(12)]
        vectors[user] = [unit(rng) for _ in turns]
        turn_store.upsert_turns(user, turns, vectors[user])
    from lumina_memory.stores.turn_vectors import turn_point_id

    hits = turn_store.search_point_ids("alice", near(vectors["alice"][4], rng, 0.01), 5)
    assert hits[0][0] == turn_point_id("alice", "t4")
    assert len(hits) == 5 and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    alice = {turn_point_id("alice", f"t{n}") for n in range(12)}
    assert all(pid in alice for pid, _ in hits)
    # bob's own turn is the nearest point of all to this query, yet alice's search never returns it
    assert all(pid in alice for pid, _ in turn_store.search_point_ids("alice", vectors["bob"][0], 12))
    assert turn_store.search_point_ids("alice", unit(rng), 0) == []
    with pytest.raises(InvalidInput):
        turn_store.search_point_ids("alice", [1.0, 2.0], 5)
    with pytest.raises(InvalidInput):
        turn_store.search_point_ids("../bob", unit(rng), 5)


def _copy_target(store: VectorStore, where: Path) -> VectorStore:
    """An empty store of the same adapter and collection in another folder (pgvector: another collection)."""
    if store.backend == "pgvector":
        return _open_pg(store._pool.conninfo, collection=ids.collection_name("copy", EMBEDDER, DIM))  # type: ignore[attr-defined]
    return (_open_edge if store.backend == "qdrant-edge" else _open_client)(where)


def test_points_and_write_points_copy_a_collection_whole(store: VectorStore, tmp_path: Path) -> None:
    from lumina_memory.stores.vector_filters import PreparedPoint

    rng = np.random.default_rng(31)
    recs = [record("alice", n, unit(rng)) for n in range(6)] + [record("bob", n, unit(rng)) for n in range(3)]
    store.upsert(recs)
    rows = list(store.points())
    assert len(rows) == 9 and {p["user_id"] for _, _, p in rows} == {"alice", "bob"}
    copy = _copy_target(store, tmp_path / "copy")
    try:
        bad = PreparedPoint(ids.point_id("carol", "seg-x"), unit(rng, DIM - 1), {"user_id": "carol"})
        with pytest.raises(InvalidInput, match=r"points\[9\]"):
            copy.write_points([PreparedPoint(*row) for row in rows] + [bad])
        assert copy.count() == 0  # checked before any was written
        assert copy.write_points([PreparedPoint(*row) for row in rows]) == 9
        assert copy.count("alice") == 6 and copy.count("bob") == 3
        for r in (recs[2], recs[7]):
            hit = copy.search(r.user_id, r.embedding, limit=1)[0]
            assert hit.payload == r.payload() and hit.score == pytest.approx(1.0, abs=1e-4)
        assert copy.search("bob", recs[2].embedding, limit=9) and all(
            h.payload["user_id"] == "bob" for h in copy.search("bob", recs[2].embedding, limit=9))
    finally:
        copy.close()


def test_conditions_without_a_user_scope_count_search_and_delete_only_what_they_match(store: VectorStore) -> None:
    from lumina_memory.stores.vector_filters import SEGMENT_FIELD, TENANT_FIELD, Match

    rng = np.random.default_rng(32)
    recs = [record("alice", n, unit(rng)) for n in range(5)] + [record("bob", n, unit(rng)) for n in range(5)]
    store.upsert(recs)
    seg1 = [Match(SEGMENT_FIELD, ("seg-1",))]
    assert store.count_where(seg1) == 2 and store.count_where([]) == 10
    hits = store.search_where(recs[1].embedding, seg1, 10)
    assert {(p["user_id"], p["segment_id"]) for _, _, p in hits} == {("alice", "seg-1"), ("bob", "seg-1")}
    assert hits[0][2]["user_id"] == "alice" and hits[0][1] >= hits[1][1]
    assert store.search_where(recs[1].embedding, seg1, 0) == []
    with pytest.raises(InvalidInput, match="conditions"):
        store.delete_where([])  # never the whole collection
    with pytest.raises(InvalidInput, match=r"conditions\[0\]"):
        store.count_where([("segment_id", "seg-1")])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="vector"):
        store.search_where(unit(rng, DIM + 1), seg1, 3)
    assert store.count() == 10
    assert store.delete_where([Match(TENANT_FIELD, ("bob",)), *seg1]) == 1
    assert store.count("bob") == 4 and store.count("alice") == 5 and store.count_where(seg1) == 1
    assert store.delete_where(seg1) == 1 and store.delete_where(seg1) == 0


def test_search_many_can_keep_to_segments_ended_by_a_time(store: VectorStore) -> None:
    """L5 links a closing segment to similar *earlier* segments: asked with ``ended_by``, a search never returns
    a segment that ended after that time, whatever another process wrote first (its links then do not depend
    on which of two importers of one transcript got there first)."""
    rng = np.random.default_rng(11)
    vector = unit(rng)
    store.upsert([record("alice", n, vector) for n in range(8)] + [record("bob", 0, vector)])
    cut = record("alice", 4, vector).start_ts
    hits = store.search_many("alice", [vector, vector], [20, 3], fields=["segment_id", "end_ts"], ended_by=cut)
    assert sorted(h.payload["segment_id"] for h in hits[0]) == [f"seg-{n}" for n in range(4)]
    assert len(hits[1]) == 3 and all(h.payload["end_ts"] <= cut for h in hits[1])
    assert store.search_many("alice", [vector], [20], ended_by=record("alice", 0, vector).start_ts) == [[]]
    everything = store.search_many("alice", [vector], [20], fields=["segment_id"])
    assert len(everything[0]) == 8
