"""Agents' records (stores.agent_tables.SqlAgentTables): one conformance suite on DuckDB and PostgreSQL.

Every method of ``AgentTables`` against a real engine: ordering, idempotency, isolation of agents and runs,
the visibility of shared memories as memberships change, erasure, bad input refused with nothing written.
Transactions and concurrent writers: test_agent_tables_writers.py.
"""

from __future__ import annotations

import pytest

from lumina_memory.stores.agent_records import AgentEvent, LtmRecord, SharedMemory, TellHop
from lumina_memory.stores.agent_tables import SqlAgentTables
from lumina_memory.stores.agent_tables_sql import TABLES
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.protocols_agents import AgentTables

from .sql_engines import pg_server, sql_db  # noqa: F401 - fixtures

HOSTILE = ["../x", "'; DROP TABLE agent_events; --", "a' OR '1'='1", "MATCH (n) DETACH DELETE n", "agent_1 ",
           "agent_\uff11", "", "a\nb", "x" * 129]
LONE = "broken \ud800 text"


@pytest.fixture
def tables(sql_db) -> SqlAgentTables:
    return SqlAgentTables(sql_db)


def ev(agent: str, n: int, t: float | None = None, **kw) -> AgentEvent:
    fields = {"type": "action", "content": f"{agent} did thing {n}", **kw}
    return AgentEvent(event_id=f"e{n}", agent_id=agent, time=float(n if t is None else t), **fields)


def rec(agent: str, n: int, **kw) -> LtmRecord:
    fields = {"content": f"{agent} remembers {n}", **kw}
    return LtmRecord(memory_id=f"m{n}", agent_id=agent, created_at=float(n), **fields)


def shared(memory_id: str, author: str, run: str = "r1", **kw) -> SharedMemory:
    fields = {"content": f"{memory_id} by {author}", "created_at": 1.0, **kw}
    return SharedMemory(memory_id=memory_id, run_id=run, author=author, **fields)


def rows_in_tables(db) -> int:
    with db.read() as con:
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES)


# --- the contract, agents and runs -----------------------------------------------------------------------
def test_is_the_protocol_and_names_its_engine(tables, sql_db):
    assert isinstance(tables, AgentTables)
    assert tables.dialect == sql_db.dialect
    SqlAgentTables(sql_db)  # a second opening applies no step again
    assert tables.agents() == []


def test_agents_belong_to_one_run(tables):
    tables.register_agent("b1", "r2")
    tables.register_agent("a1", "r1")
    tables.register_agent("a1", "r1")  # idempotent
    tables.register_agent("a2", "r1")
    assert tables.run_of("a1") == "r1" and tables.run_of("nobody") is None
    assert tables.agents() == ["a1", "a2", "b1"]
    assert tables.agents("r1") == ["a1", "a2"] and tables.agents("r2") == ["b1"] and tables.agents("r3") == []
    with pytest.raises(InvalidInput, match="run_id"):
        tables.register_agent("a1", "r2")
    assert tables.run_of("a1") == "r1"


# --- working memory ---------------------------------------------------------------------------------------
def test_working_memory_merges_top_level_keys(tables):
    assert tables.get_wm("a1") is None
    assert tables.merge_wm("a1", {"goal": "build", "mood": "calm", "inventory": ["axe"]}) == {
        "goal": "build", "mood": "calm", "inventory": ["axe"]}
    after = tables.merge_wm("a1", {"mood": None, "inventory": ["axe", "rope"], "位置": {"x": 1}})
    assert after == {"goal": "build", "inventory": ["axe", "rope"], "位置": {"x": 1}}
    assert tables.get_wm("a1") == after
    assert tables.get_wm("a10") is None and tables.get_wm("A1") is None


@pytest.mark.parametrize("patch", [["not", "a", "dict"], {"k": LONE}, {LONE: 1}, {"k": float("nan")},
                                   {"k": object()}, {1: "int key"}])
def test_working_memory_refuses_what_is_not_json(tables, patch):
    tables.merge_wm("a1", {"goal": "keep"})
    with pytest.raises(InvalidInput):
        tables.merge_wm("a1", patch)
    assert tables.get_wm("a1") == {"goal": "keep"}


# --- events -----------------------------------------------------------------------------------------------
def test_events_round_trip_in_time_order(tables):
    events = [ev("a1", 3, participants=["a2", "b7"], location={"place": "mill", "xy": [1, 2]},
                 importance=0.7, metadata={"emotion": "joy", "n": 2}, type="conversation"),
              ev("a1", 1), ev("a1", 2, t=3.0), ev("a2", 1)]
    assert tables.add_events(events) == 4
    got = tables.events("a1")
    assert [e.event_id for e in got] == ["e1", "e2", "e3"]  # time, then id on a tie
    assert got[2] == events[0] and got[0].participants == [] and got[0].location is None
    assert [e.event_id for e in tables.events("a1", 2)] == ["e1", "e2"]
    assert [e.event_id for e in tables.events("a1", 2, newest=True)] == ["e2", "e3"]
    assert [e.event_id for e in tables.events("a1", ids=["e3", "e1", "e9"])] == ["e1", "e3"]
    assert tables.events("a1", 0) == []
    assert tables.count_events("a1") == 3 and tables.count_events("a2") == 1


def test_add_events_is_idempotent(tables):
    first = ev("a1", 1, content="original")
    assert tables.add_events([first, ev("a1", 1, content="duplicate in the batch")]) == 1
    assert tables.add_events([ev("a1", 1, content="retried"), ev("a1", 2)]) == 1
    assert tables.add_events([]) == 0
    assert [e.content for e in tables.events("a1")] == ["original", "a1 did thing 2"]


def test_delete_events_of_one_agent_only(tables):
    tables.add_events([ev("a1", 1), ev("a1", 2), ev("a2", 1)])
    assert tables.delete_events("a1", ["e1", "e1", "e7"]) == 1
    assert tables.delete_events("a1", []) == 0
    assert [e.event_id for e in tables.events("a1")] == ["e2"]
    assert [e.event_id for e in tables.events("a2")] == ["e1"]


# --- long-term records ------------------------------------------------------------------------------------
def test_ltm_written_replaced_touched_and_deleted(tables):
    assert tables.add_ltm([rec("a1", 2, tags=["trade, barter", "", "市場"], source_events=["e1", "e2"],
                               type="semantic", summary="s"), rec("a1", 1), rec("a2", 1)]) == 3
    assert [r.memory_id for r in tables.ltm("a1")] == ["m1", "m2"]
    assert tables.ltm("a1", ["m2"])[0].tags == ["trade, barter", "", "市場"]
    assert tables.ltm("a1", ["m2"])[0].source_events == ["e1", "e2"]
    assert tables.add_ltm([rec("a1", 1, content="replaced", importance=0.9)]) == 1
    assert tables.ltm("a1", ["m1"])[0].content == "replaced" and tables.count_ltm("a1") == 2
    tables.touch_ltm("a1", ["m1", "m1", "m9"], at=50.0)
    tables.touch_ltm("a1", ["m1"], at=40.0)  # an older access counts but does not move last_accessed back
    m1 = tables.ltm("a1", ["m1"])[0]
    assert (m1.access_count, m1.last_accessed) == (2, 50.0)
    assert tables.ltm("a2")[0].access_count == 0  # same memory id, another agent
    assert tables.delete_ltm("a1", ["m1", "m9"]) == 1
    assert [r.memory_id for r in tables.ltm("a1")] == ["m2"] and tables.count_ltm("a2") == 1


def test_consolidated_swaps_events_for_records(tables):
    tables.add_events([ev("a1", n) for n in range(1, 5)] + [ev("a2", 1)])
    deleted = tables.consolidated("a1", [rec("a1", 1, source_events=["e1", "e2", "e3"])], ["e1", "e2", "e3"])
    assert deleted == 3
    assert [e.event_id for e in tables.events("a1")] == ["e4"] and tables.count_events("a2") == 1
    assert tables.ltm("a1")[0].source_events == ["e1", "e2", "e3"]
    with pytest.raises(InvalidInput, match="agent_id"):
        tables.consolidated("a1", [rec("a2", 2)], ["e4"])
    assert tables.count_events("a1") == 1 and tables.count_ltm("a2") == 0


# --- shared memories ----------------------------------------------------------------------------------------
def test_visibility_follows_scope_run_and_membership(tables):
    for agent, run in (("a1", "r1"), ("a2", "r1"), ("a3", "r1"), ("b1", "r2")):
        tables.register_agent(agent, run)
    tables.add_shared(shared("g1", "a1"))
    tables.add_shared(shared("grp", "a1", scope="group", group_id="smiths", created_at=2.0))
    tables.add_shared(shared("bi", "a1", scope="bilateral", visible_to=["a1", "a2"], created_at=3.0))
    tables.add_shared(shared("other", "b1", run="r2"))

    def seen(agent, **kw):
        return [m.memory_id for m in tables.visible_shared(agent, **kw)]

    assert seen("a1") == ["g1", "bi"] and seen("a2") == ["g1", "bi"] and seen("a3") == ["g1"]
    assert seen("b1") == ["other"]
    tables.join_group("r1", "smiths", "a3")
    assert seen("a3") == ["g1", "grp"] and tables.groups_of("a3") == ["smiths"]
    assert seen("a3", scope="group") == ["grp"] and seen("a3", ids=["grp", "bi", "other"]) == ["grp"]
    tables.join_group("r1", "smiths", "a3")  # idempotent
    tables.leave_group("r1", "smiths", "a3")
    assert seen("a3") == ["g1"] and tables.groups_of("a3") == []
    assert seen("a1", scope="group") == []  # the author is no member either
    with pytest.raises(InvalidInput, match="run_id"):
        tables.join_group("r1", "smiths", "b1")  # an agent of another run
    assert seen("b1") == ["other"]
    full = tables.visible_shared("a2", ids=["bi"])[0]
    assert (full.author, full.visible_to, full.scope) == ("a1", ["a1", "a2"], "bilateral")


@pytest.mark.parametrize("bad", [
    {"scope": "bilateral", "visible_to": ["a1"]},
    {"scope": "bilateral", "visible_to": ["a2", "a3"]},
    {"scope": "bilateral", "visible_to": ["a1", "a1"]},
    {"scope": "bilateral", "visible_to": ["a1", "a2", "a3"]},
    {"scope": "group"},
    {"scope": "global", "group_id": "smiths"},
    {"scope": "global", "visible_to": ["a1", "a2"]},
    {"content": "   "},
    {"content": LONE},
    {"tags": ["ok", LONE]},
    {"scope": "bilateral", "visible_to": ["a1", "b1"]},  # b1 is of run r2
])
def test_bad_shared_memories_are_refused(tables, bad):
    tables.register_agent("b1", "r2")
    with pytest.raises(InvalidInput):
        tables.add_shared(shared("s1", "a1", **bad))
    assert tables.visible_shared("a1") == [] and tables.run_of("a1") is None


def test_a_shared_memory_is_replaced_by_its_author_only(tables):
    tables.register_agent("a2", "r1")
    tables.add_shared(shared("s1", "a1"))
    tables.add_shared(shared("s1", "a1", content="corrected"))
    assert [m.content for m in tables.visible_shared("a1")] == ["corrected"]
    with pytest.raises(InvalidInput, match="memory_id"):
        tables.add_shared(shared("s1", "a2", content="hijacked"))
    assert [m.content for m in tables.visible_shared("a2")] == ["corrected"]


def test_hops_trace_a_telling(tables):
    tables.add_shared(shared("s1", "a1"))
    tables.add_hop(TellHop(memory_id="s1", from_agent="a2", to_agent="a3", time=20.0))
    tables.add_hop(TellHop(memory_id="s1", from_agent="a1", to_agent="a2", time=10.0, event_id="e5"))
    tables.add_hop(TellHop(memory_id="s1", from_agent="a1", to_agent="a2", time=10.0, event_id="e5"))  # retried
    assert [(h.from_agent, h.to_agent, h.event_id) for h in tables.hops("s1")] == [("a1", "a2", "e5"),
                                                                                   ("a2", "a3", None)]
    assert tables.hops("s10") == []


# --- isolation and bad input ------------------------------------------------------------------------------
def test_look_alike_agents_never_see_each_other(tables):
    agents = ["agent_1", "agent_10", "Agent_1", "agent_1.", "agent-1"]
    for n, agent in enumerate(agents):
        tables.add_events([ev(agent, n)])
        tables.add_ltm([rec(agent, n)])
        tables.merge_wm(agent, {"who": agent})
        tables.add_shared(shared(f"s{n}", agent, run=f"run_{agent}", scope="group", group_id="g"))
        tables.join_group(f"run_{agent}", "g", agent)
    for n, agent in enumerate(agents):
        assert [e.event_id for e in tables.events(agent)] == [f"e{n}"]
        assert [r.memory_id for r in tables.ltm(agent)] == [f"m{n}"]
        assert tables.get_wm(agent) == {"who": agent}
        assert [m.memory_id for m in tables.visible_shared(agent)] == [f"s{n}"]
        assert tables.count_agent(agent) == 6  # registration, WM, event, record, shared memory, membership


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_ids_are_refused_everywhere(tables, sql_db, hostile):
    tables.add_events([ev("a1", 1)])
    before = rows_in_tables(sql_db)
    calls = [
        lambda: tables.register_agent(hostile, "r1"), lambda: tables.register_agent("a1", hostile),
        lambda: tables.run_of(hostile), lambda: tables.agents(hostile), lambda: tables.get_wm(hostile),
        lambda: tables.merge_wm(hostile, {"k": 1}), lambda: tables.events(hostile),
        lambda: tables.events("a1", ids=[hostile]), lambda: tables.count_events(hostile),
        lambda: tables.delete_events("a1", [hostile]), lambda: tables.ltm(hostile),
        lambda: tables.count_ltm(hostile), lambda: tables.touch_ltm("a1", [hostile], 1.0),
        lambda: tables.delete_ltm(hostile, ["m1"]), lambda: tables.consolidated("a1", [], [hostile]),
        lambda: tables.join_group("r1", hostile, "a1"), lambda: tables.leave_group(hostile, "g", "a1"),
        lambda: tables.groups_of(hostile), lambda: tables.visible_shared(hostile),
        lambda: tables.visible_shared("a1", ids=[hostile]), lambda: tables.hops(hostile),
        lambda: tables.count_agent(hostile), lambda: tables.erase_agent(hostile),
        lambda: tables.add_events([AgentEvent.model_construct(**{**ev("a1", 2).model_dump(), "agent_id": hostile})]),
        lambda: tables.add_events([ev("a1", 3, participants=["a2"]).model_copy(update={"participants": [hostile]})]),
        lambda: tables.add_ltm([rec("a1", 1).model_copy(update={"source_events": [hostile]})]),
        lambda: tables.add_shared(shared("s1", "a1").model_copy(update={"run_id": hostile})),
        lambda: tables.add_hop(TellHop(memory_id="s1", from_agent="a1", to_agent=hostile, time=1.0)),
    ]
    for call in calls:
        with pytest.raises(InvalidInput):
            call()
    assert rows_in_tables(sql_db) == before


@pytest.mark.parametrize("field,value", [("content", ""), ("content", " \n\t"), ("content", LONE),
                                         ("metadata", {"note": LONE}), ("location", {LONE: 1}),
                                         ("time", float("nan")), ("time", float("inf"))])
def test_bad_events_are_refused_and_nothing_is_written(tables, field, value):
    good = ev("a1", 1)
    bad = AgentEvent.model_construct(**{**ev("a1", 2).model_dump(), field: value})
    with pytest.raises(InvalidInput, match=field):
        tables.add_events([good, bad])
    assert tables.count_events("a1") == 0


@pytest.mark.parametrize("update", [{"content": ""}, {"summary": LONE}, {"tags": [LONE]},
                                    {"created_at": float("nan")}])
def test_bad_records_are_refused_and_nothing_is_written(tables, update):
    with pytest.raises(InvalidInput):
        tables.add_ltm([rec("a1", 1), rec("a1", 2).model_copy(update=update)])
    assert tables.count_ltm("a1") == 0


def test_huge_content_is_kept_whole(tables):
    huge = ("日本語 and ascii " * 70_000)[:1_000_000]
    tables.add_events([ev("a1", 1, content=huge)])
    tables.add_ltm([rec("a1", 1, content=huge, summary=huge)])
    tables.add_shared(shared("s1", "a1", content=huge))
    tables.merge_wm("a1", {"notes": huge})
    assert tables.events("a1")[0].content == huge and tables.ltm("a1")[0].summary == huge
    assert tables.visible_shared("a1")[0].content == huge and tables.get_wm("a1")["notes"] == huge


# --- the registry: count and erase one agent ----------------------------------------------------------------
def _fill(tables, agent: str, other: str) -> None:
    tables.register_agent(agent, "r1")
    tables.merge_wm(agent, {"goal": "g"})
    tables.add_events([ev(agent, 1), ev(agent, 2, participants=[other])])
    tables.add_ltm([rec(agent, 1), rec(agent, 2)])
    tables.add_shared(shared(f"s-{agent}", agent))
    tables.add_shared(shared(f"b-{agent}", agent, scope="bilateral", visible_to=[agent, other]))
    tables.join_group("r1", "smiths", agent)
    tables.add_hop(TellHop(memory_id=f"s-{agent}", from_agent=agent, to_agent=other, time=5.0))


def test_erase_agent_leaves_nothing_of_it_and_everything_of_others(tables, sql_db):
    _fill(tables, "a1", "a2")
    _fill(tables, "a2", "a1")
    tables.add_hop(TellHop(memory_id="s-a2", from_agent="a2", to_agent="a3", time=6.0))
    held = tables.count_agent("a1")
    # a1's registration, WM, 2 events, 2 records, 2 memories, membership; hops: its own, and a2's to it
    assert held == 1 + 1 + 2 + 2 + 2 + 1 + 2
    before_a2 = (tables.events("a2"), tables.ltm("a2"), tables.get_wm("a2"), tables.count_agent("a2"))
    assert tables.erase_agent("a1") == held
    assert tables.count_agent("a1") == 0 and tables.erase_agent("a1") == 0
    assert tables.run_of("a1") is None and tables.get_wm("a1") is None and tables.groups_of("a1") == []
    assert [m.memory_id for m in tables.visible_shared("a2")] == ["b-a2", "s-a2"]
    # what names a1 in a2's rows loses the name
    events = tables.events("a2")
    assert [e.participants for e in events] == [[], []]
    assert tables.visible_shared("a2", ids=["b-a2"])[0].visible_to == ["a2"]
    assert [(h.from_agent, h.to_agent) for h in tables.hops("s-a2")] == [("a2", "a3")]
    assert tables.ltm("a2") == before_a2[1] and tables.get_wm("a2") == before_a2[2]
    assert [e.event_id for e in events] == [e.event_id for e in before_a2[0]]
    assert tables.count_agent("a2") == before_a2[3] - 2  # its telling to a1 and a1's telling to it went
    with sql_db.read() as con:
        for table in TABLES:
            for column in ("agent_id", "author", "from_agent", "to_agent"):
                try:
                    n = con.execute(f"SELECT count(*) FROM {table} WHERE {column} = 'a1'").fetchone()[0]
                except Exception:  # the table has no such column
                    continue
                assert n == 0, (table, column)
