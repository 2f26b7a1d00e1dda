"""The ``erase`` graph (langgraph.json): erase a user on a LangGraph server, in two runs like the CLI.

    runs.wait(None, "erase", input={"user_id": "alice"})                  → counts per place + a token
    runs.wait(None, "erase", input={"user_id": "alice", "token": token})  → erased everywhere

Everywhere is graphs.erase.erase_user over the registry — the memory tiers, the server's LuminaStore (the
store langgraph.json gives the server, reached as ``runtime.store``) — plus the server's own threads
(stores.places.server_threads), which only a run inside the server can reach. The server's database is
not in the backups (see that module): restoring it from an older copy means erasing again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any, Callable

from langchain_core.runnables import RunnableConfig
from langgraph.channels import EphemeralValue
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import NotRequired, TypedDict

from lumina_memory.nodes.input_check import thread_owner
from lumina_memory.nodes.services import Services, default_services
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.places.server_threads import ServerThreadsPlace

from .erase import erase_plan, erase_user

log = logging.getLogger("lumina.erase")


# Every channel lives for one run (EphemeralValue): on a thread, a run's answer depends on its own input
# only. A plan's token left in the thread's state would otherwise make the next run without a token erase.
class EraseInput(TypedDict):
    user_id: Annotated[str, EphemeralValue(str)]
    """The user to erase."""
    token: NotRequired[Annotated[str, EphemeralValue(str)]]
    """The confirmation token of a first run without one (bound to the user, expires). With it, the run
    erases; without it, the run only counts and returns a token."""


class EraseOutput(TypedDict, total=False):
    user_id: Annotated[str, EphemeralValue(str)]
    counts: Annotated[dict[str, int], EphemeralValue(dict)]
    """The plan: records per place ("server.threads": the user's threads on this server)."""
    token: Annotated[str, EphemeralValue(str)]
    expires_at: Annotated[int, EphemeralValue(int)]
    removed: Annotated[dict[str, int], EphemeralValue(dict)]
    """After the erasure: records removed per place."""
    backups: Annotated[dict[str, dict[str, int]], EphemeralValue(dict)]
    """After the erasure: records removed per backup snapshot, by backup location."""


class EraseState(EraseInput, EraseOutput):
    pass


class EraseGraph(CompiledStateGraph):
    """The compiled erase graph, refusing to run on a conversation's thread before its input is saved there.

    A run saves its input into its thread first, and the thread's state becomes this graph's: on a memory
    thread the ``owner`` channel would drop out of the thread's values, and the thread would no longer be
    found as its user's (by this erasure or a later one). So: no thread, or a thread of its own."""

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any):
        thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
        if thread_id is not None and isinstance(self.checkpointer, BaseCheckpointSaver):
            saved = await self.checkpointer.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
            if saved is not None and thread_owner(saved.checkpoint.get("channel_values")):
                raise InvalidInput("thread", f"thread {thread_id} holds a conversation: run `erase` without a "
                                   "thread (a stateless run) or on a thread of its own")
        async for chunk in super().astream(input, config, **kwargs):
            yield chunk


async def _dev_checkpointer() -> InMemorySaver | None:
    """``langgraph dev``'s in-memory checkpointer, whose thread delete needs help (ServerThreadsPlace.aerase);
    None on LangGraph Platform (its Postgres deletes a thread's rows itself)."""
    from langgraph_api._checkpointer import get_checkpointer  # the saver the server gives its runs

    saver = await get_checkpointer()
    return saver if isinstance(saver, InMemorySaver) else None


async def _server_threads(config: RunnableConfig) -> ServerThreadsPlace:
    from langgraph_sdk import get_client

    return ServerThreadsPlace(
        get_client(),  # no url: the server this run is in, in-process
        asyncio.get_running_loop(),
        running_thread=((config.get("configurable") or {}).get("thread_id") or None),
        checkpointer=await _dev_checkpointer(),
    )


def build_erase_graph(services: Callable[[], Services] = default_services):
    async def erase(state: EraseState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        user_id = state.get("user_id")
        if user_id is None:
            raise InvalidInput("user_id", "is missing: run with input={'user_id': ...} to plan, then with the "
                               "plan's 'token' too to erase")
        validate_id(user_id, "user_id")
        # Every call below blocks (DuckDB, Redis, files): it runs in a worker thread, and the server
        # place waits there for this loop to answer its API calls.
        opened = await asyncio.to_thread(services)
        place = await _server_threads(config)
        try:
            if not state.get("token"):
                return await asyncio.to_thread(erase_plan, opened, user_id, store=runtime.store,
                                               extra_places=[place])
            report = await asyncio.to_thread(erase_user, opened, user_id, state["token"],
                                             actor="langgraph-server", store=runtime.store, extra_places=[place])
        finally:
            await place.client.aclose()
        log.info("erased a user through the server: %d threads", report["removed"].get(place.name, 0))
        return {"user_id": user_id, **report}

    builder = StateGraph(EraseState, input_schema=EraseInput, output_schema=EraseOutput)
    builder.add_node("erase", erase)
    builder.add_edge(START, "erase")
    builder.add_edge("erase", END)
    compiled = builder.compile()
    return EraseGraph(**{k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"})


graph = build_erase_graph()  # langgraph.json: services open on the first run, not at import
