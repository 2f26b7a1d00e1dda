"""Everything the nodes need that outlives a run: stores, embedder, settings.

Opened lazily on first use so that importing the graph (LangGraph Studio, ``langgraph dev``) touches
no store; one instance per process, because embedded engines lock their data directory.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.factory import Stores, close_server_sessions, open_stores
from lumina_memory.stores.leases import Leases, open_leases
from lumina_memory.stores.secret import memory_secret
from lumina_memory.stores.recall_snapshots import SnapshotFiles
from lumina_memory.stores.settings import LuminaSettings, default_settings

from .retrieval.keyword_index import KeywordIndex
from .retrieval.turn_index import TurnIndex
from .text.embedder import CachedEmbedder, make_embedder

log = logging.getLogger("lumina.services")


@dataclass
class Services:
    settings: LuminaSettings
    stores: Stores
    embedder: CachedEmbedder
    chat_model: object | None = None
    """A LangChain chat model for summaries and replies; None means offline methods (or ChatOpenAI
    built on demand when OPENAI_API_KEY is set)."""
    paths: dict[str, str] = field(default_factory=dict)
    """Which path each step runs (offline or llm), reported by `stats` and logs."""
    keyword_index: KeywordIndex = field(default_factory=KeywordIndex)
    turn_index: TurnIndex = field(default_factory=TurnIndex)
    """Per-user BM25 over archived turns and their conversation order (turn-level recall)."""
    degraded: dict[str, str] = field(default_factory=dict)
    """Tiers found down since the last successful write to them (tier -> error): stats and doctor show them."""
    outbox_retry_seconds: float = 30.0
    """While derived writes are owed (an outage), how often a flush first retries them."""
    outbox_tried_at: float = 0.0
    open_segments_checked: set = field(default_factory=set)
    """(user, first turn) of open segments found not archived: detect_boundary asks the archive once."""

    built: dict[str, object] = field(default_factory=dict)
    """Helpers built once per Services on first use (the emotion reader, the model's knowledge extractor), by name."""
    startup_warm: object | None = None
    """lumina_memory.nodes.retrieval.warm.StartupWarm of a long-running process (default_services), else None."""
    leases: Leases | None = None
    """Jobs that must run once across the processes of this memory take a lease here (stores.leases); shared by
    the process's Services of one memory (closing ends its session once no lease is held; it opens again on use)."""

    def close(self) -> None:
        """Close the stores and, in server mode, every session this process keeps on the memory's PostgreSQL
        (leases, journal, activity log, shared state): a closed Services holds no backend. Those are shared by
        the process's Services of one memory and open again on their next use."""
        try:
            if self.startup_warm is not None:
                self.startup_warm.close()
            self.stores.close()
        finally:
            close_server_sessions(self.settings)
            if self.leases is not None:
                self.leases.close()


STARTUP_HOOKS: list[Callable[[Services], None]] = []
"""Run by every open_services after recovery. graphs/ registers what needs more than the stores (finishing
an interrupted erasure walks the registry of every place)."""


def open_services(settings: LuminaSettings | None = None, chat_model: object | None = None) -> Services:
    settings = settings or default_settings()
    if settings.database_url:
        memory_secret(settings)  # server mode: a missing or short LUMINA_SECRET_KEY is refused before anything opens
    embedder = make_embedder(settings)
    if chat_model is None and settings.use_openai and settings.llm != "offline":
        # One chat model for replies, summaries and knowledge, whose unanswered calls are ModelUnavailable (S8).
        from .text.openai_models import chat_model as openai_chat_model

        chat_model = openai_chat_model(settings)
    stores = open_stores(settings, embedder.name, embedder.dim)
    if settings.embedding_cache_redis:
        embedder.share(stores.midterm.vector_cache(f"{embedder.name}-{embedder.dim}"),
                       settings.embedding_cache_redis_ttl_seconds)
    llm_path = "llm" if (chat_model is not None or settings.use_openai) and settings.llm != "offline" else "offline"
    paths = {"embedder": f"{embedder.name} ({embedder.path})", "summary": llm_path, "responder": llm_path,
             "embedding_cache": "process + redis" if embedder.shared is not None else "process"}
    log.info("services ready paths=%s backends=%s", paths, stores.backends)
    services = Services(
        settings, stores, embedder, chat_model, paths,
        keyword_index=KeywordIndex(settings.recall_index_users, SnapshotFiles.for_settings(settings)),
        turn_index=TurnIndex(settings.recall_index_users, (settings.recall_passage_tokens, settings.recall_passage_min_tokens),
                             SnapshotFiles.for_settings(settings), settings.recall_snapshot_min_turns),
        leases=open_leases(settings),
    )
    from . import recovery

    # The archive is the durable base: what a crash or an outage left owed is completed now, and a
    # mid-term server that lost records (restarted before its snapshot) gets them back. Later, the
    # mid-term adapter asks for the same check whenever it had to reconnect.
    stores.midterm.on_reconnect = lambda: recovery.rebuild_midterm(services, reason="mid-term reconnected")
    try:
        recovery.on_startup(services)
        from .reply_recovery import recover_replies_once

        recover_replies_once(services)  # A11: replies a dead process was generating, from their journal
        for hook in STARTUP_HOOKS:
            hook(services)
    except BaseException:
        stores.close()
        raise
    try:
        stores.graph.prepare_recall_reads(settings.retrieve_graph)
    except StoreUnavailable as exc:  # a graph server that is down: the first recall compiles them
        log.warning("graph reads not prepared: %s", exc)
    except BaseException:
        stores.close()
        raise
    return services


_default: Services | None = None
_default_lock = threading.Lock()


def default_services() -> Services:
    """The process-wide services, built from the environment on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = open_services()
            # The process-wide services serve a long-running process (LangGraph server, `langgraph dev`,
            # a notebook): its recently active users' indexes are built now, in the background.
            from .retrieval.warm import warm_at_start

            _default.startup_warm = warm_at_start(_default, _default.settings.recall_warm_users)
        return _default


def set_default_services(services: Services | None) -> None:
    global _default
    with _default_lock:
        _default = services
