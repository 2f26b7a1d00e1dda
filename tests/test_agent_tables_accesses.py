"""The agent tables' grouped reads and pending accesses (stores.agent_tables, stores.agent_accesses), both engines.

``count_events_many`` answers every agent of a tick in one read, equal to ``count_events`` one by one.
A retrieval's LTM accesses are counted in memory and written with the next write: every read in this process
sees them at once, the table holds them after a store, a maintenance-like rewrite, a flush or close, never twice,
and a failed write leaves them pending.
"""

from __future__ import annotations

import pytest

from lumina_memory.stores.agent_accesses import PendingAccesses
from lumina_memory.stores.agent_tables import SqlAgentTables
from lumina_memory.stores.duckdb_connection import GuardedConnection
from lumina_memory.stores.errors import InvalidInput

from .sql_engines import pg_server, sql_db  # noqa: F401 - fixtures
from .test_agent_tables import ev, rec


@pytest.fixture
def tables(sql_db) -> SqlAgentTables:
    return SqlAgentTables(sql_db)


def stored_accesses(db, agent: str) -> dict[str, tuple[int, float | None]]:
    """What the table itself holds (not this process's view)."""
    with db.read() as con:
        rows = con.execute("SELECT memory_id, access_count, last_accessed FROM agent_ltm WHERE agent_id = ? "
                           "ORDER BY memory_id", [agent]).fetchall()
    return {m: (int(n), last) for m, n, last in rows}


# --- count_events_many --------------------------------------------------------------------------------------
def test_count_events_many_equals_counting_one_by_one(tables):
    tables.add_events([ev("a1", n) for n in range(1, 4)] + [ev("a2", 1), ev("a10", 1), ev("a10", 2)])
    tables.events("a1")  # on DuckDB a1 is now kept in this process's copy; a2 and a10 are counted by the table
    asked = ["a2", "a1", "a10", "nobody", "A1", "a1"]
    counts = tables.count_events_many(asked)
    assert counts == {"a2": 1, "a1": 3, "a10": 2, "nobody": 0, "A1": 0}
    assert list(counts) == ["a2", "a1", "a10", "nobody", "A1"]  # the order asked, each once
    assert counts == {a: tables.count_events(a) for a in counts}
    tables.delete_events("a1", ["e1"])
    tables.add_events([ev("a2", 2)])
    assert tables.count_events_many(["a1", "a2"]) == {"a1": 2, "a2": 2}
    assert tables.count_events_many([]) == {}


@pytest.mark.parametrize("bad", ["../x", "a' OR '1'='1", ""])
def test_count_events_many_refuses_a_hostile_id(tables, bad):
    with pytest.raises(InvalidInput):
        tables.count_events_many(["a1", bad])


# --- pending accesses -------------------------------------------------------------------------------------
def test_accesses_are_seen_at_once_and_written_with_the_next_store(tables, sql_db):
    tables.add_ltm([rec("a1", 1), rec("a1", 2), rec("a2", 1)])
    tables.touch_ltm("a1", ["m1", "m1", "m2"], at=50.0)
    tables.touch_ltm("a1", ["m1"], at=40.0)
    tables.touch_ltm("a2", ["m1"], at=60.0)
    view = {r.memory_id: (r.access_count, r.last_accessed) for r in tables.ltm("a1")}
    assert view == {"m1": (2, 50.0), "m2": (1, 50.0)}
    assert [(r.access_count, r.last_accessed) for r in tables.ltm("a1", ["m2"])] == [(1, 50.0)]
    assert stored_accesses(sql_db, "a1") == {"m1": (0, None), "m2": (0, None)}  # not written yet
    tables.add_events([ev("a3", 1)])  # a store carries them
    assert stored_accesses(sql_db, "a1") == {"m1": (2, 50.0), "m2": (1, 50.0)}
    assert stored_accesses(sql_db, "a2") == {"m1": (1, 60.0)}
    assert {r.memory_id: r.access_count for r in tables.ltm("a1")} == {"m1": 2, "m2": 1}  # not counted twice
    assert tables.flush_accesses() == 0


def test_a_rewrite_of_records_read_with_pending_accesses_keeps_each_once(tables, sql_db):
    """Maintenance reads the records (pending accesses included) and writes them back with their decay."""
    tables.add_ltm([rec("a1", 1), rec("a1", 2)])
    tables.touch_ltm("a1", ["m1"], at=10.0)
    read = tables.ltm("a1")
    tables.touch_ltm("a1", ["m1", "m2"], at=20.0)  # after the read, before the rewrite: pending still
    tables.add_ltm([r.model_copy(update={"decay_factor": 0.5}) for r in read])
    assert stored_accesses(sql_db, "a1") == {"m1": (2, 20.0), "m2": (1, 20.0)}
    assert [(r.access_count, r.decay_factor) for r in tables.ltm("a1")] == [(2, 0.5), (1, 0.5)]


def test_accesses_are_written_on_close_and_when_too_many_are_pending(tables, sql_db):
    tables.add_ltm([rec("a1", n) for n in range(1, 5)])
    tables.accesses.max_pending = 3
    tables.touch_ltm("a1", ["m1"], at=1.0)
    tables.touch_ltm("a1", ["m2"], at=2.0)
    assert stored_accesses(sql_db, "a1")["m1"] == (0, None)
    tables.touch_ltm("a1", ["m3"], at=3.0)  # the third record pending: written now
    assert [stored_accesses(sql_db, "a1")[m][0] for m in ("m1", "m2", "m3", "m4")] == [1, 1, 1, 0]
    tables.touch_ltm("a1", ["m4", "m1"], at=4.0)
    tables.close()
    assert stored_accesses(sql_db, "a1") == {"m1": (2, 4.0), "m2": (1, 2.0), "m3": (1, 3.0), "m4": (1, 4.0)}
    assert {r.access_count for r in SqlAgentTables(sql_db).ltm("a1")} == {1, 2}  # another opening reads them


def test_an_erased_agent_s_pending_accesses_go_with_it(tables, sql_db):
    tables.add_ltm([rec("a1", 1), rec("a2", 1)])
    tables.touch_ltm("a1", ["m1"], at=1.0)
    tables.touch_ltm("a2", ["m1"], at=1.0)
    tables.erase_agent("a1")
    assert len(tables.accesses) == 1 and tables.flush_accesses() == 1
    assert stored_accesses(sql_db, "a2") == {"m1": (1, 1.0)} and stored_accesses(sql_db, "a1") == {}


def test_a_failed_write_leaves_the_accesses_pending():
    pending = PendingAccesses()
    pending.add("a1", ["m1", "m2"], 5.0)
    with pytest.raises(RuntimeError):
        with pending.writing() as take:
            assert take()[1] == ["m1", "m2"] and len(pending) == 0
            pending.add("a1", ["m1"], 7.0)  # an access while the write runs
            raise RuntimeError("the transaction failed")
    assert pending.read("a1", lambda: None)[1] == {"m1": (2, 7.0), "m2": (1, 5.0)}
    with pending.writing() as take:
        assert take() == (["a1", "a1"], ["m1", "m2"], [2, 1], [7.0, 5.0])
    assert len(pending) == 0 and pending.read("a1", lambda: "rows") == ("rows", {})


def test_accesses_are_due_by_count_and_by_age():
    pending = PendingAccesses(max_pending=2, max_age_seconds=3600.0)
    assert pending.add("a1", ["m1"], 1.0) is False
    assert pending.add("a1", ["m1"], 2.0) is False  # the same record again: still one pending
    assert pending.add("a2", ["m1"], 2.0) is True
    assert PendingAccesses(max_pending=100, max_age_seconds=0.0).add("a1", ["m1"], 1.0) is True


# --- LTM laid out by agent --------------------------------------------------------------------------------
def _physical_agents(db) -> list[str]:
    """The agents of the LTM rows in the order the engine stores them (DuckDB's rowid)."""
    with db.read() as con:
        return [r[0] for r in con.execute("SELECT agent_id FROM agent_ltm ORDER BY rowid").fetchall()]


def test_cluster_ltm_keeps_every_record_and_lays_them_out_by_agent(tables, sql_db):
    for n in range(1, 4):  # consolidations of three agents, interleaved
        tables.add_ltm([rec(a, n) for a in ("a3", "a1", "a2")])
    tables.touch_ltm("a1", ["m2"], at=9.0)
    before = {a: tables.ltm(a) for a in ("a1", "a2", "a3")}
    rewritten = tables.cluster_ltm()
    assert {a: tables.ltm(a) for a in before} == before
    assert tables.ltm("a1", ["m2"])[0].access_count == 1 and tables.flush_accesses() == 1
    if sql_db.dialect == "duckdb":
        assert rewritten == 9 and _physical_agents(sql_db) == ["a1"] * 3 + ["a2"] * 3 + ["a3"] * 3
    else:  # the agent_id index serves PostgreSQL's reads: nothing to rewrite
        assert rewritten == 0


def test_duckdb_orders_the_table_again_once_enough_rows_were_written(tmp_path):
    sql_db = GuardedConnection(str(tmp_path / "archive.duckdb"), str(tmp_path), "archive", ())
    tables = SqlAgentTables(sql_db)
    tables.cluster_min_rows, tables.cluster_share = 6, 0.5
    tables.add_ltm([rec(a, 1) for a in ("a2", "a1")])
    tables.add_ltm([rec(a, 2) for a in ("a2", "a1")])
    assert tables.ltm_written == 4 and _physical_agents(sql_db) == ["a2", "a1", "a2", "a1"]
    tables.add_events([ev("a1", 7), ev("a1", 8)])
    tables.consolidated("a1", [rec("a1", 7), rec("a1", 8)], ["e7", "e8"])  # the sixth row written
    assert tables.ltm_written == 0 and _physical_agents(sql_db) == ["a1"] * 4 + ["a2"] * 2
    assert [r.memory_id for r in tables.ltm("a1")] == ["m1", "m2", "m7", "m8"]
    tables.add_ltm([rec("a2", 3)])  # 1 of 7 rows: not yet
    assert tables.ltm_written == 1 and _physical_agents(sql_db)[-1] == "a2"
    sql_db.close()


# --- several agents erased in one pass --------------------------------------------------------------------
def test_erase_agents_removes_several_in_one_pass_and_strips_their_ids(tables, sql_db):
    from .test_agent_tables import _fill, rows_in_tables

    _fill(tables, "a1", "a2")
    _fill(tables, "a2", "a3")
    _fill(tables, "a3", "a1")
    tables.touch_ltm("a1", ["m1"], at=3.0)
    kept = (tables.ltm("a3"), tables.get_wm("a3"), [e.event_id for e in tables.events("a3")])
    before = rows_in_tables(sql_db)
    removed = tables.erase_agents(["a2", "a1", "a1"])
    assert removed == before - rows_in_tables(sql_db) > 0
    assert tables.count_agent("a1") == tables.count_agent("a2") == 0 and tables.agents() == ["a3"]
    assert len(tables.accesses) == 0  # the erased agents' pending accesses went with them
    assert (tables.ltm("a3"), tables.get_wm("a3"), [e.event_id for e in tables.events("a3")]) == kept
    assert [e.participants for e in tables.events("a3")] == [[], []]
    assert tables.visible_shared("a3", ids=["b-a3"])[0].visible_to == ["a3"]
    with sql_db.read() as con:
        for table, column in (("agent_events", "agent_id"), ("agent_ltm", "agent_id"), ("agent_wm", "agent_id"),
                              ("agent_shared", "author"), ("agent_groups", "agent_id"), ("agent_agents", "agent_id"),
                              ("agent_hops", "from_agent"), ("agent_hops", "to_agent")):
            n = con.execute(f"SELECT count(*) FROM {table} WHERE {column} IN ('a1', 'a2')").fetchone()[0]
            assert n == 0, (table, column)
    assert tables.erase_agents(["a1", "a2"]) == 0 and tables.erase_agents([]) == 0
    with pytest.raises(InvalidInput):
        tables.erase_agents(["a3", "../a3"])
    assert tables.count_agent("a3") > 0
