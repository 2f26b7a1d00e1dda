"""The memory graph: every turn flows down the tiers; user turns get a recalled, in-character reply.

    ingest_turn → batch_fallback → detect_boundary ─┬─ (a segment closed) → flush_to_redis → archive_to_duckdb
                                                    │                       → upsert_long_term → link_associations ─┐
                                                    └───────────────────────────────────────────────────────────────┴→
                                                      (user turn, respond on) → retrieve_context → respond → END

``batch_fallback`` starts, in the background, the daily batch a user who is back to talk missed (F9).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Callable

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from lumina_memory.nodes.archive_to_duckdb import archive_to_duckdb
from lumina_memory.nodes.batch_fallback import batch_fallback
from lumina_memory.nodes.costs_graph import GRAPH_OPERATIONS
from lumina_memory.nodes.detect_boundary import detect_boundary
from lumina_memory.nodes.flush_to_redis import flush_to_redis
from lumina_memory.nodes.ingest_turn import ingest_turn
from lumina_memory.nodes.link_associations import link_associations
from lumina_memory.nodes.respond import respond
from lumina_memory.nodes.retrieve_context import retrieve_context
from lumina_memory.nodes.services import Services, default_services
from lumina_memory.nodes.upsert_long_term import upsert_long_term
from lumina_memory.stores.errors import InvalidInput

from .context import RunContext
from .input_guard import guard
from .logging_setup import configure_logging
from .state import InputState, MemoryState, OutputState

log = logging.getLogger("lumina.graph")

NodeFn = Callable[[dict, RunContext, Services], dict]
TIER_OF = {
    "flush_to_redis": "mid-term",
    "archive_to_duckdb": "archive",
    "upsert_long_term": "long-term",
    "link_associations": "graph",
    "retrieve_context": "all",
}


def _bind(fn: NodeFn, services: Callable[[], Services]):
    """Give a node its services and one structured log line (user, segment, tier, timing)."""

    def node(state: MemoryState, runtime: Runtime[RunContext]) -> dict:
        ctx = runtime.context
        if ctx is None:
            raise InvalidInput("context", "is missing: pass context={'user_id': ...}")
        if isinstance(ctx, dict):
            ctx = RunContext(**ctx)
        started = time.perf_counter()
        opened = services()
        # Issue 49: each node is a stage of its operation (a turn's write, a segment's flush, a reply).
        update = GRAPH_OPERATIONS.run_node(fn.__name__, opened, ctx.user_id, _thread_id(),
                                           lambda: fn(state, ctx, opened))
        # Flush nodes write closed segments (in `pending`), not the open one: log those.
        pending = [p.get("segment_id", "") for p in state.get("pending") or []]
        segment = ",".join(pending) if fn.__name__ in TIER_OF and pending else (
            update.get("segment_id") or state.get("segment_id", "")
        )
        log.info(
            "node=%s user=%s segment=%s tier=%s ms=%.1f",
            fn.__name__,
            ctx.user_id,
            segment,
            TIER_OF.get(fn.__name__, "short-term"),
            (time.perf_counter() - started) * 1000,
        )
        return update

    node.__name__ = fn.__name__
    node.__doc__ = sys.modules[fn.__module__].__doc__  # Studio shows it beside the node
    return node


def _thread_id() -> str:
    try:
        return str((get_config().get("configurable") or {}).get("thread_id") or "")
    except RuntimeError:  # called outside a LangGraph run
        return ""


def after_boundary(state: MemoryState, runtime: Runtime[RunContext]) -> str:
    if state.get("pending"):
        return "flush_to_redis"
    return after_flush(state, runtime)


def after_flush(state: MemoryState, runtime: Runtime[RunContext]) -> str:
    ctx = runtime.context
    respond_on = ctx.get("respond", True) if isinstance(ctx, dict) else ctx.respond
    turns = state.get("turns") or []
    if respond_on and turns and turns[-1]["speaker"] == "user" and state.get("boundary", {}).get("reason") != "duplicate":
        return "retrieve_context"
    return END


def build_graph(services: Services | Callable[[], Services] | None = None, checkpointer=None):
    """Compile the memory graph. ``services``: an opened Services, a provider, or None for the
    process-wide default opened lazily from the environment (what `langgraph dev` uses)."""
    if services is None:
        provider = default_services
    elif isinstance(services, Services):
        provider = lambda: services  # noqa: E731
    else:
        provider = services
    builder = StateGraph(MemoryState, context_schema=RunContext, input_schema=InputState, output_schema=OutputState)
    for fn in (
        ingest_turn,
        batch_fallback,
        detect_boundary,
        flush_to_redis,
        archive_to_duckdb,
        upsert_long_term,
        link_associations,
        retrieve_context,
        respond,
    ):
        builder.add_node(fn.__name__, _bind(fn, provider))
    builder.add_edge(START, "ingest_turn")
    builder.add_edge("ingest_turn", "batch_fallback")
    builder.add_edge("batch_fallback", "detect_boundary")
    builder.add_conditional_edges("detect_boundary", after_boundary, ["flush_to_redis", "retrieve_context", END])
    builder.add_edge("flush_to_redis", "archive_to_duckdb")
    builder.add_edge("archive_to_duckdb", "upsert_long_term")
    builder.add_edge("upsert_long_term", "link_associations")
    builder.add_conditional_edges("link_associations", after_flush, ["retrieve_context", END])
    builder.add_edge("retrieve_context", "respond")
    builder.add_edge("respond", END)
    # guard(): input and the thread's owner are checked before a run writes its input to the checkpoint.
    compiled = guard(builder.compile(checkpointer=checkpointer, name="lumina-memory"))
    compiled.lumina_services = provider  # replay() embeds a transcript's texts ahead, in batches
    return compiled


# What `langgraph.json` exports: no checkpointer (the server brings its own), services opened lazily.
if os.environ.get("LUMINA_LOG_FORMAT") or os.environ.get("LUMINA_LOG_LEVEL"):
    configure_logging()
graph = build_graph()
