"""The knowledge bases' stores of an open ``Stores``: the archive's KB records and the KB collections.

Opened on first use (most runs never touch a KB) and kept on ``lumina_memory.stores.kb``, which ``Stores.close`` closes.
The engine follows the other collections: qdrant-edge shards under ``<data_dir>/qdrant`` by default, the
Qdrant server of ``QDRANT_URL`` when set (one client shared by every KB collection).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .kb_vectors import KBCollections
from .protocols_collections import KBCatalogStore

_opening = threading.Lock()


@dataclass
class KBStores:
    catalog: KBCatalogStore
    collections: KBCollections

    def close(self) -> None:
        self.collections.close()


def kb_stores(stores, settings, embedder_name: str, dim: int) -> KBStores:
    """``lumina_memory.stores.kb``, opened now if it was not yet."""
    with _opening:
        if stores.kb is None:
            stores.kb = KBStores(stores.archive.kb_catalog(), _collections(settings, embedder_name, dim))
        return stores.kb


def _collections(settings, embedder_name: str, dim: int) -> KBCollections:
    batch = settings.upsert_batch_size
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        client = QdrantClient(url=settings.qdrant_url, api_key=api_key, timeout=10, check_compatibility=False)
        return KBCollections(embedder_name, dim, client=client, batch_size=batch, owns_client=True)
    if settings.database_url:
        from .kb_vectors import PgKBCollections
        from .vectors_pg import open_pool

        pool = open_pool(settings.database_url, timeout=settings.database_timeout_seconds,
                         max_size=settings.database_pool_size, name="lumina-kb")
        return PgKBCollections(embedder_name, dim, pool, batch_size=batch)
    edge = {"indexing_threshold_kb": settings.vector_indexing_threshold_kb,
            "full_scan_threshold_kb": settings.vector_full_scan_threshold_kb}
    return KBCollections(embedder_name, dim, root=settings.resolved_data_dir() / "qdrant", batch_size=batch,
                         edge_options=edge)


def use_collections(stores, settings, embedder_name: str, dim: int, collections: KBCollections) -> KBStores:
    """Put ``collections`` (e.g. on a given QdrantClient) in place of the default before first use."""
    with _opening:
        if stores.kb is not None:
            stores.kb.close()
        stores.kb = KBStores(stores.archive.kb_catalog(), collections)
        return stores.kb
