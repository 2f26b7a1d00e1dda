"""A thread belongs to the user of its first run: another user's run on it is refused before it writes
anything (issue 16: bob ran on alice's thread, recalled her private turn, and a flush archived her turns
under bob)."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.errors import InvalidInput

SHARED = {"configurable": {"thread_id": "shared-thread"}}
PRIVATE = "アリスの秘密：合言葉は「青いペンギン」"


def _alice_talks(mem) -> None:
    ctx = {"user_id": "alice", "respond": False}
    mem.graph.invoke({"turn": {"speaker": "user", "text": PRIVATE, "ts": 1_790_000_000}}, SHARED, context=ctx)
    mem.graph.invoke({"turn": {"speaker": "lumina", "text": "誰にも言わないね。", "ts": 1_790_000_010}}, SHARED, context=ctx)


def _history(mem) -> list:
    return [(c.config["configurable"]["checkpoint_id"], c.values) for c in mem.graph.get_state_history(SHARED)]


@pytest.mark.parametrize(
    "bob_input",
    [
        {"turn": {"speaker": "user", "text": "ペンギンの合言葉って何だっけ？", "ts": 1_790_000_020}},
        {"messages": [HumanMessage("ペンギンの合言葉って何だっけ？")]},
        {"transcript": [{"speaker": "user", "text": "ボブの話", "ts": 1_790_000_030}]},
        {"flush": True},
    ],
    ids=["turn", "message", "transcript", "flush"],
)
def test_another_users_run_on_a_thread_is_refused_and_leaves_nothing(memory, bob_input):
    _alice_talks(memory)
    before = _history(memory)
    assert memory.graph.get_state(SHARED).values["owner"] == "alice"

    with pytest.raises(InvalidInput) as err:
        memory.graph.invoke(bob_input, SHARED, context={"user_id": "bob", "respond": True})
    assert err.value.field == "thread_id"
    assert "not found" in str(err.value) and "alice" not in str(err.value)  # nothing about the owner leaks

    # no new checkpoint, bob's input nowhere in the thread, alice's open segment untouched
    assert _history(memory) == before
    # nothing archived for bob, and bob's memory does not know alice's secret
    assert memory.services.stores.archive.counts("bob")["turns"] == 0
    assert all("ペンギン" not in item["text"] for item in recall(memory.services, "bob", "合言葉"))

    # alice goes on as before, and her flush archives her turns under her id only
    memory.graph.invoke({"flush": True}, SHARED, context={"user_id": "alice", "respond": False})
    assert memory.services.stores.archive.counts("alice")["turns"] == 2
    assert memory.services.stores.archive.counts("bob")["turns"] == 0


def test_async_runs_are_refused_too(memory):
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    from lumina_memory.graphs.memory_graph import build_graph

    graph = build_graph(memory.services, checkpointer=InMemorySaver())  # SqliteSaver has no async methods
    memory.graph = graph
    _alice_talks(memory)
    before = _history(memory)

    async def bob():
        async for _ in graph.astream({"messages": [HumanMessage("やあ")]}, SHARED, context={"user_id": "bob"}):
            pass

    with pytest.raises(InvalidInput) as err:
        asyncio.run(bob())
    assert err.value.field == "thread_id"
    assert _history(memory) == before


def test_a_thread_records_its_owner_on_the_first_run_and_the_owner_keeps_using_it(memory):
    config = {"configurable": {"thread_id": "carol-thread"}}
    memory.graph.invoke({"flush": True}, config, context={"user_id": "carol", "respond": False})
    assert memory.graph.get_state(config).values["owner"] == "carol"
    out = memory.graph.invoke({"messages": [HumanMessage("こんにちは、覚えてる？")]}, config, context={"user_id": "carol"})
    assert out["reply"]
    with pytest.raises(InvalidInput):
        memory.graph.invoke({"flush": True}, config, context={"user_id": "carol2", "respond": False})
