"""Agents' vectors (issue 48, ``AgentVectors``): events (STM), long-term records (LTM) and shared memories.

One collection per layer on the vector tier's engine (``lumina_agent_stm|agent_ltm|agent_shared_<embedder>_<dim>``,
stores.ids.collection_name): a qdrant-edge shard in the data directory by default, Qdrant with ``QDRANT_URL``,
pgvector in server mode (``DATABASE_URI``, on the process's pool when given). The adapters are the tier's own
(stores.agent_vectors_engines), so validation, batching, backups and erasure's rewrite work as for the chat's
collections. The tenant is the agent (for "shared": the run) and is the payload's ``user_id``, which every read
filters on: one agent never sees another's points. Point ids are uuid5 of (tenant, layer, id); the layer id is the
payload's ``item_id`` (indexed), so ``search(..., among=ids)`` is a filter inside the search, not a cut of a top-k.

Quantisation (``settings.agents.quantization``, P8) applies to the LTM layer, the large one (up to 10,000 records
per agent); STM and shared memories stay full float32. What each engine does, and where it has nothing (qdrant-
client's local mode), is in stores.agent_vectors_engines; ``quantization`` says the mode in effect and a log line
names it when the collection opens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import ids
from .errors import InvalidInput
from .agent_vectors_engines import ITEM_FIELD
from .vector_filters import TENANT_FIELD, Match, PreparedPoint, check_id_list, check_vector, user_conditions

LAYER_KINDS = {"stm": "agent_stm", "ltm": "agent_ltm", "shared": "agent_shared"}
LAYERS: tuple[str, ...] = tuple(LAYER_KINDS)
QUANTISED_LAYER = "ltm"


def agent_point_id(layer: str, tenant: str, item_id: str) -> str:
    return ids.point_id(tenant, f"{LAYER_KINDS[layer]}:{item_id}")


class AgentVectorSet:
    """``AgentVectors`` over one adapter per layer (all of one engine)."""

    def __init__(self, stores: dict[str, Any], dim: int) -> None:
        self._stores = stores
        self.dim = dim
        self.backend = stores[LAYERS[0]].backend
        self.quantization = stores[QUANTISED_LAYER].quantization

    def _store(self, layer: object) -> Any:
        store = self._stores.get(layer) if isinstance(layer, str) else None
        if store is None:
            raise InvalidInput("layer", f"{str(layer)[:40]!r} is not one of {', '.join(LAYERS)}")
        store.require_open()
        return store

    def collections(self) -> list[Any]:
        """The layers' adapters (backups, erasure's rewrite, optimize)."""
        return list(self._stores.values())

    def upsert(self, layer: str, tenant: str, item_ids: Sequence[str], vectors: np.ndarray) -> int:
        """Write (or replace) these items' vectors, all checked before any is written; points written (an id given
        twice is written once, its last vector kept)."""
        store = self._store(layer)
        tenant = ids.validate_id(tenant, "tenant")
        if isinstance(item_ids, str) or not isinstance(item_ids, Sequence):
            raise InvalidInput("ids", "must be a list of ids, not a single string")
        try:
            given = len(vectors)
        except TypeError:
            raise InvalidInput("vectors", f"must be one vector per id, got {type(vectors).__name__}") from None
        if given != len(item_ids):
            raise InvalidInput("vectors", f"one vector per id: {len(item_ids)} ids, {given} vectors")
        points: dict[str, PreparedPoint] = {}
        for i, (item, vector) in enumerate(zip(item_ids, vectors)):
            item = ids.validate_id(item, f"ids[{i}]")
            pid = agent_point_id(layer, tenant, item)
            points[pid] = PreparedPoint(pid, check_vector(vector, self.dim, f"vectors[{i}]"),
                                        {TENANT_FIELD: tenant, ITEM_FIELD: item})
        store.write_prepared(list(points.values()))
        return len(points)

    def search(self, layer: str, tenant: str, vector: Sequence[float], limit: int,
               among: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """The tenant's nearest items as (id, cosine), best first; only ``among`` when given (an empty list: none)."""
        store = self._store(layer)
        conditions = user_conditions(tenant)
        tenant = conditions[0].values[0]
        query = check_vector(vector, self.dim, "vector")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInput("limit", f"must be a non-negative integer, got {limit!r}")
        if among is not None:
            wanted = check_id_list(among, "among")
            if not wanted:
                return []
            conditions.append(Match(ITEM_FIELD, tuple(wanted)))
        if limit == 0:
            return []
        hits = store.query(query, conditions, limit, [TENANT_FIELD, ITEM_FIELD])
        # The engines filtered on the tenant already; the payload check keeps a foreign point out regardless.
        return [(str(p[ITEM_FIELD]), float(score)) for _, score, p in hits
                if p.get(TENANT_FIELD) == tenant and p.get(ITEM_FIELD)]

    def vectors_of(self, layer: str, tenant: str, item_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors (float32) of this tenant's items; missing ones left out."""
        store = self._store(layer)
        tenant = ids.validate_id(tenant, "tenant")
        wanted = {agent_point_id(layer, tenant, i): i for i in check_id_list(item_ids, "ids")}
        found = store.vectors_by_point(tenant, list(wanted)) if wanted else {}
        return {wanted[pid]: vec for pid, vec in found.items() if pid in wanted}

    def delete(self, layer: str, tenant: str, item_ids: Sequence[str]) -> int:
        """Remove these items of this tenant; how many there were (missing or foreign ids count 0)."""
        store = self._store(layer)
        return store.delete_matching(ids.validate_id(tenant, "tenant"), ITEM_FIELD, check_id_list(item_ids, "ids"))

    def delete_tenant(self, layer: str, tenant: str) -> int:
        """Remove every point of this tenant in the layer (an edge shard then owes a rewrite: erasure's L11)."""
        return self._store(layer).delete_user(ids.validate_id(tenant, "tenant"))

    def count(self, layer: str, tenant: str | None = None) -> int:
        return self._store(layer).count(tenant)

    def points(self, layer: str) -> Iterable[tuple[str, list[float], dict[str, Any]]]:
        """Every point of the layer as (point id, vector, payload): what a backup copies."""
        return self._store(layer).points()

    def optimize(self) -> list[dict[str, Any]]:
        """Each layer's optimize(): qdrant-edge indexes (and quantises) only when asked."""
        return [store.optimize() for store in self._stores.values()]

    def close(self) -> None:
        for store in self._stores.values():
            store.close()


def _layer_class(backend: str, mode: str) -> type:
    from . import agent_vectors_engines as engines

    base = {"qdrant": engines.client_agent_vectors, "pgvector": engines.pg_agent_vectors,
            "qdrant-edge": lambda: engines.EdgeAgentVectors}[backend]()
    return type(f"{base.__name__}_{mode}", (base,), {"requested": mode})


def _open_layer(settings: Any, layer: str, embedder_name: str, dim: int, pg_pool: Any) -> Any:
    from .factory import _edge_index_settings

    collection = ids.collection_name(LAYER_KINDS[layer], embedder_name, dim)
    mode = settings.agents.quantization if layer == QUANTISED_LAYER else "none"
    batch = {"batch_size": settings.upsert_batch_size}
    if settings.qdrant_url:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        store = _layer_class("qdrant", mode).from_url(settings.qdrant_url, api_key, collection, dim, embedder_name,
                                                      **batch)
    elif settings.database_url:
        cls = _layer_class("pgvector", mode)
        store = (cls(pg_pool, collection, dim, embedder_name, owns_pool=False, **batch) if pg_pool is not None else
                 cls.from_uri(settings.database_url, collection, dim, embedder_name,
                              timeout=settings.database_timeout_seconds, **batch))
    else:
        store = _layer_class("qdrant-edge", mode)(settings.resolved_data_dir() / "qdrant" / collection, collection,
                                                  dim, embedder_name, **batch, **_edge_index_settings(settings))
    from .agent_vectors_engines import log_mode

    log_mode(collection, store.backend, mode, store.quantization)
    return store


def open_agent_vectors(settings: Any, embedder_name: str, dim: int, pg_pool: Any = None) -> AgentVectorSet:
    """The three layers' collections on the engine the settings choose (see the module docstring)."""
    opened: dict[str, Any] = {}
    try:
        for layer in LAYERS:
            opened[layer] = _open_layer(settings, layer, embedder_name, dim, pg_pool)
    except BaseException:
        for store in opened.values():
            store.close()
        raise
    return AgentVectorSet(opened, dim)
