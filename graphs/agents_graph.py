"""The ``agents`` graph (langgraph.json): one agent's turn of a simulation against its memory (PIANO, issue 48).

    graph.invoke({"agent_id": "agent_042", "events": [{"type": "observation", "content": "..."}],
                  "wm_patch": {"current_action": None}, "query": "who can help me?", "module": "social"})
    → {"stored": [event ids], "wm": {...}, "retrieved": [...], "shared": [...], "prompt": "...", ...}

Events in (stored, their importance by rule), then the working memory's patch (the WM->STM rule applies), then,
with a query, the retrieval (the module's weights and layers), the shared memories the agent may see, and the
prompt assembled from them. ``now`` (epoch seconds of the run's clock) is the time of events that give none and
of the retrieval's recency; without it, the wall clock. Inputs live for one run (EphemeralValue, taken by the
first step); every output but ``stored`` is written by every run; ``stored`` accumulates on a thread (the ids
this thread stored). Services open on the first
run (``default_services``), and the AgentMemory is one per Services (its consolidation pool with it).
"""

from __future__ import annotations

import contextvars
import operator
import time
from typing import Annotated, Any, Callable

from langgraph.channels import EphemeralValue
from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired, TypedDict

from lumina_memory.nodes.agents.memory import AgentMemory
from lumina_memory.nodes.services import Services, default_services
from lumina_memory.stores.agent_records import Retrieved, agent_id as check_agent
from lumina_memory.stores.errors import InvalidInput

_now: contextvars.ContextVar[float | None] = contextvars.ContextVar("agents_graph_now", default=None)


def run_clock() -> float:
    """The run's ``now`` while a node of this graph runs, else the wall clock."""
    now = _now.get()
    return time.time() if now is None else now


class AgentsInput(TypedDict):
    agent_id: Annotated[str, EphemeralValue(str)]
    run_id: NotRequired[Annotated[str, EphemeralValue(str)]]
    """The run the agent belongs to (a new agent: this one, else 'default'; an agent never changes run)."""
    events: NotRequired[Annotated[list[dict[str, Any]], EphemeralValue(list)]]
    """Events to store: type, content, and optionally participants, location, importance, metadata, time."""
    wm_patch: NotRequired[Annotated[dict[str, Any], EphemeralValue(dict)]]
    query: NotRequired[Annotated[str, EphemeralValue(str)]]
    module: NotRequired[Annotated[str, EphemeralValue(str)]]
    top_k: NotRequired[Annotated[int, EphemeralValue(int)]]
    now: NotRequired[Annotated[float, EphemeralValue(float)]]


class AgentsOutput(TypedDict, total=False):
    stored: Annotated[list[str], operator.add]
    """Ids of the events this thread stored, run after run."""
    wm: dict[str, Any]
    retrieved: list[dict[str, Any]]
    shared: list[dict[str, Any]]
    prompt: str
    prompt_tokens: dict[str, int]


class AgentsState(AgentsInput, AgentsOutput):
    turn: dict[str, Any]
    """This run's input, taken by the first step (the input channels live for that step only); every later step
    reads it here, and every output is written by every run, so a thread never answers from an earlier run."""


def agent_memory(services: Services) -> AgentMemory:
    """The AgentMemory of ``services`` (built once, kept in ``services.built``), on the graph's run clock."""
    memory = services.built.get("agents.memory")
    if memory is None:
        memory = services.built.setdefault("agents.memory", AgentMemory(services, clock=run_clock))
    return memory  # type: ignore[return-value]


def build_agents_graph(services: Services | Callable[[], Services] | None = None, checkpointer=None):
    """Compile the graph. ``services``: an opened Services, a provider, or None for the process-wide default."""
    provider = default_services if services is None else (lambda: services) if isinstance(services, Services) else services

    def bound(step: Callable[[AgentMemory, dict, AgentsState], dict]) -> Callable[[AgentsState], dict]:
        def node(state: AgentsState) -> dict:
            turn = state["turn"]
            token = _now.set(turn.get("now"))
            try:
                return step(agent_memory(provider()), turn, state)
            finally:
                _now.reset(token)

        node.__name__ = step.__name__
        return node

    builder = StateGraph(AgentsState, input_schema=AgentsInput, output_schema=AgentsOutput)
    builder.add_node("take", take)
    for step in (store_events, update_wm, retrieve, assemble):
        builder.add_node(step.__name__, bound(step))
    builder.add_edge(START, "take")
    builder.add_edge("take", "store_events")
    builder.add_edge("store_events", "update_wm")
    builder.add_edge("update_wm", "retrieve")
    builder.add_edge("retrieve", "assemble")
    builder.add_edge("assemble", END)
    return builder.compile(checkpointer=checkpointer, name="lumina-agents")


def take(state: AgentsState) -> dict:
    """This run's input, checked: the agent's id and the run's clock."""
    turn = {k: state[k] for k in AgentsInput.__annotations__ if k in state}
    turn["agent_id"] = check_agent(state.get("agent_id"))
    now = turn.get("now")
    if now is not None and (isinstance(now, bool) or not isinstance(now, (int, float)) or now != now):
        raise InvalidInput("now", f"must be epoch seconds, got {now!r}")
    return {"turn": turn}


def store_events(memory: AgentMemory, turn: dict, state: AgentsState) -> dict:
    agent = turn["agent_id"]
    events = turn.get("events") or []
    if not isinstance(events, list):
        raise InvalidInput("events", "must be a list of events")
    ids = memory.store_many([(agent, e) for e in events], run_id=turn.get("run_id")) if events else []
    return {"stored": ids}


def update_wm(memory: AgentMemory, turn: dict, state: AgentsState) -> dict:
    agent = turn["agent_id"]
    patch = turn.get("wm_patch")
    return {"wm": memory.update_wm(agent, patch) if patch else memory.get_wm(agent)}


def retrieve(memory: AgentMemory, turn: dict, state: AgentsState) -> dict:
    agent = turn["agent_id"]
    query = turn.get("query")
    if not query:
        return {"retrieved": [], "shared": []}
    module = turn.get("module") or "default"
    found = memory.retrieve(agent, query, module, top_k=turn.get("top_k"))
    shared = memory.retrieve_shared(agent, query, module=module)
    return {"retrieved": [r.model_dump() for r in found], "shared": [r.model_dump() for r in shared]}


def assemble(memory: AgentMemory, turn: dict, state: AgentsState) -> dict:
    agent = turn["agent_id"]
    query = turn.get("query")
    if not query:
        return {"prompt": "", "prompt_tokens": {}}
    found = [Retrieved.model_validate(r) for r in [*state.get("retrieved", []), *state.get("shared", [])]]
    out = memory.assemble_prompt(agent, query, turn.get("module") or "default", memories=found)
    return {"prompt": out.text, "prompt_tokens": dict(out.tokens_by_section)}


graph = build_agents_graph()  # langgraph.json: services open on the first run, not at import
