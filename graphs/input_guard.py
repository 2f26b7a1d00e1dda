"""The compiled memory graph, refusing bad input and other users' threads before a run writes anything.

Why here and not only in ``ingest_turn``: LangGraph saves a run's input into the thread's checkpoint
(``source: "input"``) before the first node runs, whatever the durability mode the caller (the CLI, a
notebook, ``langgraph dev``/Studio, a LangGraph server) picks. A turn refused inside the graph would
stay in the checkpoint database — any caller could grow it with input we refuse, and another user's
text would sit in the thread of the user it was aimed at. Every way of running a Pregel graph
(``invoke``, ``ainvoke``, ``batch``, ``astream_events``, the server's runs) goes through ``stream`` or
``astream``, so checking there, before ``super()`` starts the loop, leaves no trace of a refused run.
That includes a turn reusing a stored source id with other text (``ingest_turn.check_reuse``: it reads the
archive and the thread's open segment).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph

from lumina_memory.nodes.ingest_turn import check_reuse, check_run_input
from lumina_memory.nodes.input_check import check_owner, thread_owner
from lumina_memory.nodes.validate import redact_run_input, redaction_kinds
from lumina_memory.stores.erasure import refuse_while_erasing
from lumina_memory.stores.shared_state import open_shared_state

from .context import RunContext


def _user_id(config: dict | None, context: Any) -> object:
    if isinstance(context, RunContext):
        return context.user_id
    if isinstance(context, dict) and "user_id" in context:
        return context["user_id"]
    return ((config or {}).get("configurable") or {}).get("user_id")


class GuardedGraph(CompiledStateGraph):
    """``CompiledStateGraph`` whose runs check their input and the thread's owner first."""

    def __init__(self, *, lumina_services: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Kept through copy()/with_config() (the LangGraph server copies the graph for each run): the
        # settings' limits come from it. Pregel's own __init__ drops attributes it does not know.
        if lumina_services is not None:
            self.lumina_services = lumina_services

    def _services(self):
        provider = getattr(self, "lumina_services", None)
        return provider() if provider is not None else None

    def _settings(self):
        services = self._services()
        return services.settings if services is not None else None

    def _has_thread(self, config: dict | None) -> bool:
        configurable = (config or {}).get("configurable") or {}
        return "thread_id" in configurable and (self.checkpointer not in (None, False) or "__pregel_checkpointer" in configurable)

    def _check(self, input: Any, config: dict | None, context: Any) -> object | None:
        """Validate the input; return the run's user id when the thread's owner must be checked."""
        settings = self._settings()
        user_id = _user_id(config, context)
        if settings is not None:
            check_run_input(input, user_id, settings)
            refuse_while_erasing(open_shared_state(settings), user_id)  # any process's erasure
        return user_id if self._has_thread(config) else None

    def _redacted(self, input: Any) -> Any:
        """S7: the input as the checkpoint may keep it, PII redacted (nodes.validate.redact_run_input)."""
        settings = self._settings()
        return redact_run_input(input, redaction_kinds(settings)) if settings is not None else input

    def _check_reuse(self, input: Any, context: Any, config: dict | None, values: dict | None) -> None:
        services = self._services()
        if services is not None and isinstance(input, dict) and (input.get("turn") or input.get("transcript") is not None):
            check_reuse(input, _user_id(config, context), services.settings, services.stores.archive, values)

    def stream(self, input: Any, config: dict | None = None, *, context: Any = None, **kwargs: Any):
        user_id = self._check(input, config, context)
        values = None
        if user_id is not None:
            values = self.get_state(config, subgraphs=False).values
            check_owner(thread_owner(values), user_id)
        self._check_reuse(input, context, config, values)
        return super().stream(self._redacted(input), config, context=context, **kwargs)

    async def astream(self, input: Any, config: dict | None = None, *, context: Any = None, **kwargs: Any):
        user_id = self._check(input, config, context)
        values = None
        if user_id is not None:
            values = (await self.aget_state(config, subgraphs=False)).values
            check_owner(thread_owner(values), user_id)
        self._check_reuse(input, context, config, values)
        async for chunk in super().astream(self._redacted(input), config, context=context, **kwargs):
            yield chunk


def guard(compiled: CompiledStateGraph) -> GuardedGraph:
    """The same compiled graph (same nodes, checkpointer, store, name) as a GuardedGraph."""
    return GuardedGraph(**{k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"})
