"""Build Lumina Memory's LangGraph store (stores.langgraph_store.LuminaStore) from settings.

    from graphs.lumina_store import make_store
    with make_store(LuminaSettings(data_dir="./.lumina")) as store:
        agent = builder.compile(store=store)

``langgraph.json`` points its ``store`` at :func:`server_store`: the LangGraph server then gives every
graph (``runtime.store``, ``get_store()``) and its ``/store`` API this store instead of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from langgraph.store.base import IndexConfig

from nodes.services import default_services
from nodes.text.embedder import CachedEmbedder, make_embedder
from nodes.text.tokenize import terms
from stores import ids
from stores.datadir_lock import DataDirLock
from stores.kv_duckdb import STORE_FILENAME, DuckDBItems
from stores.langgraph_store import LuminaStore
from stores.settings import LuminaSettings, default_settings


def make_store(
    settings: LuminaSettings | None = None,
    *,
    embedder: CachedEmbedder | None = None,
    index: IndexConfig | None = None,
) -> LuminaStore:
    """Items in ``<data_dir>/store.duckdb``; vectors in the collection ``lumina_store_<embedder>_<dim>``
    (qdrant-edge in ``<data_dir>/qdrant/``, or the Qdrant server at ``QDRANT_URL``). ``index``: LangGraph's
    IndexConfig, of which ``fields`` is used (the embedder is ours). Close the store when done."""
    settings = settings or default_settings()
    embedder = embedder or make_embedder(settings)
    data_dir = settings.resolved_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = DataDirLock(data_dir)  # also makes the directory and the files created in it private
    lock.acquire()  # re-entrant within a process: the memory graph's services may hold it too
    opened: list = []
    try:
        items = DuckDBItems(data_dir / STORE_FILENAME)
        opened.append(items)
        collection = ids.collection_name("store", embedder.name, embedder.dim)
        if settings.qdrant_url:
            from stores.vectors_client import ClientVectorStore

            api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            vectors = ClientVectorStore.from_url(settings.qdrant_url, api_key, collection, embedder.dim, embedder.name)
        else:
            from stores.vectors_edge import EdgeVectorStore

            vectors = EdgeVectorStore(data_dir / "qdrant" / collection, collection, embedder.dim, embedder.name)
    except BaseException:
        for store in reversed(opened):
            store.close()
        lock.release()
        raise
    if settings.pii_redaction:  # S7: values and queries redacted before they are stored or embedded
        from nodes.store_redaction import RedactingStore

        return RedactingStore(items, vectors, embedder.embed, index=index, tokenize=terms, on_close=lock.release,
                              pii_kinds=settings.pii_kinds, max_query_chars=settings.max_query_chars,
                              max_value_bytes=settings.max_store_value_bytes)
    return LuminaStore(items, vectors, embedder.embed, index=index, tokenize=terms, on_close=lock.release,
                       max_query_chars=settings.max_query_chars, max_value_bytes=settings.max_store_value_bytes)


@contextlib.contextmanager
def server_store() -> Iterator[LuminaStore]:
    """For ``langgraph.json`` (``"store": {"path": "graphs.lumina_store:server_store"}``): the store of the
    data directory the memory graph uses, sharing its embedder; closed when the server stops."""
    services = default_services()
    store = make_store(services.settings, embedder=services.embedder)
    try:
        yield store
    finally:
        store.close()
