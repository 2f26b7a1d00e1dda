"""What the pgvector adapter must do beyond the shared conformance suite (tests/test_vectors_conformance.py): a
table many processes share, a filter HNSW alone would answer short, bounded waits, erasure's residue in the
server's tables, input PostgreSQL cannot store, and the knowledge bases' tables. All on a real private PostgreSQL.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
import pytest

from lumina_memory.stores import ids
from lumina_memory.stores.errors import EmbedderMismatch, InvalidInput, StoreUnavailable
from lumina_memory.stores.kb_vectors import PgKBCollections
from lumina_memory.stores.vector_filters import PreparedPoint
from lumina_memory.stores.vectors_pg import CATALOG, PgVectorStore, open_pool, table_name
from tests.pg_server import pg_server, pg_uri  # noqa: F401
from tests.test_vectors_conformance import COLLECTION, DIM, EMBEDDER, record, unit


@pytest.fixture
def store(pg_uri: str):
    s = PgVectorStore.from_uri(pg_uri, COLLECTION, DIM, EMBEDDER, timeout=10)
    yield s
    s.close()


def _sql(uri: str, statement: str, params: list | None = None) -> list[tuple]:
    with psycopg.connect(uri, autocommit=True) as con:
        cur = con.execute(statement, params)
        return cur.fetchall() if cur.description else []


def test_processes_opening_together_share_one_table(pg_uri: str) -> None:
    with ThreadPoolExecutor(4) as workers:  # four handles creating the same collection at once
        futures = [workers.submit(PgVectorStore.from_uri, pg_uri, COLLECTION, DIM, EMBEDDER) for _ in range(4)]
    opened = [f.result() for f in futures if f.exception() is None]
    try:
        assert [f.exception() for f in futures] == [None] * 4
        rng = np.random.default_rng(1)
        opened[0].upsert([record("alice", n, unit(rng)) for n in range(5)])
        assert [s.count("alice") for s in opened] == [5, 5, 5, 5]  # each handle sees the others' writes
        assert _sql(pg_uri, f"SELECT collection, lumina_embedder, lumina_dim FROM {CATALOG}") == [
            (COLLECTION, EMBEDDER, DIM)]
        with pytest.raises(EmbedderMismatch):
            PgVectorStore.from_uri(pg_uri, COLLECTION, DIM, "another-model")
    finally:
        for s in opened:
            s.close()


def test_two_writers_of_the_same_points_never_deadlock(pg_uri: str) -> None:
    rng = np.random.default_rng(10)
    recs = [record("alice", n, unit(rng)) for n in range(300)]
    stores = [PgVectorStore.from_uri(pg_uri, COLLECTION, DIM, EMBEDDER, batch_size=50) for _ in range(2)]
    try:
        with ThreadPoolExecutor(2) as workers:  # the same transcript imported by two processes, in other orders
            futures = [workers.submit(s.upsert, order) for s, order in zip(stores, (recs, recs[::-1])) for _ in range(3)]
        assert [f.exception() for f in futures] == [None] * 6
        assert stores[0].count() == 300
        pid, vector = ids.point_id("alice", "seg-1"), unit(rng)
        twice = [PreparedPoint(pid, vector, {"user_id": "alice", "v": v}) for v in (1, 2)]  # one id twice in a call
        assert stores[1].write_points(twice) == 2
        assert stores[0].get("alice", ["seg-1"])[0].payload == {"user_id": "alice", "v": 2}  # the last one wins
    finally:
        for s in stores:
            s.close()


def test_a_database_without_pgvector_gets_it_or_a_clear_error(pg_uri: str) -> None:
    role = f"lumina_plain_{uuid.uuid4().hex[:12]}"  # roles are the server's, not the test database's
    _sql(pg_uri, "DROP EXTENSION vector")
    _sql(pg_uri, f"CREATE ROLE {role} LOGIN")
    plain = pg_uri.replace("postgres:@", f"{role}:@", 1)
    with pytest.raises(StoreUnavailable, match="CREATE EXTENSION vector") as err:
        PgVectorStore.from_uri(plain, COLLECTION, DIM, EMBEDDER)  # a role that may not create it
    assert err.value.tier == "long-term"
    with PgVectorStore.from_uri(pg_uri, COLLECTION, DIM, EMBEDDER) as store:  # the owner creates it
        store.upsert([record("alice", 1, unit(np.random.default_rng(9)))])
        assert store.count() == 1
    _sql(pg_uri, f"DROP OWNED BY {role}")
    _sql(pg_uri, f"DROP ROLE {role}")


def test_filtered_search_is_never_short_when_the_hnsw_scan_gives_up(pg_uri: str) -> None:
    # A server whose iterative scans stop early (max_scan_tuples 40): alice has 1,200 points, so the planner
    # walks the HNSW graph, but only 20 of them pass max_level=3. The graph walk alone returns a few of them
    # (8 on this data); the adapter must still return all 20, nearest first.
    dbname = psycopg.conninfo.conninfo_to_dict(pg_uri)["dbname"]
    _sql(pg_uri, f"ALTER DATABASE {dbname} SET hnsw.max_scan_tuples = 40")
    store = PgVectorStore.from_uri(pg_uri, COLLECTION, DIM, EMBEDDER)
    try:
        rng = np.random.default_rng(2)
        alice = [record("alice", n, unit(rng)) for n in range(1200)]
        store.upsert(alice + [record("bob", n, unit(rng)) for n in range(300)])
        store.set_payload("alice", {f"seg-{n}": {"level": 4} for n in range(1200) if n % 60})
        store.optimize()  # fresh statistics: the planner picks the HNSW index for alice
        vectors = np.asarray([r.embedding for r in alice])
        for _ in range(5):
            q = unit(rng)
            kept = [n for n in np.argsort(-(vectors @ np.asarray(q))) if n % 60 == 0]
            expected = [ids.point_id("alice", f"seg-{n}") for n in kept]
            assert [h.point_id for h in store.search("alice", q, 20, max_level=3)] == expected
            assert [h.point_id for h in store.search("alice", q, 50, max_level=3)] == expected
            few, every = store.search_many("alice", [q, q], [5, 20], max_level=3)
            assert [h.point_id for h in every] == expected
            # Five of twenty is an approximate answer (HNSW), but only ever of the points that pass the filter.
            assert len(few) == 5 and {h.point_id for h in few} <= set(expected)
            assert [h.score for h in few] == sorted((h.score for h in few), reverse=True)
    finally:
        store.close()


def test_a_locked_table_fails_the_call_in_bounded_time(pg_uri: str) -> None:
    store = PgVectorStore.from_uri(pg_uri, COLLECTION, DIM, EMBEDDER, timeout=1)
    rng = np.random.default_rng(3)
    store.upsert([record("alice", 1, unit(rng))])
    try:
        with psycopg.connect(pg_uri) as holder:  # another session holds the table for longer than the timeout
            holder.execute(f"LOCK TABLE {store.table} IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreUnavailable, match="PostgreSQL") as err:
                store.count("alice")
            assert err.value.tier == "long-term"
            with pytest.raises(StoreUnavailable, match="rewrite"):  # erasure's rewrite does not queue forever
                store.rewrite()
            holder.rollback()
        assert store.count("alice") == 1  # the pool recovered: the next call works
        store.rewrite()
        with store._pool.connection() as con:  # the rewrite's own bounds ended with it
            assert con.execute("SHOW statement_timeout").fetchone()[0] == "1s"
    finally:
        store.close()


def test_a_killed_connection_is_reported_then_replaced(store: PgVectorStore, pg_uri: str) -> None:
    rng = np.random.default_rng(4)
    store.upsert([record("alice", n, unit(rng)) for n in range(3)])
    _sql(pg_uri, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    outcomes = []
    for _ in range(3):
        try:
            outcomes.append(store.count("alice"))
        except StoreUnavailable as exc:
            assert exc.tier == "long-term"
            outcomes.append("unavailable")
    assert outcomes[-1] == 3


def test_erasure_leaves_no_row_and_rewrite_writes_the_table_anew(store: PgVectorStore, pg_uri: str) -> None:
    rng = np.random.default_rng(5)
    store.upsert([record("alice", n, unit(rng)) for n in range(400)] + [record("bob", n, unit(rng)) for n in range(40)])
    table = store.table
    files = (f"SELECT pg_relation_filenode('{table}'), pg_relation_filenode('{table}_hnsw'), "
             f"pg_relation_size('{table}'), pg_relation_size('{table}_hnsw')")
    before = _sql(pg_uri, files)[0]
    assert store.delete_user("alice") == 400
    # Invisible to every query at once: no row, no payload that names her.
    assert _sql(pg_uri, f"SELECT count(*) FROM {table} WHERE user_id = 'alice' OR payload::text LIKE '%alice%'") == [(0,)]
    # ...but until the rewrite her tuples are dead rows in the same files: nothing was given back.
    assert _sql(pg_uri, files)[0] == before
    store.rewrite()
    after = _sql(pg_uri, files)[0]
    assert after[0] != before[0] and after[1] != before[1]  # table and HNSW index are new files...
    assert after[2] < before[2] / 4 and after[3] < before[3]  # ...holding only bob's 40 points
    assert store.count("bob") == 40 and store.count() == 40
    assert {h.payload["user_id"] for h in store.search("bob", unit(rng), 50)} == {"bob"}


def test_payloads_postgresql_cannot_store_are_refused_whole(store: PgVectorStore) -> None:
    rng = np.random.default_rng(6)
    good = PreparedPoint(ids.point_id("alice", "seg-1"), unit(rng), {"user_id": "alice", "text": "ok"})
    for bad_payload, problem in (({"user_id": "alice", "text": "a\x00b"}, "NUL"),
                                 ({"user_id": "alice", "tags": ["\ud800"]}, "surrogate"),
                                 ({"user_id": "alice", "x": float("nan")}, "NaN")):
        bad = PreparedPoint(ids.point_id("alice", "seg-2"), unit(rng), bad_payload)
        with pytest.raises(InvalidInput, match=problem) as err:
            store.write_points([good, bad])
        assert err.value.field == "points[1].payload"
    with pytest.raises(InvalidInput, match="UUID"):
        store.write_points([PreparedPoint("'; DROP TABLE x; --", unit(rng), {"user_id": "alice"})])
    assert store.count() == 0  # nothing of any call was written
    store.write_points([good])
    with pytest.raises(InvalidInput, match="surrogate"):
        store.set_payload("alice", {"seg-1": {"note": "\ud800"}})
    assert store.get("alice", ["seg-1"])[0].payload == good.payload


def test_hostile_keys_and_values_are_data_not_sql(store: PgVectorStore) -> None:
    rng = np.random.default_rng(7)
    store.upsert([record(u, n, unit(rng)) for u in ("alice", "bob") for n in range(3)])
    hostile = ["x') OR 1=1 --", "'; DROP TABLE lumina_vector_collections; --", "MATCH (n) DETACH DELETE n"]
    for value in hostile:
        with pytest.raises(InvalidInput):
            store.delete_matching("alice", "segment_id", [value])
    # A payload key is a parameter, never spliced: an odd key matches nothing and removes nothing.
    assert store.delete_matching("alice", "segment_id') OR (1=1", ["seg-1"]) == 0
    huge = "映" * 200_000  # TOASTed out of line; round-trips whole
    store.set_payload("alice", {"seg-0": {"note": huge, "who": hostile[1]}})
    assert store.get("alice", ["seg-0"])[0].payload["note"] == huge
    assert store.count() == 6 and store.count("bob") == 3


def test_kb_collections_are_tables_on_one_pool(pg_uri: str) -> None:
    pool = open_pool(pg_uri)
    collections = PgKBCollections(EMBEDDER, DIM, pool)
    try:
        assert collections.existing() == [] and collections.get("docs", False, create=False) is None
        shared = collections.get("docs", False)
        mine = collections.get("docs", True)
        assert collections.get("docs", True) is mine  # opened once
        rng = np.random.default_rng(8)
        row = {"kb": "docs", "doc_id": "d1", "chunk": 0, "passage": 0, "text": "紅茶"}
        v = unit(rng)
        assert shared.upsert_passages(None, [row], [v]) == 1
        assert mine.upsert_passages("alice", [row], [v]) == 1
        assert mine.search_passages("bob", v, 5) == [] and len(mine.search_passages("alice", v, 5)) == 1
        assert "user_id" not in shared.search_passages(None, v, 1)[0][1]
        assert collections.existing() == [("docs", False), ("docs", True)]
        assert collections.drop("docs", True) and not collections.exists("docs", True)
        assert _sql(pg_uri, "SELECT to_regclass(%s)", [table_name(mine.collection)]) == [(None,)]
        assert shared.count_owner(None) == 1  # the other KB's table is untouched
    finally:
        collections.close()
        assert pool.closed
