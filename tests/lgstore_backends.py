"""LuminaStore in either mode, for the store's tests: ``"duckdb"`` (what ``make_store`` opens: the embedded
item file and a qdrant-edge collection in the data directory) or ``"postgres"`` (the server mode: the item
table, ``stores.kv_duckdb.SqlItems.on_postgres``, and the same vector collection on pgvector,
``stores.vectors_pg.PgVectorStore``, both in one database of the private PostgreSQL)."""

from __future__ import annotations

from typing import Any

from lumina_memory.graphs.lumina_store import store_class, store_parts
from lumina_memory.stores.kv_duckdb import SqlItems
from lumina_memory.stores.langgraph_store import LuminaStore
from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.vectors_pg import PgVectorStore

BACKENDS = ("duckdb", "postgres")


def postgres_parts(parts: dict[str, Any], uri: str) -> dict[str, Any]:
    """``parts`` (of ``store_parts``) with the item table and the vector collection in the PostgreSQL database
    at ``uri``; on a failure what ``parts`` opened is closed."""
    edge = parts["vectors"]
    try:
        parts["items"].close()
        parts["items"] = None
        edge.close()
        parts["vectors"] = None
        parts["items"] = SqlItems.on_postgres(uri)
        parts["vectors"] = PgVectorStore.from_uri(uri, edge.collection, edge.dim, edge.embedder_name)
    except BaseException:
        for opened in (parts["items"], parts["vectors"]):
            if opened is not None:
                opened.close()
        parts["on_close"]()
        raise
    return parts


def open_store(backend: str, settings: LuminaSettings, uri: str | None = None, *,
               cls: type[LuminaStore] | None = None, **kwargs: Any) -> LuminaStore:
    """The store ``make_store(settings, **kwargs)`` gives, its items on ``backend`` (``uri``: for postgres)."""
    parts = store_parts(settings, **kwargs)
    if backend == "postgres":
        if uri is None:
            raise ValueError("a store on postgres needs the database's uri")
        parts = postgres_parts(parts, uri)
    return (cls or store_class(settings))(**parts)
