"""PostgresConnection (stores.pg_connection) on a real private PostgreSQL: shared SQL, stamps, migrations, errors."""

from __future__ import annotations

import threading

import pytest

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.pg_connection import PostgresConnection, to_pyformat
from lumina_memory.stores.sql_connection import SqlConnection
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

SCHEMA = [("CREATE TABLE IF NOT EXISTS t (k VARCHAR PRIMARY KEY, v DOUBLE PRECISION NOT NULL, tags VARCHAR[] NOT NULL)",)]


def _open(uri: str, steps=SCHEMA) -> PostgresConnection:
    db = PostgresConnection(uri, "archive")
    db.migrate("test", steps)
    return db


def test_placeholders_are_translated_outside_quotes_only():
    assert to_pyformat("SELECT '?', \"a?\" FROM t WHERE k = ? AND v LIKE '5%' AND w % 2 = ?") == (
        "SELECT '?', \"a?\" FROM t WHERE k = %s AND v LIKE '5%%' AND w %% 2 = %s"
    )


def test_percent_signs_reach_the_server_as_written_with_and_without_parameters(pg_uri):
    db = _open(pg_uri)
    try:
        with db.read() as con:
            assert con.execute("SELECT 7 % 3, '100%'").fetchone() == (1, "100%")
            assert con.execute("SELECT 'a%' LIKE ?, ? || '%?'", ["a%", "x"]).fetchone() == (True, "x%?")
    finally:
        db.close()


def test_shared_sql_round_trip_and_stamps(pg_uri):
    db = _open(pg_uri)
    try:
        assert isinstance(db, SqlConnection)
        before, before_a = db.generation, db.key_generation.get("alice", 0)
        with db.tx(touches={"alice"}) as con:
            con.execute("INSERT INTO t SELECT unnest(?::VARCHAR[]), unnest(?::DOUBLE PRECISION[]), ?::VARCHAR[]",
                        [["x", "y"], [1.5, 2.5], ["映画", "it's"]])
            assert db.in_transaction
        assert db.generation > before
        assert db.key_generation.get("alice", 0) > before_a
        assert db.key_generation.get("bob", 0) == 0
        with db.read() as con:
            rows = con.execute("SELECT k, v, tags FROM t WHERE 'it''s' = ANY(tags) ORDER BY k").fetchall()
        assert rows == [("x", 1.5, ["映画", "it's"]), ("y", 2.5, ["映画", "it's"])]
    finally:
        db.close()


def test_a_failed_transaction_rolls_back_and_moves_its_stamps_past_any_value_seen_inside(pg_uri):
    db = _open(pg_uri)
    try:
        with pytest.raises(RuntimeError):
            with db.tx(touches={"alice"}) as con:
                con.execute("INSERT INTO t VALUES (?, ?, ?)", ["x", 1.0, []])
                seen_inside = db.key_generation.get("alice", 0)  # what a cache filled here would be stamped with
                raise RuntimeError("boom")
        after = db.key_generation.get("alice", 0)
        assert after not in (0, seen_inside)
        with db.tx(touches={"alice"}) as con:
            con.execute("SELECT 1")
        assert db.key_generation.get("alice", 0) not in (seen_inside, after)
        with db.read() as con:
            assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)
    finally:
        db.close()


def test_a_second_process_connection_sees_the_write_and_its_stamp(pg_uri):
    first = _open(pg_uri)
    second = _open(pg_uri)
    try:
        seen = second.key_generation.get("alice", 0)
        with first.tx(touches={"alice"}) as con:
            con.execute("INSERT INTO t VALUES (?, ?, ?)", ["x", 1.0, []])
        assert second.key_generation.get("alice", 0) > seen
        with second.read() as con:
            assert con.execute("SELECT k FROM t").fetchall() == [("x",)]
    finally:
        first.close()
        second.close()


def test_migrations_apply_once_even_when_started_together(pg_uri):
    steps = [*SCHEMA, ("ALTER TABLE t ADD COLUMN extra VARCHAR",)]
    errors: list[BaseException] = []
    opened: list[PostgresConnection] = []

    def start() -> None:
        try:
            opened.append(_open(pg_uri, steps))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert opened[0].applied_steps("test") == [1, 2]
    finally:
        for db in opened:
            db.close()


def test_a_server_that_is_not_there_is_a_named_error(tmp_path):
    with pytest.raises(StoreUnavailable) as caught:
        PostgresConnection(f"postgresql://postgres@/postgres?host={tmp_path}", "archive", timeout=1)
    assert "PostgreSQL at" in str(caught.value) and "archive" in str(caught.value)


def test_duckdb_and_postgres_apply_the_same_migrations(pg_uri, tmp_path):
    from lumina_memory.stores.duckdb_connection import GuardedConnection

    steps = [*SCHEMA, ("ALTER TABLE t ADD COLUMN extra VARCHAR",)]
    for db in (GuardedConnection(str(tmp_path / "a.duckdb"), str(tmp_path), "archive", ()), _open(pg_uri, steps)):
        try:
            db.migrate("test", steps)
            db.migrate("test", steps)  # a second start applies nothing again
            with db.tx() as con:
                con.execute("INSERT INTO t (k, v, tags, extra) VALUES (?, ?, ?, ?)", ["k", 1.0, ["a"], "x"])
            with db.read() as con:
                assert con.execute("SELECT extra FROM t WHERE ? = ANY(tags)", ["a"]).fetchall() == [("x",)]
                assert con.execute("SELECT step FROM lumina_migrations WHERE component = 'test' ORDER BY step"
                                   ).fetchall() == [(1,), (2,)]
        finally:
            db.close()


def test_each_tier_has_its_own_generation(pg_uri):
    archive, graph = _open(pg_uri), PostgresConnection(pg_uri, "graph")
    try:
        before, graph_before = archive.generation, graph.generation
        with graph.tx() as con:
            con.execute("SELECT 1")
        middle = graph.generation
        assert archive.generation == before and middle > graph_before
        with archive.tx() as con:
            con.execute("SELECT 1")
        assert archive.generation > before and graph.generation == middle
    finally:
        archive.close()
        graph.close()


# --- the shared stamps (stores.pg_stamps) and the pool's idle check ----------------------------------------------

def _foreign_stamp(uri: str, key: str) -> None:
    """Another process's write of ``key``'s stamp (a session of its own, outside this process's stamps)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as con:
        con.execute("UPDATE lumina_versions SET version = nextval('lumina_versions_seq') WHERE key = %s", [key])


def test_a_stamp_is_read_once_per_validity_and_this_process_writes_drop_it_at_once(pg_uri):
    db, other = _open(pg_uri), PostgresConnection(pg_uri, "graph")
    try:
        assert other.stamps is db.stamps  # one database, one set of stamps in this process
        db.stamps.seconds = 60.0  # long enough that nothing expires while the test runs
        with db.tx(touches={"alice"}) as con:
            con.execute("INSERT INTO t VALUES (?, ?, ?)", ["x", 1.0, []])
        first, reads = db.key_generation.get("alice", 0), db.stamps.server_reads
        assert [db.key_generation.get("alice", 0) for _ in range(20)] == [first] * 20
        assert db.stamps.server_reads == reads  # the first read serves the next twenty
        _foreign_stamp(pg_uri, "alice")
        assert db.key_generation.get("alice", 0) == first  # another process's write: seen when the validity ends
        with other.tx(touches={"alice"}) as con:  # this process's write, through another connection
            con.execute("SELECT 1")
        moved = db.key_generation.get("alice", 0)
        assert moved > first
        with db.tx() as con:  # a write naming no user (an erasure deletes stamp rows so) drops every stamp
            con.execute("DELETE FROM lumina_versions WHERE key = ?", ["alice"])
        assert db.key_generation.get("alice", 0) == 0
    finally:
        db.close()
        other.close()


def test_another_process_write_is_seen_once_the_validity_has_passed(pg_uri):
    import time

    from lumina_memory.stores.pg_stamps import STAMP_SECONDS

    db = _open(pg_uri)
    try:
        with db.tx(touches={"bob"}) as con:
            con.execute("SELECT 1")
        before = db.key_generation.get("bob", 0)
        _foreign_stamp(pg_uri, "bob")
        time.sleep(STAMP_SECONDS)
        assert db.key_generation.get("bob", 0) > before
        assert STAMP_SECONDS <= 0.5  # half of the server mode's one-second promise at most
    finally:
        db.close()


def test_a_stamp_read_that_raced_a_write_of_this_process_is_not_kept():
    from lumina_memory.stores.pg_stamps import SharedStamps

    stamps, calls = SharedStamps(seconds=60.0), []

    def read_while_a_write_commits(key: str) -> int:
        calls.append(key)
        if len(calls) == 1:
            stamps.moved([key])  # the write ends while this read is on its way: what it read may be older
        return len(calls)

    assert stamps.get("k", 0, read_while_a_write_commits) == 1
    assert stamps.get("k", 0, read_while_a_write_commits) == 2  # not kept: read again
    assert stamps.get("k", 0, read_while_a_write_commits) == 2  # kept now
    assert stamps.get("absent", 7, lambda key: None) == 7


def test_a_quiet_pooled_connection_is_lent_without_a_query_and_a_terminated_one_is_replaced(pg_uri):
    import psycopg

    from bench.perf_server_profile import StatementCounter

    db = _open(pg_uri)
    try:
        with db.read() as con:
            con.execute("SELECT 1")
        with StatementCounter().watch() as counter:
            for _ in range(5):
                with db.read() as con:
                    assert con.execute("SELECT 2").fetchone() == (2,)
        assert counter.round_trips == 5  # the five statements, no check of the lent connection
        with psycopg.connect(pg_uri, autocommit=True) as admin:  # as a server restart ends every session
            ended = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                  "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
        assert ended >= 1
        with db.read() as con:
            assert con.execute("SELECT 3").fetchone() == (3,)
        with db.tx(touches={"alice"}) as con:
            con.execute("INSERT INTO t VALUES (?, ?, ?)", ["y", 2.0, []])
        assert db.key_generation.get("alice", 0) > 0
    finally:
        db.close()
