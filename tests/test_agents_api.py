"""Agents' memory API (P7) on real engines, embedded and server mode: store, retrieve, the working memory, the
prompt, consolidation and forgetting through the API, isolation between agents and runs, hostile input."""

from __future__ import annotations

import asyncio
import json

import pytest

from lumina_memory.nodes.agents.memory import AsyncAgentMemory
from lumina_memory.stores.agent_records import AgentEvent
from lumina_memory.stores.errors import InvalidInput
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

from .agents_fixture import opened  # noqa: F401 - fixture

HOSTILE = ["../agent_1", "'; DROP TABLE agent_events; --", "a' OR '1'='1", "MATCH (n) DETACH DELETE n", "", "a/b",
           "agent 1", "x" * 200, "agent_１"]


def _ids(results):
    return [r.id for r in results]


def test_store_then_retrieve_ranks_the_relevant_event_first_and_a_retry_adds_nothing(opened):
    m = opened.memory
    farm = m.store("agent_1", {"type": "conversation", "content": "Lila asked me to help harvest wheat at the farm",
                               "participants": ["agent_2"]})
    m.store("agent_1", {"type": "observation", "content": "A wolf pack was seen near the river at dusk"})
    m.store("agent_1", {"event_id": farm, "type": "conversation", "content": "Lila asked me to help harvest wheat"})
    assert m.agents.tables.count_events("agent_1") == 2
    found = m.retrieve("agent_1", "who needs help with the wheat harvest?")
    assert found[0].id == farm and found[0].layer == "stm" and found[0].type == "conversation"
    assert found[0].importance == pytest.approx(0.5)  # the rule's base for a conversation (P3)
    assert m.retrieve("agent_1", "wolves by the river")[0].content.startswith("A wolf pack")


def test_a_module_s_weights_change_the_ranking(opened):
    m, clock = opened.memory, opened.clock
    old = m.store("agent_1", {"type": "observation", "content": "The blacksmith forges iron swords in the village",
                              "importance": 0.5})
    clock.advance(5)
    new = m.store("agent_1", {"type": "observation", "content": "It started to rain on the meadow", "importance": 0.5})
    query = "who forges iron swords?"
    by_goals = m.retrieve("agent_1", query, module="goals", layers=["stm"])  # relevance first (0.6, 0.1, 0.3)
    by_talk = m.retrieve("agent_1", query, module="talking", layers=["stm"])  # recency first (0.3, 0.5, 0.2)
    assert _ids(by_goals) == [old, new]
    assert _ids(by_talk) == [new, old]
    assert _ids(m.retrieve("agent_1", query, layers=["stm"], weights=(0.0, 1.0, 0.0))) == [new, old]


def test_agents_and_look_alike_ids_never_see_each_other(opened):
    m = opened.memory
    m.store("agent_1", {"type": "observation", "content": "The secret cave is behind the waterfall"})
    for other in ("agent_10", "Agent_1", "agent_1.", "agent_1-"):
        m.store(other, {"type": "observation", "content": f"{other} saw a squirrel"})
        assert all("waterfall" not in r.content for r in m.retrieve(other, "secret cave waterfall", layers=["stm", "ltm"]))
    assert all("squirrel" not in r.content for r in m.retrieve("agent_1", "squirrel"))
    m.consolidate("agent_1", force=True)
    assert all("waterfall" not in r.content for r in m.retrieve("agent_10", "secret cave waterfall", layers=["ltm"]))


def test_runs_keep_their_agents(opened):
    m = opened.memory
    m.store("agent_1", {"type": "action", "content": "built a boat"}, run_id="run_a")
    with pytest.raises(InvalidInput, match="run"):
        m.store("agent_1", {"type": "action", "content": "built a raft"}, run_id="run_b")
    assert m.agents.tables.count_events("agent_1") == 1
    m.store("agent_2", {"type": "action", "content": "fished"}, run_id="run_b")
    assert m.agents.tables.agents("run_a") == ["agent_1"] and m.agents.tables.agents("run_b") == ["agent_2"]


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_agent_ids_are_refused_before_anything_is_written(opened, bad):
    m = opened.memory
    with pytest.raises(InvalidInput):
        m.store(bad, {"type": "observation", "content": "hello"})
    with pytest.raises(InvalidInput):
        m.retrieve(bad, "hello")
    with pytest.raises(InvalidInput):
        m.update_wm(bad, {"health": 1})
    with pytest.raises(InvalidInput):
        m.store("agent_1", {"type": "conversation", "content": "hi", "participants": [bad]})
    assert m.agents.tables.agents() == []


def test_bad_events_are_named_and_a_batch_with_one_is_not_written(opened):
    m = opened.memory
    cases = [({"type": "observation", "content": ""}, "content"),
             ({"type": "observation", "content": "broken \ud800 text"}, "content"),
             ({"type": "dream", "content": "flying"}, "type"),
             ({"type": "observation", "content": "x", "importance": 2}, "importance"),
             ({"type": "observation", "content": "x", "metadata": {"k": "\udfff"}}, "metadata"),
             ({"type": "observation", "content": "x", "agent_id": "agent_2"}, "agent_id")]
    for event, field in cases:
        with pytest.raises(InvalidInput) as err:
            m.store("agent_1", event)
        assert err.value.field.startswith(field)
    with pytest.raises(InvalidInput):
        m.store_many([("agent_1", {"type": "observation", "content": "fine"}),
                      ("agent_2", {"type": "observation", "content": ""})])
    with pytest.raises(InvalidInput, match="query"):
        m.retrieve("agent_1", "")
    assert m.agents.tables.count_events("agent_1") == 0 and m.agents.tables.count_events("agent_2") == 0


def test_a_huge_event_is_kept_whole(opened):
    m = opened.memory
    text = "村の記録。" + "the river flooded the lower fields again; " * 6000
    eid = m.store("agent_1", {"type": "observation", "content": text})
    (event,) = m.agents.tables.events("agent_1", ids=[eid])
    assert event.content == text
    assert m.retrieve("agent_1", "flooded fields")[0].id == eid


def test_store_many_writes_a_batch_of_several_agents(opened):
    m = opened.memory
    ids = m.store_many([{"agent_id": f"agent_{i}", "type": "observation", "content": f"saw {i} birds"} for i in range(5)]
                       + [("agent_0", {"type": "action", "content": "counted the birds again"})])
    assert len(ids) == 6 and len(set(ids)) == 6
    assert [m.agents.tables.count_events(f"agent_{i}") for i in range(5)] == [2, 1, 1, 1, 1]
    assert m.retrieve("agent_3", "birds")[0].id == ids[3]


def test_working_memory_is_merged_and_a_finished_action_enters_stm(opened):
    m = opened.memory
    assert m.get_wm("agent_1") == {}
    m.update_wm("agent_1", {"location": {"x": 1, "biome": "forest"}, "health": 18,
                            "current_action": {"type": "mining", "target": "iron_ore", "failure": True}})
    doc = m.update_wm("agent_1", {"health": 17, "hunger": 15})
    assert doc["location"] == {"x": 1, "biome": "forest"} and doc["health"] == 17 and doc["hunger"] == 15
    assert m.agents.tables.count_events("agent_1") == 0
    m.update_wm("agent_1", {"current_action": {"type": "farming"}})  # the mining action is finished
    (event,) = m.agents.tables.events("agent_1")
    assert event.type == "action" and "iron_ore" in event.content
    assert event.importance == pytest.approx(0.5)  # action 0.3 + failure 0.2 (the cue the action carried)
    m.update_wm("agent_1", {"current_action": {"type": "farming"}})  # unchanged: nothing ended
    assert m.agents.tables.count_events("agent_1") == 1
    m.update_wm("agent_1", {"current_conversation": {"with": ["agent_2", "Lila the farmer"], "topic": "the harvest"}})
    assert "current_action" not in m.update_wm("agent_1", {"current_action": None, "current_conversation": None})
    kinds = sorted(e.type for e in m.agents.tables.events("agent_1"))
    assert kinds == ["action", "action", "conversation"]
    talk = [e for e in m.agents.tables.events("agent_1") if e.type == "conversation"][0]
    assert talk.participants == ["agent_2"]  # a display name is no agent id
    with pytest.raises(InvalidInput):
        m.update_wm("agent_1", {"note": "bad \ud800"})
    with pytest.raises(InvalidInput):
        m.update_wm("agent_1", ["not", "a", "dict"])


def test_the_wm_to_stm_threshold_is_the_setting(opened):
    m = opened.memory
    m.params = m.params.model_copy(update={"wm_to_stm_min_importance": 0.9})
    m.update_wm("agent_1", {"current_action": "gathering wood"})
    m.update_wm("agent_1", {"current_action": None})
    assert m.agents.tables.count_events("agent_1") == 0


def test_the_wm_layer_answers_from_the_working_memory(opened):
    m = opened.memory
    m.update_wm("agent_1", {"active_goals": ["smelt iron ingots"], "inventory_summary": "bread x3, coal x5"})
    found = m.retrieve("agent_1", "what is in my inventory?", layers=["wm"])
    assert found[0].id == "wm:inventory_summary" and found[0].layer == "wm"
    assert m.retrieve("agent_2", "what is in my inventory?", layers=["wm"]) == []


def test_consolidation_and_forgetting_through_the_api(opened):
    m, clock = opened.memory, opened.clock
    kept = m.store("agent_1", {"type": "conversation", "content": "Mara promised to trade salt for fish"})
    faded = m.store("agent_1", {"type": "observation", "content": "A grey cloud passed over the hill",
                                "importance": 0.1})
    assert m.consolidate("agent_1") == 0  # far below capacity: nothing is due
    assert m.consolidate("agent_1", force=True) == 2
    assert m.agents.tables.count_events("agent_1") == 0
    records = {r.source_events[0]: r for r in m.agents.tables.ltm("agent_1")}
    assert set(records) == {kept, faded}
    (hit,) = m.retrieve("agent_1", "what did Mara promise?", layers=["ltm"], top_k=1)
    assert hit.layer == "ltm" and hit.source_events == [kept]
    assert m.agents.tables.ltm("agent_1", ids=[hit.id])[0].access_count == 1  # touched by the retrieval
    clock.advance(10)
    report = m.maintenance("agent_1")
    assert report["deleted"] == 1 and report["ltm_count"] == 1
    (left,) = m.agents.tables.ltm("agent_1")
    assert left.source_events == [kept] and 0 < left.decay_factor <= 1
    assert m.retrieve("agent_1", "grey cloud over the hill", layers=["ltm"])[0].source_events == [kept]


def test_the_prompt_is_assembled_from_the_agent_s_own_memory(opened):
    m = opened.memory
    m.update_wm("agent_1", {"active_goals": ["find the lost goat"], "nearby_agents": [{"id": "agent_2", "name": "Lila"}],
                            "health": 12})
    m.store("agent_1", {"type": "observation", "content": "The goat's bell rang near the old mill"})
    m.store("agent_2", {"type": "observation", "content": "The goat is hidden in the barn of agent_2"})
    out = m.assemble_prompt("agent_1", "where is the goat?", "planning", system="You are agent_1, a shepherd.",
                            alerts=["storm coming"])
    for part in ("shepherd", "find the lost goat", "Lila", "old mill", "storm coming", "health"):
        assert part in out.text
    assert "barn" not in out.text
    wider = m.assemble_prompt("agent_1", "where is the goat?", "planning", adjust={"memories": 0.3},
                              sections={"memories": ["a " * 3000]})
    assert wider.tokens_by_section["memories"] > out.tokens_by_section["memories"]


def test_the_async_api_does_the_same(opened):
    memory = AsyncAgentMemory(opened.services, clock=opened.clock)

    async def run():
        eid = await memory.store("agent_1", {"type": "reflection", "content": "Trust is earned by repeated help"})
        found = await memory.retrieve("agent_1", "how is trust earned?", module="reflection", layers=["stm"])
        await memory.update_wm("agent_1", {"mood": "calm"})
        return eid, found, await memory.get_wm("agent_1")

    try:
        eid, found, wm = asyncio.run(run())
    finally:
        asyncio.run(memory.close())
    assert found[0].id == eid and found[0].importance == pytest.approx(0.6) and wm == {"mood": "calm"}


def test_pii_is_redacted_before_an_agent_s_text_is_stored_or_embedded(opened):
    m = opened.memory
    eid = m.store("agent_1", {"type": "conversation", "content": "Write to lila.farmer@example.com about the goats",
                              "metadata": {"note": "call 090-1234-5678"}})
    (event,) = m.agents.tables.events("agent_1", ids=[eid])
    assert "lila.farmer@example.com" not in event.content and "090-1234-5678" not in json.dumps(event.metadata)
    assert "goats" in event.content
    m.update_wm("agent_1", {"contact": "lila.farmer@example.com"})
    assert "example.com" not in json.dumps(m.get_wm("agent_1"))
    mid = m.store_shared("The well's key is with bob@example.org", author="agent_1")
    assert "bob@example.org" not in m.agents.tables.visible_shared("agent_1", ids=[mid])[0].content


def test_maintenance_embeds_again_rows_a_crash_left_without_vectors(opened):
    m = opened.memory
    # A store that died between its two writes: the row is in the tables, its vector is not.
    lost = AgentEvent(event_id="ev_lost", agent_id="agent_1", time=opened.clock(), type="observation",
                      content="The ferry leaves at dawn from the south pier", importance=0.2)
    m.agents.tables.register_agent("agent_1", "default")
    m.agents.tables.add_events([lost])
    assert m.retrieve("agent_1", "when does the ferry leave?", layers=["stm"]) == []
    assert m.maintenance("agent_1")["vectors_restored"] == 1
    assert m.retrieve("agent_1", "when does the ferry leave?", layers=["stm"])[0].id == "ev_lost"
    assert m.maintenance("agent_1")["vectors_restored"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_retrievals_accesses_are_counted_exactly_and_survive_a_close(engine, tmp_path, request):
    """Accesses are counted in memory and written with the next write or on close: none is lost or doubled."""
    from .agents_fixture import Opened

    uri = request.getfixturevalue("pg_uri") if engine == "postgres" else None
    first = Opened(tmp_path / "data", engine, uri)
    try:
        m = first.memory
        kept = m.store("agent_1", {"type": "conversation", "content": "Mara promised to trade salt for fish"})
        m.consolidate("agent_1", force=True)
        for _ in range(3):
            (hit,) = m.retrieve("agent_1", "what did Mara promise?", layers=["ltm"], top_k=1)
        m.store("agent_2", {"type": "observation", "content": "A hawk circled the mill"})  # writes the three
        for _ in range(2):
            m.retrieve("agent_1", "what did Mara promise?", layers=["ltm"], top_k=1)
        assert hit.source_events == [kept] and m.agents.tables.ltm("agent_1")[0].access_count == 5
        first.clock.advance(10)
        assert m.maintenance("agent_1")["deleted"] == 0  # maintenance sees them: the record was used
        m.retrieve("agent_1", "what did Mara promise?", layers=["ltm"], top_k=1)
    finally:
        first.close()
    second = Opened(tmp_path / "data", engine, uri)
    try:
        (record,) = second.memory.agents.tables.ltm("agent_1")
        assert record.access_count == 6 and record.last_accessed == first.clock.now
    finally:
        second.close()
