"""Agents' records under transactions and concurrent writers (stores.agent_tables, stores.agent_events_cache).

A consolidation is one transaction; a caller's transaction carries the tables' writes with it; what one reads
after a write (committed, rolled back, inside an open transaction) is what the engine holds, on DuckDB where STM
reads come from the process's copy too; on PostgreSQL two connections (two processes' worth) racing the same
agent's working memory and LTM counts both land, and each sees the other's writes and their stamps.
"""

from __future__ import annotations

import threading

import pytest

from lumina_memory.stores.agent_tables import SqlAgentTables
from lumina_memory.stores.errors import InvalidInput

from .sql_engines import pg_server, sql_db, sql_pair  # noqa: F401 - fixtures
from .test_agent_tables import ev, rec, shared


def ids_of(events) -> list[str]:
    return [e.event_id for e in events]


class _CrashAfterRecords(SqlAgentTables):
    """A consolidation that dies between writing its records and deleting their events."""

    def _upsert_ltm(self, con, rows):
        super()._upsert_ltm(con, rows)
        raise RuntimeError("killed mid-way")


def test_consolidated_failing_mid_way_leaves_the_events(sql_db):
    tables = _CrashAfterRecords(sql_db)
    tables.add_events([ev("a1", 1), ev("a1", 2)])
    with pytest.raises(RuntimeError):
        tables.consolidated("a1", [rec("a1", 1, source_events=["e1", "e2"])], ["e1", "e2"])
    assert tables.count_events("a1") == 2 and tables.count_ltm("a1") == 0
    with pytest.raises(RuntimeError), sql_db.tx():  # inside a caller's transaction: rolled back with it
        SqlAgentTables(sql_db).consolidated("a1", [rec("a1", 1)], ["e1"])
        raise RuntimeError("the caller's transaction fails")
    assert tables.count_events("a1") == 2 and tables.count_ltm("a1") == 0




# --- PostgreSQL: two processes on one agent ------------------------------------------------------------------
def _race(workers) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def run(work):
        try:
            start.wait()
            work()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_racing_merges_and_touches_all_land_on_postgres(sql_pair):
    first, second = (SqlAgentTables(db) for db in sql_pair)
    first.add_ltm([rec("a1", 1), rec("a1", 2)])
    rounds = 25

    def merges(tables, name):
        return lambda: [tables.merge_wm("a1", {f"{name}{i}": i}) for i in range(rounds)]

    def touches(tables, at):
        return lambda: [tables.touch_ltm("a1", ["m1", "m2"], at + i) for i in range(rounds)]

    _race([merges(first, "p"), merges(second, "q"), touches(first, 100.0), touches(second, 200.0)])
    _race([first.flush_accesses, second.flush_accesses])  # each process's pending accesses, written at once
    doc = second.get_wm("a1")
    assert doc == {**{f"p{i}": i for i in range(rounds)}, **{f"q{i}": i for i in range(rounds)}}
    assert [(r.access_count, r.last_accessed) for r in first.ltm("a1")] == [(2 * rounds, 200.0 + rounds - 1)] * 2


def test_two_authors_racing_for_one_shared_id_on_postgres(sql_pair):
    first, second = (SqlAgentTables(db) for db in sql_pair)
    outcomes: list[str] = []

    def store(tables, author):
        def work():
            try:
                tables.add_shared(shared("s1", author, content=f"by {author}"))
                outcomes.append(author)
            except InvalidInput:
                outcomes.append("refused")
        return work

    _race([store(first, "a1"), store(second, "a2")])
    assert len(outcomes) == 2 and outcomes.count("refused") == 1
    winner = next(o for o in outcomes if o != "refused")
    assert [(m.author, m.content) for m in first.visible_shared(winner)] == [(winner, f"by {winner}")]


def test_another_connection_sees_writes_and_their_stamps(sql_pair):
    first, second = (SqlAgentTables(db) for db in sql_pair)
    stamp = sql_pair[1].key_generation.get("a1", 0)
    first.add_events([ev("a1", 1)])
    assert [e.event_id for e in second.events("a1")] == ["e1"]
    assert sql_pair[1].key_generation.get("a1", 0) > stamp
    run_stamp = sql_pair[1].key_generation.get("r1", 0)
    first.add_shared(shared("s1", "a1"))
    assert sql_pair[1].key_generation.get("r1", 0) > run_stamp
    assert [m.memory_id for m in second.visible_shared("a1")] == ["s1"]
    second.join_group("r1", "g", "a2")
    first.add_shared(shared("s2", "a1", scope="group", group_id="g"))
    assert [m.memory_id for m in second.visible_shared("a2", scope="group")] == ["s2"]
    first.leave_group("r1", "g", "a2")
    assert second.visible_shared("a2", scope="group") == []


# --- what a read shows after each kind of write ------------------------------------------------------------
def test_reads_follow_commits_rollbacks_and_open_transactions(sql_db):
    tables = SqlAgentTables(sql_db)
    tables.add_events([ev("a1", 1), ev("a2", 1)])
    assert ids_of(tables.events("a1")) == ["e1"]  # read (and, on DuckDB, kept)
    tables.add_events([ev("a1", 3), ev("a1", 2), ev("a2", 1, content="retry")])
    assert ids_of(tables.events("a1")) == ["e1", "e2", "e3"] and tables.count_events("a1") == 3
    assert tables.events("a2")[0].content == "a2 did thing 1"
    with pytest.raises(RuntimeError), sql_db.tx():
        tables.add_events([ev("a1", 4)])
        assert ids_of(tables.events("a1", 2, newest=True)) == ["e3", "e4"]  # its own write, not yet committed
        assert tables.delete_events("a1", ["e1"]) == 1
        assert ids_of(tables.events("a1")) == ["e2", "e3", "e4"]
        raise RuntimeError("the caller's transaction fails")
    assert ids_of(tables.events("a1")) == ["e1", "e2", "e3"]
    with sql_db.tx():
        tables.consolidated("a1", [rec("a1", 1)], ["e1", "e2"])
    assert ids_of(tables.events("a1")) == ["e3"] and tables.count_ltm("a1") == 1
    other = SqlAgentTables(sql_db)  # a second adapter on the connection: its writes move the stamps
    other.add_events([ev("a1", 5)])
    assert ids_of(tables.events("a1")) == ["e3", "e5"]
    tables.add_events([ev("a1", 4)])  # older than the newest event read: in its place
    assert ids_of(tables.events("a1")) == ["e3", "e4", "e5"] and ids_of(tables.events("a1", 1, newest=True)) == ["e5"]
    assert tables.cached_for("a1") == (3 if sql_db.dialect == "duckdb" else 0)
    tables.erase_agent("a1")
    assert tables.cached_for("a1") == 0 and tables.events("a1") == [] and tables.count_events("a1") == 0
    assert ids_of(other.events("a2")) == ["e1"]


def test_same_event_ids_of_different_agents_in_one_batch(sql_db):
    tables = SqlAgentTables(sql_db)
    assert tables.add_events([ev("a2", 1)]) == 1
    assert tables.add_events([ev("a1", 1), ev("a2", 1), ev("a3", 1)]) == 2
    assert [tables.count_events(a) for a in ("a1", "a2", "a3")] == [1, 1, 1]


def test_the_embedded_copy_of_stm_follows_this_process_writes_without_reading_again(tmp_path):
    from lumina_memory.stores.duckdb_connection import GuardedConnection

    db = GuardedConnection(str(tmp_path / "archive.duckdb"), str(tmp_path), "archive", ())
    try:
        tables = SqlAgentTables(db)
        tables.add_events([ev("a1", 1), ev("a2", 1)])
        tables.add_ltm([rec("a1", 1)])
        assert ids_of(tables.events("a1")) == ["e1"] and tables.events_cache.loads == 1
        tables.add_events([ev("a1", 2), ev("a2", 2)])
        tables.touch_ltm("a1", ["m1"], 5.0)
        tables.merge_wm("a1", {"goal": "g"})
        tables.add_shared(shared("s1", "a1", scope="bilateral", visible_to=["a1", "a2"]))
        tables.delete_events("a1", ["e1"])
        assert ids_of(tables.events("a1")) == ["e2"] and tables.events_cache.loads == 1
        tables.erase_agent("a2")  # takes a2 out of a1's bilateral memory: a1's stamp moves, its events are read again
        assert ids_of(tables.events("a1")) == ["e2"] and tables.events_cache.loads == 2
    finally:
        db.close()
