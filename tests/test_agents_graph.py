"""The ``agents`` graph of langgraph.json, invoked on a real embedded memory: events in; WM, retrieval, shared
memories and the prompt out; bad input refused with a named error and nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lumina_memory.graphs.agents_graph import agent_memory, build_agents_graph
from lumina_memory.stores.errors import InvalidInput

from .agents_fixture import T0, Opened

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def world(tmp_path):
    o = Opened(tmp_path / "data", "duckdb")
    try:
        yield o, build_agents_graph(o.services)
    finally:
        agent_memory(o.services).close()
        o.close()


def test_langgraph_json_serves_the_agents_graph():
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["graphs"]["agents"] == "lumina_memory.graphs.agents_graph:graph"


def test_events_in_then_wm_retrieval_and_prompt_out(world):
    o, _ = world
    graph = build_agents_graph(o.services, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "agent_7-run"}}
    first = graph.invoke({"agent_id": "agent_7", "now": T0, "events": [
        {"type": "conversation", "content": "Lila asked me to bring water to the orchard", "participants": ["agent_8"]},
        {"type": "observation", "content": "The orchard's trees are dry and yellow"}],
        "wm_patch": {"current_action": {"type": "walking", "target": "orchard"}, "active_goals": ["water the orchard"]}},
        thread)
    assert len(first["stored"]) == 2 and first["wm"]["active_goals"] == ["water the orchard"]
    assert first["retrieved"] == [] and first["prompt"] == ""
    second = graph.invoke({"agent_id": "agent_7", "now": T0 + 600, "wm_patch": {"current_action": None},
                           "query": "what did Lila ask me?", "module": "social"}, thread)
    assert "current_action" not in second["wm"]
    assert len(second["stored"]) == 2  # the thread's stored ids; this run stored none itself
    assert second["retrieved"][0]["content"].startswith("Lila asked me") and second["retrieved"][0]["layer"] == "stm"
    assert "water the orchard" in second["prompt"] and "Lila asked me" in second["prompt"]
    assert second["prompt_tokens"]["memories"] > 0
    tables = o.memory.agents.tables
    kinds = sorted(e.type for e in tables.events("agent_7"))
    assert kinds == ["action", "conversation", "observation"]  # the finished walk entered STM
    assert [e.time for e in tables.events("agent_7")] == [T0, T0, T0 + 600]


def test_the_graph_shows_one_agent_its_own_and_its_shared_memories_only(world):
    o, graph = world
    o.memory.store("agent_1", {"type": "observation", "content": "The key is under the red stone"})
    o.memory.store_shared("Market day is every fifth day", author="agent_2")
    out = graph.invoke({"agent_id": "agent_3", "query": "where is the key? when is market day?"})
    assert all("red stone" not in r["content"] for r in out["retrieved"])
    assert [r["content"] for r in out["shared"]] == ["Market day is every fifth day"]
    assert "red stone" not in out["prompt"] and "Market day" in out["prompt"]


@pytest.mark.parametrize("bad", [{"agent_id": "../etc"}, {"agent_id": "a' OR '1'='1"},
                                 {"agent_id": "agent_1", "events": [{"type": "observation", "content": ""}]},
                                 {"agent_id": "agent_1", "events": [{"type": "observation", "content": "ok"}],
                                  "now": float("nan")},
                                 {"agent_id": "agent_1", "wm_patch": {"k": "\ud800"}}])
def test_bad_input_is_named_and_stores_nothing(world, bad):
    o, graph = world
    with pytest.raises(InvalidInput):
        graph.invoke(bad)
    assert o.memory.agents.tables.agents() == []
