"""Server mode: what two processes (two connections) doing the same thing at once must not break, and a closed
Services leaving nothing open on the server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest
from langgraph.store.base import PutOp

from lumina_memory.nodes.services import open_services
from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores import journal_pg
from lumina_memory.stores.activity_log_pg import PostgresActivityLog
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.archive_postgres import PostgresArchive
from lumina_memory.stores.journal_pg import PostgresJournal
from lumina_memory.stores.kv_duckdb import ITEMS_TABLE
from lumina_memory.stores.langgraph_store import LuminaStore
from lumina_memory.stores.leases import PostgresLeases, lease_key, leases_of
from lumina_memory.stores.lgstore_ids import item_id
from lumina_memory.stores.lgstore_search import HASH_FIELD, ITEM_FIELD
from lumina_memory.stores.graph_base import LinkedSegment
from lumina_memory.stores.graph_pg import PostgresGraph
from lumina_memory.stores.ids import segment_id
from lumina_memory.stores.errors import DayAlreadyApplied
from lumina_memory.stores.memories_schema import OUTBOX
from lumina_memory.stores.pg_connection import PostgresConnection
from lumina_memory.stores.records import WRITTEN_BY_BATCH
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings
from .lgstore_backends import open_store
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_lifecycle_tables_engines import _fill
from .test_server_mode import _ingest

SECRET = "server-races-test-secret-0123456789abcdef"


def _together(*runs: tuple) -> None:
    """Run each (function, *args) in a thread of its own, all at once, and wait for them."""
    threads = [threading.Thread(target=run[0], args=run[1:]) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _backends(uri: str) -> list[tuple]:
    """The server's sessions on this database other than the asking one."""
    with psycopg.connect(uri) as con:
        return con.execute("SELECT pid, application_name, state, left(query, 60) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall()


def _backends_left(uri: str, application: str | None = None) -> list[tuple]:
    """The sessions (of ``application``) still on the server once closed ones have had time to end: a backend
    leaves pg_stat_activity when its process exits, a moment after the client closed the connection, so one seen
    right after a close may be on its way out; a connection left open stays for good."""
    for _ in range(300):
        left = [b for b in _backends(uri) if application is None or b[1] == application]
        if not left:
            return []
        time.sleep(0.1)
    return left


def test_a_closed_services_holds_no_backend_on_the_server(tmp_path, pg_uri):
    settings = make_settings(tmp_path / "data", database_url=pg_uri, secret_key=SECRET)
    services = open_services(settings)
    try:
        _ingest(services, "mio", [("user", "My sister Emma just moved to Lisbon."), ("lumina", "Lovely.")])
        with leases_of(services).hold("daily-batch") as got:
            assert got
        assert _backends(pg_uri)  # open: the pools and the leases' session are on the server
    finally:
        services.close()
    try:
        left = _backends_left(pg_uri)
        assert left == [], "\n".join(map(str, left))
    finally:
        stop_server(settings)


def test_closing_the_leases_while_one_is_held_keeps_it_until_its_release(pg_uri):
    """Two Services of one memory in a process share its leases: one closing must not free a lease the other
    holds (another worker could take it); the session ends at that lease's release, and opens again on use."""
    leases = PostgresLeases(pg_uri, timeout=5.0)
    key = lease_key("daily-batch")
    with psycopg.connect(pg_uri, autocommit=True) as other:
        try:
            with leases.hold("daily-batch") as got:
                assert got
                leases.close()
                assert other.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0] is False
            assert _backends_left(pg_uri, "lumina-leases") == []
            assert other.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0] is True
            with leases.hold("daily-batch") as got:
                assert got is False  # the other worker holds it now
            other.execute("SELECT pg_advisory_unlock(%s)", [key])
            with leases.hold("daily-batch") as got:
                assert got
        finally:
            leases.close()
    assert _backends_left(pg_uri, "lumina-leases") == []


def test_a_closed_activity_log_and_journal_open_again_on_use(pg_uri):
    log = PostgresActivityLog(PostgresConnection(pg_uri, "activity", timeout=5.0, pool_size=2), timeout=5.0)
    journal = PostgresJournal(PostgresConnection(pg_uri, "journal", timeout=5.0, pool_size=2), timeout=5.0)
    try:
        log.append("mio", "recall", at=1.0)
        entry = journal.open("mio", "reply-1")
        journal_pg.close_sessions(pg_uri)  # a reply in flight keeps the owner lock's session
        assert journal._liveness.in_flight == 1
        with psycopg.connect(pg_uri) as con:
            assert con.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0] == 1
        entry.write("hello")
        entry.finish()
        entry.finish()  # counted out once
        assert journal._liveness.in_flight == 0
        log.close()
        journal._liveness.close()
        assert log.events("mio")[0]["at"] == 1.0  # the log opens its connection again
        log.append("mio", "recall", at=2.0)
        assert [e["at"] for e in log.events("mio")] == [1.0, 2.0]
    finally:
        log.close()
        journal.close()
        journal._liveness.close()


@pytest.fixture(params=["duckdb", "postgres"])
def two_archives(request, tmp_path) -> Iterator[tuple]:
    """Two writers of one memory: on DuckDB the one process's archive (two threads), on PostgreSQL two archives
    with pools of their own, as two processes have."""
    if request.param == "duckdb":
        archive = DuckDBArchive(tmp_path)
        try:
            yield archive, archive
        finally:
            archive.close()
        return
    uri = request.getfixturevalue("pg_uri")
    first, second = PostgresArchive(uri), PostgresArchive(uri)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def _outbox_days(archive) -> list[int]:
    with archive.memories.db.read() as con:
        return [int(r[0]) for r in con.execute(f"SELECT day FROM {OUTBOX} ORDER BY day").fetchall()]


def test_a_batch_day_is_applied_once_when_two_writers_race_for_it(two_archives):
    first, second = two_archives
    ids = _fill(first, "mio", 3)
    arrays, _, seq = first.memories.load(["mio"])
    values = {k: np.asarray(arrays[k]).copy() for k in WRITTEN_BY_BATCH}
    days = range(1, 9)
    refused: list[int] = []
    errors: list[BaseException] = []
    for day in days:
        start = threading.Barrier(2)

        def write(archive, day=day, start=start) -> None:
            start.wait()
            try:
                archive.memories.write_day(["mio"], day, seq, values, {}, None, [("mio", ids[0], "payload")], [],
                                           float(day))
            except DayAlreadyApplied as exc:
                refused.append(exc.day)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        _together((write, first), (write, second))
    assert errors == [] and refused == list(days)  # each day: one writer applied it, the other was refused
    assert _outbox_days(second) == list(days)  # each day's writes once
    assert second.memories.last_days() == {"mio": days[-1]}


def test_a_day_not_after_the_last_is_refused_for_every_user_and_nothing_is_written(two_archives):
    first, second = two_archives
    _fill(first, "mio", 2)
    _fill(first, "kai", 2)
    first.memories.start_users(["kai"], 3, 1.0)
    first.memories.write_day(["mio"], 5, np.array([], dtype=np.int64), {}, {}, None, [], [], 1.0)
    for day in (5, 4):
        with pytest.raises(DayAlreadyApplied) as err:
            second.memories.write_day(["kai", "mio"], day, np.array([], dtype=np.int64), {}, {}, None,
                                      [("kai", "km:0", "payload")], [], 2.0)
        assert err.value.day == day and err.value.last_days == {"mio": 5}
    assert first.memories.last_days() == {"mio": 5, "kai": 3} and _outbox_days(first) == []
    second.memories.write_day(["kai"], 4, np.array([], dtype=np.int64), {}, {}, None, [], [], 2.0)
    assert first.memories.last_days() == {"mio": 5, "kai": 4}


def _segments(user: str, n: int, neighbours: bool = True) -> list[LinkedSegment]:
    ids = [segment_id(user, f"turn-{i}") for i in range(n)]
    return [LinkedSegment(s, ["lumina", "nox"], ["猫", "旅行", f"c{i}"], f"summary {i}", float(i), 0.5,
                          [(ids[(i + 1) % n], 0.7)] if neighbours else []) for i, s in enumerate(ids)]


def test_two_writers_of_reversed_graph_batches_never_deadlock(pg_uri):
    """Batches restating the same existing segments (their nodes, edges and links) in opposite orders, from two
    connections at once, again and again: each write goes through, nothing doubles."""
    first, second = PostgresGraph(pg_uri, timeout=30.0), PostgresGraph(pg_uri, timeout=30.0)
    try:
        batch = _segments("mio", 8)
        first.upsert_linked_segments("mio", batch)
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def write(graph: PostgresGraph, order: list[LinkedSegment]) -> None:
            try:
                for _ in range(15):
                    start.wait()
                    graph.upsert_linked_segments("mio", order)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                start.abort()

        _together((write, first, batch), (write, second, batch[::-1]))
        assert errors == []
        counts = second.counts("mio")
        assert counts.nodes["Segment"] == 8 and counts.edges["MENTIONS"] == 8 * 3
        assert counts.edges["ASSOCIATED"] == 8 and counts.edges["PARTICIPATED"] == 8 * 2
    finally:
        first.close()
        second.close()


def test_a_graph_write_rolled_back_by_a_deadlock_runs_once_more(pg_uri):
    """Another session (an operator's UPDATE) takes two segments' rows in the other order than a batch: PostgreSQL
    breaks the deadlock by rolling the batch back (its deadlock_timeout is the shorter), and the batch runs again
    and goes through once the other session commits."""
    graph = PostgresGraph(pg_uri, timeout=30.0)
    try:
        batch = _segments("mio", 2, neighbours=False)
        graph.upsert_linked_segments("mio", batch)
        s1, s2 = batch[0].segment_id, batch[1].segment_id
        restated = [seg._replace(summary=f"again {i}") for i, seg in enumerate(batch)]
        outcome: dict = {}
        with psycopg.connect(pg_uri) as other:
            other.execute("SET deadlock_timeout = '60s'")
            other.execute("UPDATE graph_segments SET summary = 'other' WHERE id = %s", [s2])

            def write() -> None:
                try:
                    graph.upsert_linked_segments("mio", restated)  # s1 first, then waits for s2
                except BaseException as exc:  # noqa: BLE001 - the test reads it
                    outcome["error"] = exc

            worker = threading.Thread(target=write)
            worker.start()
            with psycopg.connect(pg_uri, autocommit=True) as watch:
                while not watch.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                        "AND datname = current_database()").fetchone()[0]:
                    worker.join(0.05)
            # Waits for the batch's s1: a deadlock, which the batch's session detects and rolls back.
            other.execute("UPDATE graph_segments SET summary = 'other' WHERE id = %s", [s1])
            other.commit()
        worker.join()
        assert "error" not in outcome
        rows = graph.select("SELECT id, summary FROM graph_segments ORDER BY summary")
        assert rows == [{"id": s1, "summary": "again 0"}, {"id": s2, "summary": "again 1"}]
    finally:
        graph.close()


def _index_mismatches(uri: str, store: LuminaStore) -> list[tuple]:
    """Items whose text points do not carry their row's current text hash (a search would not find them)."""
    with psycopg.connect(uri) as con:
        return con.execute(
            f"SELECT i.item_id, i.index_hash, p.payload->>'{HASH_FIELD}' FROM {ITEMS_TABLE} i LEFT JOIN "
            f"{store.vectors.table} p ON p.payload->>'{ITEM_FIELD}' = i.item_id "
            f"WHERE p.id IS NULL OR p.payload->>'{HASH_FIELD}' <> i.index_hash").fetchall()


def test_two_writers_updating_the_same_items_leave_each_row_and_its_index_whole(pg_uri, tmp_path):
    """Two stores (two processes) update the same items at once, in opposite orders, many times: no call fails
    (no deadlock), and each item ends as one writer's value with that value's text points, so it is found."""
    embedder = make_embedder(make_settings(tmp_path / "emb"))
    stores = [open_store("postgres", make_settings(tmp_path / name), pg_uri, embedder=embedder) for name in "ab"]
    try:
        keys = [f"k{i}" for i in range(40)]
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def write(store: LuminaStore, who: str, order: list[str]) -> None:
            try:
                for round_ in range(10):
                    start.wait()
                    store.batch([PutOp(("notes", "mio"), k, {"text": f"{who} wrote {k} in round {round_}"})
                                 for k in order])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                start.abort()

        _together((write, stores[0], "ann", keys), (write, stores[1], "bea", keys[::-1]))
        assert errors == []
        assert _index_mismatches(pg_uri, stores[0]) == []
        for key in keys:
            text = stores[1].get(("notes", "mio"), key).value["text"]
            assert text.endswith(f"wrote {key} in round 9")
            hits = stores[0].search(("notes", "mio"), query=text, limit=len(keys))
            assert key in [h.key for h in hits if h.score is not None]
    finally:
        for store in stores:
            store.close()


def test_an_item_held_by_one_writer_is_updated_by_another_only_after_its_commit(pg_uri, tmp_path):
    """The hold that keeps an item's vectors and row in step across processes: a put of an item another process
    is writing waits (on the server's lock) until that write commits, then applies whole."""
    embedder = make_embedder(make_settings(tmp_path / "emb"))
    stores = [open_store("postgres", make_settings(tmp_path / name), pg_uri, embedder=embedder) for name in "ab"]
    try:
        stores[0].put(("notes", "mio"), "k", {"text": "the first value"})
        done = threading.Event()

        def put() -> None:
            stores[1].put(("notes", "mio"), "k", {"text": "the second value"})
            done.set()

        with stores[0].items.writing([item_id(("notes", "mio"), "k")]):
            worker = threading.Thread(target=put)
            worker.start()
            with psycopg.connect(pg_uri, autocommit=True) as watch:
                while not watch.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                                        ).fetchone()[0]:
                    worker.join(0.05)
            assert not done.is_set()
        worker.join()
        assert stores[0].get(("notes", "mio"), "k").value["text"] == "the second value"
        assert _index_mismatches(pg_uri, stores[0]) == []
    finally:
        for store in stores:
            store.close()
