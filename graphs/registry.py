"""THE registry of every place holding user data for an opened Services (L10, L11).

``user_data_places`` is the one function that builds it: the stores' places (stores.places: Redis keys,
archive tables, the audit log's clear ids, segment and turn vectors, the graph, the LangGraph store's items
and vectors, the checkpoint database, and what other modules register there) plus the in-process caches of
this process. Erasure, backups, restore and the residue test walk this list and nothing else.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from lumina_memory.nodes.retrieval.warm import recall_read_tables
from lumina_memory.nodes.services import Services
from lumina_memory.nodes.text.text_caches import cached_entries, clear_text_caches
from lumina_memory.stores.agent_open import agent_stores
from lumina_memory.stores.factory import items_path, server_mode
from lumina_memory.stores.kb_place import kb_place
from lumina_memory.stores.places import store_places
from lumina_memory.stores.places.agent_place import agent_place
from lumina_memory.stores.recall_snapshots import RecallSnapshotPlace, SnapshotFiles
from lumina_memory.stores.user_data import NothingToBackUp


class _MemoryOnly(NothingToBackUp):
    """Shared behaviour of in-process places: nothing on disk, nothing to back up."""

    def scrub(self) -> None:
        return None

    def raw_paths(self) -> list[Path]:
        return []


class IndexCachePlace(_MemoryOnly):
    """A per-user in-process index (services.keyword_index, services.turn_index): 1 when it holds the user."""

    def __init__(self, name: str, index):
        self.name, self.index = name, index

    def count(self, user_id: str) -> int:
        return int(self.index.holds(user_id))

    def erase(self, user_id: str) -> int:
        n = self.count(user_id)
        self.index.forget(user_id)
        return n


class RecallReadsPlace(_MemoryOnly):
    """What recall and priming keep of a user between queries (stores.stamped_cache: the memories' view, facts,
    procedures, the profile; recall flags already written; use counts not yet written): entries held for the user."""

    name = "cache.recall_reads"

    def __init__(self, archive):
        self.tables = recall_read_tables(archive)

    def count(self, user_id: str) -> int:
        return sum(t.cached_for(user_id) for t in self.tables)

    def erase(self, user_id: str) -> int:
        n = self.count(user_id)
        for table in self.tables:
            table.forget_cached(user_id)
        return n


class EmbedderCachePlace(_MemoryOnly):
    """The embedder's LRU cache of text -> vector. Its texts are not filed by user, so erasure empties it
    whole (other users only lose cache warmth); ``count`` is the texts it holds, whoever said them."""

    name = "cache.embedder"

    def __init__(self, embedder):
        self.embedder = embedder

    def count(self, user_id: str) -> int:
        return self.embedder.cached()

    def erase(self, user_id: str) -> int:
        return self.embedder.clear_cache()


class TextCachesPlace(_MemoryOnly):
    """The memos of text-derived values (nodes.text.text_caches): sentences, terms, passages, cross-script keys,
    ids. Like the embedder's cache they are not filed by user, so erasure empties them whole; ``count`` is
    every entry, whoever said it."""

    name = "cache.text_derivations"

    def count(self, user_id: str) -> int:
        return cached_entries()

    def erase(self, user_id: str) -> int:
        return clear_text_caches()


class StartupWarmPlace(_MemoryOnly):
    """The users a process that starts warms (nodes.retrieval.warm.StartupWarm): 1 while the user is on its list.
    Listed before the indexes, so a user erased while being warmed is dropped again after the warm-up's build."""

    name = "cache.startup_warm"

    def __init__(self, services: Services):
        self.services = services

    def count(self, user_id: str) -> int:
        warm = self.services.startup_warm
        return int(warm is not None and warm.holds(user_id))

    def erase(self, user_id: str) -> int:
        warm = self.services.startup_warm
        return warm.forget(user_id) if warm is not None else 0


def user_data_places(services: Services, *, store=None, checkpoints: Path | None = None,
                     extra_places: Sequence = ()) -> list:
    """Every place of ``services`` (and of ``store``, an open LuminaStore, when given) holding user data,
    then ``extra_places``: places only the caller can reach (a LangGraph server's threads, from inside it)."""
    # Knowledge bases first: it makes their archive tables, which the archive's places then find.
    kb = kb_place(services.stores, services.settings, services.embedder.name, services.embedder.dim)
    places = store_places(services.stores, services.settings, lg_store=store, checkpoints=checkpoints)
    places += [
        kb,
        # Agents' memory (issue 48): an agent id is erased, backed up and restored like a user id.
        agent_place(agent_stores(services.stores, services.settings, services.embedder.name, services.embedder.dim)),
        StartupWarmPlace(services),
        IndexCachePlace("cache.keyword_index", services.keyword_index),
        IndexCachePlace("cache.turn_index", services.turn_index),
        # After the index: once it is forgotten no write of the user's snapshot can start (TurnIndex.keep_snapshot).
        RecallSnapshotPlace(SnapshotFiles.for_settings(services.settings)),
        RecallReadsPlace(services.stores.archive),
        EmbedderCachePlace(services.embedder),
        TextCachesPlace(),
        *extra_places,
    ]
    return places


@contextlib.contextmanager
def open_registry(
    services: Services, *, store=None, checkpoints: Path | None = None, open_store: bool | None = None,
    extra_places: Sequence = (),
) -> Iterator[list]:
    """``user_data_places`` with the LangGraph store of the data directory: ``store`` when the caller has it
    open; else, inside a LangGraph server, the store the server serves (graphs.lumina_store.served_store: the
    embedded engines allow one handle, so opening another would fail); else opened for the duration.
    ``open_store``: None opens it when its file exists; True always (a restore into an empty data dir)."""
    from .lumina_store import make_store, served_store

    opened = None
    if store is None:
        store = served_store(services.settings)
    if open_store is None:
        open_store = server_mode(services.settings) or items_path(services.settings.resolved_data_dir()).exists()
    if store is None and open_store:
        store = opened = make_store(services.settings, embedder=services.embedder)
    try:
        yield user_data_places(services, store=store, checkpoints=checkpoints, extra_places=extra_places)
    finally:
        if opened is not None:
            opened.close()
