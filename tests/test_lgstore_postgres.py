"""LuminaStore in server mode (items and vectors in PostgreSQL, pgvector): several store objects (each its own
pool, as separate processes are) share one memory; hostile labels, keys and text stay data on both engines; the
table's schema, backups, rewrite and an unreachable server, against a real private PostgreSQL (tests.pg_server)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from langgraph.store.base import PutOp

from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.kv_duckdb import ITEMS_TABLE, DuckDBItems, NewRow, SqlItems
from lumina_memory.stores.langgraph_store import LuminaStore

from .conftest import make_settings
from .lgstore_backends import BACKENDS, open_store
from .pg_server import pg_server, pg_uri  # noqa: F401

# Labels outside a user root are LangGraph's free text: each must stay a namespace of its own.
HOSTILE = ["'; DROP TABLE lg_store_items; --", "a%b", "a_b", "%", "_", "/etc/passwd", "~root\\x", "?", "%s", "$1",
           "}) MATCH (n) DETACH DELETE n //", "a'b\"c", "\\", "🙂", "\u200b", "x" * 1024]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return make_embedder(make_settings(tmp_path_factory.mktemp("emb")))


@pytest.fixture
def opened():
    stores: list[LuminaStore] = []
    yield stores
    for store in stores:
        store.close()


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path, embedder, opened) -> LuminaStore:
    uri = request.getfixturevalue("pg_uri") if request.param == "postgres" else None
    opened.append(open_store(request.param, make_settings(tmp_path / "data"), uri, embedder=embedder))
    return opened[-1]


def two_stores(uri: str, tmp_path, embedder, opened) -> tuple[LuminaStore, LuminaStore]:
    """Two stores on one database, each with its own connection pool and data directory (two processes)."""
    for name in ("a", "b"):
        opened.append(open_store("postgres", make_settings(tmp_path / name), uri, embedder=embedder))
    return opened[-2], opened[-1]


def test_two_stores_on_one_database_see_each_others_writes(pg_uri, tmp_path, embedder, opened):
    a, b = two_stores(pg_uri, tmp_path, embedder, opened)
    a.put(("memories", "alice"), "m1", {"text": "Alice keeps bees on her roof", "kind": "hobby"})
    a.put(("memories", "alice"), "m2", {"text": "Alice is allergic to peanuts", "kind": "health"})
    assert b.get(("memories", "alice"), "m1").value["text"] == "Alice keeps bees on her roof"
    assert b.list_namespaces() == [("memories", "alice")]
    assert [r.key for r in b.search(("memories", "alice"), filter={"kind": "health"})] == ["m2"]
    hits = b.search(("memories", "alice"), query="who keeps bees?")  # one vector collection: scored by b
    assert hits[0].key == "m1" and hits[0].score > hits[1].score
    b.put(("memories", "alice"), "m1", {"text": "Alice gave her bees away", "kind": "hobby"})
    b.delete(("memories", "alice"), "m2")
    assert a.get(("memories", "alice"), "m1").value["text"] == "Alice gave her bees away"
    assert a.get(("memories", "alice"), "m2") is None
    assert a.get(("memories", "alice"), "m1").created_at < a.get(("memories", "alice"), "m1").updated_at


def test_concurrent_writers_on_one_database_lose_nothing(pg_uri, tmp_path, embedder, opened):
    a, b = two_stores(pg_uri, tmp_path, embedder, opened)
    errors: list[BaseException] = []

    def write(store: LuminaStore, who: str) -> None:
        try:
            for i in range(20):
                store.batch([PutOp(("memories", who), f"k{i}", {"n": i}, index=False),
                             PutOp(("shared",), f"{who}-{i}", {"n": i}, index=False)])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(s, w)) for s, w in ((a, "alice"), (b, "bob"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(b.search(("memories", "alice"), limit=100)) == 20 and len(a.search(("memories", "bob"), limit=100)) == 20
    assert len(a.search(("shared",), limit=100)) == 40
    assert {r.namespace for r in a.search(("memories", "alice"), limit=100)} == {("memories", "alice")}


def test_a_sweep_in_one_process_removes_what_expired_for_all(pg_uri, tmp_path, embedder, opened):
    a, b = two_stores(pg_uri, tmp_path, embedder, opened)
    a.put(("t",), "short", {"v": 1}, ttl=0.001)
    a.put(("t",), "long", {"v": 2}, ttl=60)
    time.sleep(0.2)
    assert b.sweep_ttl() == 1 and b.sweep_ttl() == 0
    assert a.get(("t",), "short") is None and a.get(("t",), "long").value == {"v": 2}


def key(label: str) -> str:
    """A hostile key of its own per label (keys may hold '.', labels may not)."""
    return f"../../{label[:100]}'; --"


def test_hostile_labels_and_keys_stay_namespaces_of_their_own(store):
    store.batch([PutOp(("notes", label), key(label), {"who": label}) for label in HOSTILE])
    store.put(("notes", "a"), "k", {"who": "plain a"})
    for label in HOSTILE:
        assert store.get(("notes", label), key(label)).value == {"who": label}
        assert [r.value["who"] for r in store.search(("notes", label))] == [label]
        assert store.list_namespaces(prefix=("notes", label)) == [("notes", label)]
    assert [r.value["who"] for r in store.search(("notes", "a"))] == ["plain a"]  # not a%b, a_b, a'b"c
    assert len(store.search(("notes",), limit=100)) == len(HOSTILE) + 1  # the table is intact
    assert store.get(("notes", "%"), key("a%b")) is None and store.get(("notes", "_"), key("a_b")) is None


def test_users_namespaces_never_mix(store):
    for user in ("alice", "alice2", "bob"):
        store.put(("memories", user), "pet", {"text": f"{user}'s cat is called Mochi"})
    assert [r.namespace for r in store.search(("memories", "alice"), query="cat")] == [("memories", "alice")]
    assert [r.namespace for r in store.search(("memories", "alice"), query="alice2 cat")] == [("memories", "alice")]
    other = {"text": "alice2's cat is called Mochi"}
    assert [r.namespace for r in store.search(("memories", "alice"), filter=other)] == []
    store.delete(("memories", "alice"), "pet")
    assert store.get(("memories", "alice2"), "pet") is not None and store.search(("memories", "alice")) == []


def test_broken_unicode_is_refused_and_odd_values_round_trip(store):
    for op, field in [(PutOp(("ok",), "\ud800", {"v": 1}), "key"),
                      (PutOp(("ok", "\udfff"), "k", {"v": 1}), "namespace"),
                      (PutOp(("ok",), "k", {"t": "a\ud800b"}), "value")]:
        with pytest.raises(InvalidInput) as err:
            store.batch([PutOp(("ok",), "fine", {"v": 0}), op])
        assert err.value.field == field
    with pytest.raises(InvalidInput) as err:
        store.search(("ok",), query="tea \ud83d")
    assert err.value.field == "query"
    assert store.list_namespaces() == []
    odd = {"nul": "a\x00b", "empty": "", "nested": {"": [None, True, 1.5, "\u2028"]}}
    big = {"text": "word " * ((store.max_value_bytes - 100) // 5)}
    store.batch([PutOp(("ok",), "odd", odd), PutOp(("ok",), "empty", {}), PutOp(("ok",), "big", big),
                 PutOp(("ok",), "k" * 1024, {"v": 1})])
    assert store.get(("ok",), "odd").value == odd and store.get(("ok",), "empty").value == {}
    assert store.get(("ok",), "big").value == big and store.get(("ok",), "k" * 1024).value == {"v": 1}
    assert store.search(("ok",), query="word")[0].key == "big"


def rows(n: int, user: str = "u") -> list[NewRow]:
    return [NewRow(f"{user}{i}", ("memories", user), f"k{i}", f'{{"i": {i}}}', sorted({"t", f"t{i}"}), "h",
                   None if i % 2 else 5) for i in range(n)]


def test_the_table_migrates_once_and_backups_cross_engines(pg_uri):
    items = SqlItems.on_postgres(pg_uri)
    try:
        items.write(rows(5), [])
    finally:
        items.close()
    again = SqlItems.on_postgres(pg_uri)  # a second process opening the table: step 1 is not applied twice
    embedded = DuckDBItems()
    try:
        with psycopg.connect(pg_uri) as con:
            steps = con.execute("SELECT step FROM lumina_migrations WHERE component = 'store'").fetchall()
        assert steps == [(1,)] and again.count() == 5
        assert embedded.load_rows(again.dump_rows()) == 5
        assert embedded.dump_rows() == again.dump_rows()  # the same values, arrays and timestamps either way
        embedded.write(rows(3, "v"), [])
        again.write([], [r["item_id"] for r in again.dump_rows()])
        again.load_rows(embedded.dump_rows())
        assert again.dump_rows() == embedded.dump_rows()
    finally:
        again.close()
        embedded.close()


def test_rewrite_on_postgres_leaves_no_deleted_row(pg_uri):
    items = SqlItems.on_postgres(pg_uri)
    try:
        items.write(rows(4, "alice") + rows(4, "bob"), [])
        items.write([], [f"alice{i}" for i in range(4)])
        items.rewrite()
        assert items.with_label("alice") == [] and len(items.with_label("bob")) == 4 and items.raw_paths() == []
    finally:
        items.close()
    with psycopg.connect(pg_uri) as con:
        assert con.execute(f"SELECT count(*) FROM {ITEMS_TABLE} WHERE position('alice' IN value) > 0 "
                           "OR item_id LIKE 'alice%'").fetchone() == (0,)


def test_an_unreachable_server_is_a_named_store_error(tmp_path):
    with pytest.raises(StoreUnavailable) as err:
        SqlItems.on_postgres(f"postgresql://nobody@/lumina?host={tmp_path}", timeout=1)
    assert err.value.tier == "store" and "PostgreSQL" in str(err.value)
