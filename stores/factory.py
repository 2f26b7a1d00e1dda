"""Build each tier's adapter from settings: embedded defaults unless a production URL is set."""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager
from pathlib import Path
from dataclasses import dataclass, field

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

    def vector_collections(self) -> list[PointCollection]:
        """The vector stores a maintenance step may index (knowledge bases index their own)."""
        return [store for store in (self.vectors, self.turns, self.knowledge) if store is not None]

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
        for store in (self.kb, self.knowledge, self.turns, self.graph, self.vectors, self.archive, self.midterm):
            if store is not None:
                store.close()
        if self.lock is not None:
            self.lock.release()


def _edge_index_settings(settings: LuminaSettings) -> dict:
    return {"indexing_threshold_kb": settings.vector_indexing_threshold_kb,
            "full_scan_threshold_kb": settings.vector_full_scan_threshold_kb}


def open_vectors(settings: LuminaSettings, collection: str, embedder_name: str, dim: int, *,
                 tuned: bool = True) -> VectorStore:
    """A segment-point collection: on the Qdrant server of ``qdrant_url`` when set, else a qdrant-edge shard in the
    data directory. ``tuned``: with the settings' upsert batch and index thresholds, else the adapter's defaults."""
    if settings.qdrant_url:
        from .vectors_client import ClientVectorStore

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        vectors = ClientVectorStore.from_url(settings.qdrant_url, api_key, collection, dim, embedder_name)
        if tuned:
            vectors.batch_size = settings.upsert_batch_size
        return vectors
    from .vectors_edge import EdgeVectorStore

    tuning = dict(batch_size=settings.upsert_batch_size, **_edge_index_settings(settings)) if tuned else {}
    return EdgeVectorStore(settings.resolved_data_dir() / "qdrant" / collection, collection, dim, embedder_name,
                           **tuning)


def open_stores(settings: LuminaSettings, embedder_name: str, dim: int) -> Stores:
    from .archive_duckdb import DuckDBArchive
    from .midterm_redis import RedisMidTerm

    data_dir = settings.resolved_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = DataDirLock(data_dir)
    # Before any embedded engine opens its files: a second process gets a clear error, and the lock makes
    # the data directory and the files the engines create private (0700/0600, stores.private_files).
    lock.acquire()
    opened: list = []
    try:
        midterm = RedisMidTerm.from_settings(settings)
        opened.append(midterm)
        archive = DuckDBArchive(data_dir / "archive.duckdb")
        opened.append(archive)
        vectors = open_vectors(settings, ids.collection_name("segments", embedder_name, dim), embedder_name, dim)
        opened.append(vectors)
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        turns = None
        if settings.turn_vectors:
            turn_collection = ids.collection_name("turns", embedder_name, dim)
            if settings.qdrant_url:
                from .turn_vectors import client_turn_vectors

                turns = client_turn_vectors().from_url(
                    settings.qdrant_url, api_key, turn_collection, dim, embedder_name
                )
                turns.batch_size = settings.upsert_batch_size
            else:
                from .turn_vectors import EdgeTurnVectors

                turns = EdgeTurnVectors(
                    data_dir / "qdrant" / turn_collection, turn_collection, dim, embedder_name,
                    batch_size=settings.upsert_batch_size, **_edge_index_settings(settings),
                )
            opened.append(turns)
        knowledge_collection = ids.collection_name("knowledge", embedder_name, dim)
        if settings.qdrant_url:
            from .knowledge_vectors import client_knowledge_vectors

            knowledge = client_knowledge_vectors().from_url(
                settings.qdrant_url, api_key, knowledge_collection, dim, embedder_name, batch_size=settings.upsert_batch_size)
        else:
            from .knowledge_vectors import EdgeKnowledgeVectors

            knowledge = EdgeKnowledgeVectors(
                data_dir / "qdrant" / knowledge_collection, knowledge_collection, dim, embedder_name,
                batch_size=settings.upsert_batch_size, **_edge_index_settings(settings),
            )
        opened.append(knowledge)
        if settings.neo4j_uri:
            from .graph_neo4j import Neo4jGraph

            graph = Neo4jGraph.from_settings(settings)
        else:
            from .graph_ladybug import LadybugGraph

            graph = LadybugGraph(data_dir / "graph")
    except BaseException:
        for store in reversed(opened):
            store.close()
        lock.release()
        raise
    backends = {
        "mid-term": midterm.backend,
        "archive": archive.backend,
        "long-term": vectors.backend,
        "graph": graph.backend,
    }
    log.info("stores opened data_dir=%s backends=%s", data_dir, backends)
    return Stores(midterm, archive, vectors, graph, lock, backends, turns, knowledge)


def edge_meta_file() -> str:
    """The name of the metadata file in a qdrant-edge shard's folder (doctor reads it without opening the shard)."""
    from .vectors_edge import META_FILE

    return META_FILE


def items_path(data_dir: Path) -> Path:
    """Where the LangGraph store's item table lives in ``data_dir`` (whether one was made: does it exist)."""
    from .kv_duckdb import STORE_FILENAME

    return Path(data_dir) / STORE_FILENAME


def open_items(data_dir: Path) -> ItemTable:
    """The LangGraph store's item table in ``data_dir``."""
    from .kv_duckdb import DuckDBItems

    return DuckDBItems(items_path(data_dir))


def open_activity_log(settings: LuminaSettings) -> ActivityLogStore:
    """The data directory's activity log, rotated as the settings say."""
    from .activity_log import ActivityLog

    return ActivityLog.for_settings(settings)


def open_cold_turns(settings: LuminaSettings) -> ColdTurnStore:
    """Where storage policy B keeps raw turns (``storage_policy_b_location``, else the data directory's logs)."""
    from .cold_turns import ColdTurns

    return ColdTurns.for_settings(settings)


def open_journal(settings: LuminaSettings) -> ReplyJournal:
    """The data directory's reply journal, flushed as the settings say."""
    from .journal import Journal

    return Journal.for_settings(settings)


def open_audit_log(archive: ArchiveStore, key: bytes) -> AuditTrail:
    """The audit log in ``archive``'s database, its head sealed with the data directory's secret ``key``."""
    return archive.audit_trail(key)


def read_only_audit(data_dir: Path) -> AbstractContextManager[AuditReader]:
    """The data directory's audit log for reading and verifying only: the archive opened read-only, nothing
    created (``lumina-memory audit``)."""
    from .audit import read_only_audit as opened

    return opened(data_dir)
