"""LuminaStore on either engine of its item table, for the store's tests: ``"duckdb"`` (the embedded file
``make_store`` opens in the data directory) or ``"postgres"`` (the table in a database of the private
PostgreSQL, ``stores.kv_duckdb.SqlItems.on_postgres``). The vectors are those ``store_parts`` opens for the
settings on both; only the item table changes."""

from __future__ import annotations

from typing import Any

from lumina_memory.graphs.lumina_store import store_class, store_parts
from lumina_memory.stores.kv_duckdb import SqlItems
from lumina_memory.stores.langgraph_store import LuminaStore
from lumina_memory.stores.settings import LuminaSettings

BACKENDS = ("duckdb", "postgres")


def postgres_parts(parts: dict[str, Any], uri: str) -> dict[str, Any]:
    """``parts`` (of ``store_parts``) with the item table on the PostgreSQL database at ``uri``; on a failure
    what ``parts`` opened is closed."""
    try:
        parts["items"].close()
        parts["items"] = SqlItems.on_postgres(uri)
    except BaseException:
        parts["vectors"].close()
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
