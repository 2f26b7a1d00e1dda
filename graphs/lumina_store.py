"""Build Lumina Memory's LangGraph store (stores.langgraph_store.LuminaStore) from settings.

    from lumina_memory.graphs.lumina_store import make_store
    with make_store(LuminaSettings(data_dir="./.lumina")) as store:
        agent = builder.compile(store=store)

``index`` and ``ttl`` are LangGraph's IndexConfig and TTLConfig, as for any LangGraph store:

    make_store(settings, index={"dims": 1536, "embed": "openai:text-embedding-3-small", "fields": ["text"]},
               ttl={"default_ttl": 60 * 24 * 30, "refresh_on_read": True, "sweep_interval_minutes": 60})

``langgraph.json`` points its ``store`` at :func:`server_store`: the LangGraph server then gives every
graph (``runtime.store``, ``get_store()``) and its ``/store`` API this store instead of its own. The
server does not sweep a custom store's TTLs, so ``server_store`` reads the ``"ttl"`` (and ``"index"``) of
that ``store`` section itself and runs the sweeper:

    "store": {"path": "lumina_memory.graphs.lumina_store:server_store",
              "ttl": {"refresh_on_read": true, "sweep_interval_minutes": 60, "default_ttl": null}}
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from langgraph.store.base import IndexConfig, TTLConfig

from lumina_memory.nodes.services import default_services
from lumina_memory.nodes.text.embedder import CachedEmbedder, make_embedder
from lumina_memory.nodes.text.transliterate import cross_terms
from lumina_memory.stores import ids
from lumina_memory.stores.datadir_lock import DataDirLock
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.factory import open_items, open_vectors, server_mode
from lumina_memory.stores.langgraph_store import LuminaStore
from lumina_memory.stores.lgstore_embed import StoreEmbedding, from_embedder, from_index
from lumina_memory.stores.lgstore_ttl import check_config
from lumina_memory.stores.protocols import VectorStore
from lumina_memory.stores.settings import LuminaSettings, default_settings

SERVER_STORE_ENV = "LANGGRAPH_STORE"  # where the LangGraph server puts langgraph.json's "store" section (JSON)
# The store server_store serves, while it does: its embedded engines allow one handle per data directory, so
# whatever needs the store inside the server (a run's backup, erasure, restore) uses this one (served_store).
_served: list[tuple[Path, LuminaStore]] = []


def store_class(settings: LuminaSettings) -> type[LuminaStore]:
    """The class the settings call for: with ``pii_redaction`` (S7), values and queries are redacted
    before they are stored or embedded."""
    if settings.pii_redaction:
        from lumina_memory.nodes.store_redaction import RedactingStore

        return RedactingStore
    return LuminaStore


def make_store(
    settings: LuminaSettings | None = None,
    *,
    embedder: CachedEmbedder | None = None,
    index: IndexConfig | None = None,
    ttl: TTLConfig | None = None,
    cls: type[LuminaStore] | None = None,
) -> LuminaStore:
    """Items in ``<data_dir>/store.duckdb``; vectors in the collection ``lumina_store_<embedder>_<dim>``
    (qdrant-edge in ``<data_dir>/qdrant/``, or the Qdrant server at ``QDRANT_URL``). ``index``: LangGraph's
    IndexConfig — ``fields`` pick what is embedded; ``embed`` and ``dims`` choose the model (default: our
    embedder, whose dimension a given ``dims`` must equal). ``ttl``: LangGraph's TTLConfig. ``cls``: a
    subclass of the class the settings call for (``store_class``). Close the store when done."""
    settings = settings or default_settings()
    cls = cls or store_class(settings)
    return cls(**store_parts(settings, embedder=embedder, index=index, ttl=ttl))


def store_parts(
    settings: LuminaSettings,
    *,
    embedder: CachedEmbedder | None = None,
    index: IndexConfig | None = None,
    ttl: TTLConfig | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``store_class(settings)`` with the engines opened (the store owns them)."""
    check_config(ttl)  # a bad TTL config is refused before anything is opened
    index = dict(index or {})  # type: ignore[assignment]
    if index.get("embed") is not None:
        embedding = from_index(index)
    else:
        embedder = embedder or make_embedder(settings)
        embedding = from_embedder(embedder.name, embedder.dim, embedder.embed, index)
    lock = None
    if not server_mode(settings):
        data_dir = settings.resolved_data_dir()
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = DataDirLock(data_dir)  # also makes the directory and the files created in it private
        lock.acquire()  # re-entrant within a process: the memory graph's services may hold it too
    opened: list = []
    try:
        items = open_items(settings)
        opened.append(items)
        opened.append(_open_vectors(settings, embedding))
    except BaseException:
        for store in reversed(opened):
            store.close()
        if lock is not None:
            lock.release()
        raise
    parts: dict[str, Any] = dict(items=items, vectors=opened[1], embed=embedding, index=index, ttl=ttl,
                                 tokenize=cross_terms, on_close=lock.release if lock is not None else _nothing, max_query_chars=settings.max_query_chars,
                                 max_value_bytes=settings.max_store_value_bytes)
    if settings.pii_redaction:
        parts["pii_kinds"] = settings.pii_kinds
    return parts


def _nothing() -> None:
    """What closing the store releases in server mode: no data-dir lock was taken."""


def _open_vectors(settings: LuminaSettings, embedding: StoreEmbedding) -> VectorStore:
    collection = ids.collection_name("store", embedding.name, embedding.dims)
    return open_vectors(settings, collection, embedding.name, embedding.dims, tuned=False)


def server_config(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """langgraph.json's ``store`` section as the server hands it over (``LANGGRAPH_STORE``); {} outside it."""
    raw = environ.get(SERVER_STORE_ENV)
    if not raw:
        return {}
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(SERVER_STORE_ENV, f"is not JSON ({exc})") from None
    if not isinstance(config, dict):
        raise InvalidInput(SERVER_STORE_ENV, "must be a JSON object (langgraph.json's \"store\" section)")
    return config


@contextlib.contextmanager
def server_store() -> Iterator[LuminaStore]:
    """For ``langgraph.json`` (``"store": {"path": "lumina_memory.graphs.lumina_store:server_store", "ttl": {...}}``): the
    store of the data directory the memory graph uses, sharing its embedder, with the section's ``ttl`` and
    ``index``; its TTL sweeper runs while the server does (when ``ttl`` is set). Closed when the server stops."""
    config = server_config()
    index = dict(config.get("index") or {})
    if isinstance(index.get("embed"), str) and ".py:" in index["embed"]:
        from langgraph_api.graph import resolve_embeddings  # the server's reading of "./file.py:function"

        index["embed"] = resolve_embeddings(index)
    services = default_services()
    store = make_store(services.settings, embedder=services.embedder, index=index or None, ttl=config.get("ttl"))
    served = (services.settings.resolved_data_dir().resolve(), store)
    _served.append(served)
    try:
        if store.ttl_config:
            store.start_ttl_sweeper()
        yield store
    finally:
        _served.remove(served)
        store.close()  # stops the sweeper too


def served_store(settings: LuminaSettings) -> LuminaStore | None:
    """The store ``server_store`` serves in this process for the data directory of ``settings``; None outside
    a LangGraph server (or for another data directory)."""
    data_dir = settings.resolved_data_dir().resolve()
    return next((store for where, store in _served if where == data_dir), None)
