"""Priming inside a LangGraph agent someone else wrote: create_react_agent with primed_prompt sees the run's
user's primed memory (and only theirs) before its first model call."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from lumina_memory.graphs.context import RunContext
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.priming.agent_prompt import MEMORY_HEADING, primed_prompt
from lumina_memory.nodes.tools.memory_tools import create_memory_tools
from lumina_memory.nodes.tools.pointers import parse_pointer

from .test_memory_tools import AGENT_WARNING, ScriptedToolModel

T0 = 1_790_000_000


def _rows(user: str, texts: list[str]) -> list[dict]:
    return [{"speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": T0 + 60 * i, "source_id": f"{user}:{i}"}
            for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def agent_memory(tmp_path_factory):
    from .conftest import Memory

    memory = Memory(tmp_path_factory.mktemp("priming-agent"))
    replay(memory.graph, "nana", _rows("nana", ["うちの犬の名前はポチだよ", "かわいい名前！", "ポチは毎朝公園を散歩するの", "いいね"]))
    replay(memory.graph, "omar", _rows("omar", ["My cat is called Whiskers", "Lovely!", "Whiskers sleeps all day", "Ha"]))
    yield memory
    memory.close()


def _answer_with_what_was_primed(messages):
    system = next(m for m in messages if isinstance(m, SystemMessage))
    return AIMessage(content=system.content)


@pytest.mark.filterwarnings(AGENT_WARNING)
def test_a_react_agent_starts_from_the_run_users_primed_memory(agent_memory):
    from langgraph.prebuilt import create_react_agent

    services = agent_memory.services
    model = ScriptedToolModel(script=_answer_with_what_was_primed)
    agent = create_react_agent(model, create_memory_tools(services), context_schema=RunContext,
                               prompt=primed_prompt(services, instructions="You are Lumina."))
    out = agent.invoke({"messages": [HumanMessage("犬の名前、覚えてる？")]}, context={"user_id": "nana"})
    system = model.rounds[0][0]
    assert isinstance(system, SystemMessage) and system.content.startswith("You are Lumina.")
    assert MEMORY_HEADING in system.content and "ポチ" in system.content
    assert "Whiskers" not in system.content  # another user's memory never reaches this run
    pointers = [w.strip("()") for w in system.content.split() if w.startswith("(") and ":" in w]
    assert pointers and all(parse_pointer(p) for p in pointers)
    assert "ポチ" in out["messages"][-1].content and not [m for m in out["messages"] if isinstance(m, ToolMessage)]

    model.rounds.clear()
    agent.invoke({"messages": [HumanMessage("What is my cat called?")]}, context={"user_id": "omar"})
    system = model.rounds[0][0]
    assert "Whiskers" in system.content and "ポチ" not in system.content


@pytest.mark.filterwarnings(AGENT_WARNING)
def test_without_a_user_the_agent_is_refused_not_primed_with_anyones_memory(agent_memory):
    from langchain_core.tools import ToolException
    from langgraph.prebuilt import create_react_agent

    model = ScriptedToolModel(script=_answer_with_what_was_primed)
    agent = create_react_agent(model, [], prompt=primed_prompt(agent_memory.services))
    with pytest.raises(ToolException, match="no user"):
        agent.invoke({"messages": [HumanMessage("hi")]})
    assert model.rounds == []
