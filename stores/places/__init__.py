"""Every place of the stores that holds user data, as UserDataPlaces (see stores.user_data).

``store_places`` builds the stores' part of the registry; graphs.registry adds the in-process caches of a
running Services and is the one function callers use.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ..settings import LuminaSettings
from .checkpoints_open import checkpoints_place
from .graph_place import GraphPlace
from .lgstore_place import LuminaStorePlace
from .redis_place import RedisPlace
from .vector_place import VectorPlace

# Modules other capabilities add that provide places of their own; a module that is absent (not built
# yet in this version) is skipped. Each exposes ``user_data_places(settings) -> list[UserDataPlace]``.
PLACE_MODULES = ("lumina_memory.stores.activity_log", "lumina_memory.stores.journal", "lumina_memory.stores.cold_turns")
# The same places in server mode (settings.database_url): the activity log and journal as PostgreSQL tables.
SERVER_PLACE_MODULES = ("lumina_memory.stores.activity_log_pg", "lumina_memory.stores.journal_pg",
                        "lumina_memory.stores.cold_turns")


def _module_places(settings: LuminaSettings) -> list:
    out: list = []
    for name in SERVER_PLACE_MODULES if settings.database_url else PLACE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise  # the module exists but something it imports is missing: a real error
            continue
        factory = getattr(module, "user_data_places", None)
        if factory is not None:
            out += list(factory(settings))
    return out


def store_places(stores, settings: LuminaSettings, *, lg_store=None, checkpoints: Path | None = None) -> list:
    """``stores``: an open stores.factory.Stores; ``lg_store``: an open LuminaStore or None;
    ``checkpoints``: the LangGraph SQLite checkpoint file (default ``<data_dir>/checkpoints.sqlite``, or the
    server mode's PostgreSQL: stores.places.checkpoints_place.checkpoints_place)."""
    snapshot = None
    if stores.midterm.backend == "redis-embedded":
        from ..redis_server import server_paths

        snapshot = server_paths(settings).rdb
    places: list = [RedisPlace(stores.midterm, snapshot), *stores.archive.user_data_places()]
    places.append(VectorPlace("vectors.segments", stores.vectors))
    if stores.turns is not None:
        places.append(VectorPlace("vectors.turns", stores.turns))
    if stores.knowledge is not None:
        places.append(VectorPlace("vectors.knowledge", stores.knowledge))
    places.append(GraphPlace(stores.graph))
    if lg_store is not None:
        places.append(LuminaStorePlace(lg_store))
    places.append(checkpoints_place(settings, checkpoints))
    places += _module_places(settings)
    return places
