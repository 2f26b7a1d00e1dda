"""Build each tier's adapter from settings: embedded defaults unless a production URL is set."""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

from . import ids
from .datadir_lock import DataDirLock
from .protocols import ArchiveStore, GraphStore, MidTermStore, VectorStore
from .protocols_collections import KBStore, KnowledgeVectorStore, PointCollection, TurnVectorStore
from .protocols_files import ActivityLogStore, AuditReader, AuditTrail, ColdTurnStore, ItemTable, ReplyJournal
from .settings import LuminaSettings

log = logging.getLogger("lumina.stores")


@dataclass
class Stores:
    midterm: MidTermStore
    archive: ArchiveStore
    vectors: VectorStore
    graph: GraphStore
    lock: DataDirLock | None = None
    """The data directory's lock, released on close (None: the stores of a caller that holds it)."""
    backends: dict[str, str] = field(default_factory=dict)
    turns: TurnVectorStore | None = None
    """Turn-level vectors (stores.turn_vectors): every archived turn, for fine-grained recall; None when
    settings.turn_vectors is off."""
    knowledge: KnowledgeVectorStore | None = None
    """Knowledge vectors (stores.knowledge_vectors): one point per knowledge item, mirroring the archive's
    knowledge table (nodes.knowledge.tiers)."""
    kb: KBStore | None = None
    """Knowledge bases' collections and records (stores.kb_open), opened on first use; closed with the rest."""
    agents: Any = None
    """Agents' tables and vectors (stores.agent_open.AgentStores), opened on first use; closed with the rest."""
    pg_pool: Any = None
    """The pgvector collections' shared connection pool in server mode (closed after them)."""

    def vector_collections(self) -> list[PointCollection]:
        """The vector stores a maintenance step may index (knowledge bases index their own; agents' layers once
        this process opened them)."""
        stores = [store for store in (self.vectors, self.turns, self.knowledge) if store is not None]
        return stores + (self.agents.vectors.collections() if self.agents is not None else [])

    def optimize(self) -> list[dict]:
        """Index the vector collections (see VectorStoreBase.optimize): a maintenance step, not a turn's."""
        out = []
        for store in self.vector_collections():
            if store is not None:
                started = time.perf_counter()
                report = store.optimize()
                out.append({**report, "seconds": round(time.perf_counter() - started, 2)})
                log.info("optimized %s", out[-1])
        return out

    def close(self) -> None:
        """Close every store, each even when one before it fails (a server down): none keeps its connections;
        the first failure is raised once all are closed."""
        failed: BaseException | None = None
        for store in (self.agents, self.kb, self.knowledge, self.turns, self.graph, self.vectors, self.archive, self.midterm,
                      self.pg_pool):
            if store is not None:
                try:
                    store.close()
                except Exception as exc:  # noqa: BLE001 - raised below, after the rest are closed
                    failed = failed or exc
        if self.lock is not None:
            self.lock.release()
        if failed is not None:
            raise failed


def _edge_index_settings(settings: LuminaSettings) -> dict:
    return {"indexing_threshold_kb": settings.vector_indexing_threshold_kb,
            "full_scan_threshold_kb": settings.vector_full_scan_threshold_kb}


def server_mode(settings: LuminaSettings) -> bool:
    """Whether the memory lives on servers any number of processes share (``DATABASE_URI`` set): no data-dir
    lock, the archive and its tables in PostgreSQL, vectors in pgvector unless QDRANT_URL, the graph in
    PostgreSQL unless NEO4J_URI."""
    return bool(settings.database_url)


def _pg_vector_pool(settings: LuminaSettings):
    """One pool for every pgvector collection of a process (each store would otherwise keep its own)."""
    from .vectors_pg import open_pool

    return open_pool(settings.database_url, timeout=settings.database_timeout_seconds,
                     max_size=settings.database_pool_size)


def _point_class(kind: str, backend: str) -> type:
    """The adapter class of ``kind`` points ("segments", "turns", "knowledge") on ``backend`` ("qdrant",
    "qdrant-edge", "pgvector"), imported on demand: the embedded default never loads a server's driver."""
    if kind == "segments":
        if backend == "qdrant":
            from .vectors_client import ClientVectorStore as cls
        elif backend == "pgvector":
            from .vectors_pg import PgVectorStore as cls
        else:
            from .vectors_edge import EdgeVectorStore as cls
        return cls
    from . import knowledge_vectors, turn_vectors

    points = {"turns": (turn_vectors.client_turn_vectors, lambda: turn_vectors.EdgeTurnVectors,
                        turn_vectors.pg_turn_vectors),
              "knowledge": (knowledge_vectors.client_knowledge_vectors, lambda: knowledge_vectors.EdgeKnowledgeVectors,
                            knowledge_vectors.pg_knowledge_vectors)}[kind]
    return points[("qdrant", "qdrant-edge", "pgvector").index(backend)]()


def _collection(kind: str, settings: LuminaSettings, collection: str, embedder_name: str, dim: int, *,
                tuned: bool = True, pg_pool=None):
    """Collection ``collection`` of ``kind`` points ("segments", "turns" or "knowledge") where the settings say:
    a Qdrant server (``qdrant_url``), pgvector (``database_url``; on ``pg_pool`` when given) or a qdrant-edge
    shard in the data directory. ``tuned``: with the settings' upsert batch and index thresholds."""
    batch = {"batch_size": settings.upsert_batch_size} if tuned else {}
    if settings.qdrant_url:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        store = _point_class(kind, "qdrant").from_url(settings.qdrant_url, api_key, collection, dim, embedder_name)
        if tuned:
            store.batch_size = settings.upsert_batch_size
        return store
    if settings.database_url:
        pg_cls = _point_class(kind, "pgvector")
        if pg_pool is None:
            return pg_cls.from_uri(settings.database_url, collection, dim, embedder_name,
                                   timeout=settings.database_timeout_seconds, **batch)
        return pg_cls(pg_pool, collection, dim, embedder_name, owns_pool=False, **batch)
    tuning = dict(**batch, **_edge_index_settings(settings)) if tuned else {}
    return _point_class(kind, "qdrant-edge")(settings.resolved_data_dir() / "qdrant" / collection, collection, dim, embedder_name, **tuning)


def open_vectors(settings: LuminaSettings, collection: str, embedder_name: str, dim: int, *,
                 tuned: bool = True) -> VectorStore:
    """A segment-point collection named ``collection`` on the backend the settings choose (see _collection)."""
    return _collection("segments", settings, collection, embedder_name, dim, tuned=tuned)


def _open_archive(settings: LuminaSettings) -> ArchiveStore:
    if settings.database_url:
        from .archive_postgres import PostgresArchive

        return PostgresArchive(settings.database_url, timeout=settings.database_timeout_seconds,
                               pool_size=settings.database_pool_size)
    from .archive_duckdb import DuckDBArchive

    return DuckDBArchive(settings.resolved_data_dir() / "archive.duckdb")


def _open_graph(settings: LuminaSettings) -> GraphStore:
    if settings.neo4j_uri:
        from .graph_neo4j import Neo4jGraph

        return Neo4jGraph.from_settings(settings)
    if settings.database_url:
        from .graph_pg import PostgresGraph

        return PostgresGraph(settings.database_url, timeout=settings.database_timeout_seconds,
                             pool_size=settings.database_pool_size)
    from .graph_ladybug import LadybugGraph

    return LadybugGraph(settings.resolved_data_dir() / "graph")


def open_stores(settings: LuminaSettings, embedder_name: str, dim: int) -> Stores:
    from .midterm_redis import RedisMidTerm

    data_dir = settings.resolved_data_dir()
    lock = None
    if not server_mode(settings):
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = DataDirLock(data_dir)
        # Before any embedded engine opens its files: a second process gets a clear error, and the lock makes
        # the data directory and the files the engines create private (0700/0600, stores.private_files).
        lock.acquire()
    opened: list = []
    try:
        midterm = RedisMidTerm.from_settings(settings)
        opened.append(midterm)
        archive = _open_archive(settings)
        opened.append(archive)
        pg_pool = None
        if settings.database_url and not settings.qdrant_url:
            pg_pool = _pg_vector_pool(settings)
            opened.append(pg_pool)
        vectors = _collection("segments", settings, ids.collection_name("segments", embedder_name, dim), embedder_name, dim,
                          pg_pool=pg_pool)
        opened.append(vectors)
        turns = None
        if settings.turn_vectors:
            turns = _collection("turns", settings, ids.collection_name("turns", embedder_name, dim), embedder_name, dim,
                          pg_pool=pg_pool)
            opened.append(turns)
        knowledge = _collection("knowledge", settings, ids.collection_name("knowledge", embedder_name, dim), embedder_name, dim,
                          pg_pool=pg_pool)
        opened.append(knowledge)
        graph = _open_graph(settings)
    except BaseException:
        for store in reversed(opened):
            store.close()
        if lock is not None:
            lock.release()
        raise
    backends = {
        "mid-term": midterm.backend,
        "archive": archive.backend,
        "long-term": vectors.backend,
        "graph": graph.backend,
    }
    log.info("stores opened %s backends=%s",
             f"database={archive.data_dir}" if server_mode(settings) else f"data_dir={data_dir}", backends)
    return Stores(midterm, archive, vectors, graph, lock, backends, turns, knowledge, pg_pool=pg_pool)


def edge_meta_file() -> str:
    """The name of the metadata file in a qdrant-edge shard's folder (doctor reads it without opening the shard)."""
    from .vectors_edge import META_FILE

    return META_FILE


def items_path(data_dir: Path) -> Path:
    """Where the LangGraph store's item table lives in ``data_dir`` (whether one was made: does it exist)."""
    from .kv_duckdb import STORE_FILENAME

    return Path(data_dir) / STORE_FILENAME


def open_items(settings: LuminaSettings) -> ItemTable:
    """The LangGraph store's item table: in PostgreSQL in server mode, else in the data directory."""
    from .kv_duckdb import DuckDBItems, SqlItems

    if settings.database_url:
        return SqlItems.on_postgres(settings.database_url, timeout=settings.database_timeout_seconds,
                                    pool_size=settings.database_pool_size)
    return DuckDBItems(items_path(settings.resolved_data_dir()))


def open_activity_log(settings: LuminaSettings) -> ActivityLogStore:
    """The memory's activity log: a PostgreSQL table in server mode, else the data directory's files, rotated as
    the settings say."""
    if settings.database_url:
        from .activity_log_pg import PostgresActivityLog

        return PostgresActivityLog.for_settings(settings)
    from .activity_log import ActivityLog

    return ActivityLog.for_settings(settings)


def open_cold_turns(settings: LuminaSettings) -> ColdTurnStore:
    """Where storage policy B keeps raw turns (``storage_policy_b_location``, else the data directory's logs)."""
    from .cold_turns import ColdTurns

    return ColdTurns.for_settings(settings)


def open_journal(settings: LuminaSettings) -> ReplyJournal:
    """The memory's reply journal: a PostgreSQL table in server mode, else the data directory's, flushed as the
    settings say."""
    if settings.database_url:
        from .journal_pg import PostgresJournal

        return PostgresJournal.for_settings(settings)
    from .journal import Journal

    return Journal.for_settings(settings)


def close_server_sessions(settings: LuminaSettings) -> None:
    """Server mode: close the sessions this process keeps on the memory's PostgreSQL beside its stores (the
    reply journal's, the activity log's, the shared state's), so a closed memory holds no backend; each opens
    again on its next use. Nothing to do in embedded mode."""
    if not settings.database_url:
        return
    from . import activity_log_pg, journal_pg, shared_state

    for close in (journal_pg.close_sessions, activity_log_pg.close_sessions, shared_state.close_shared_states):
        try:
            close(settings.database_url)
        except Exception as exc:  # noqa: BLE001 - one session failing to close must not keep the others open
            log.warning("closing a server-mode session failed: %s", exc)


def open_audit_log(archive: ArchiveStore, key: bytes) -> AuditTrail:
    """The audit log in ``archive``'s database, its head sealed with the data directory's secret ``key``."""
    return archive.audit_trail(key)


def read_only_audit(settings: LuminaSettings) -> AbstractContextManager[AuditReader]:
    """The memory's audit log for reading and verifying only (``lumina-memory audit``): in server mode the
    server's (the archive's database, sealed with LUMINA_SECRET_KEY; no other store opened), else the data
    directory's archive opened read-only, nothing created."""
    if settings.database_url:
        from .audit import server_audit

        return server_audit(settings)
    from .audit import read_only_audit as opened

    return opened(settings.resolved_data_dir())
