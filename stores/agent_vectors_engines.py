"""The vector adapters of agents' memory, one per engine, each with its own quantisation (P8).

Each class is the tier's adapter (stores.vectors_edge / vectors_client / vectors_pg) plus two things agents need:
``_vectors_by_point`` (stored vectors of a tenant's points) and a search that uses the engine's quantised vectors
when the class's ``requested`` mode asks for them. ``quantization`` is the mode actually in effect:

- qdrant-edge: the engine's own ScalarQuantization (int8) / BinaryQuantization (1 bit), searched with rescoring
  on the original vectors (``QuantizationSearchParams(rescore=True, oversampling=...)``). The shard quantises what
  it is given as it writes (a search ranks by the quantised copies before any ``optimize()``). The engine persists
  a shard's quantisation, so a shard once quantised and now opened with "none" is searched with ``ignore=True``.
- Qdrant server: the same configuration set on the collection (``update_collection``), the same search params.
  qdrant-client's local mode has no quantisation (it scores float vectors with numpy): "none" is in effect there.
- pgvector: a search takes ``oversampling`` times the limit by the quantised distance, ``embedding::halfvec(dim)``
  (scalar: 16-bit floats, pgvector has no int8 type) or ``binary_quantize(embedding)::bit(dim)`` (binary, Hamming
  distance), and re-ranks them by the full vector's cosine. pgvector's README pairs this with an HNSW index on the
  quantised expression; none is built: an agent's search reads that agent's rows through the ``user_id`` b-tree
  (the planner's choice, checked with EXPLAIN, at 1,000 rows per agent even when the table holds only 10 agents),
  so the index was never used and made every write about four times slower (bench/agents_quantization.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import qdrant_edge as qe

from .turn_vectors import _collect_own
from .vector_filters import TENANT_FIELD, Condition, batched
from .vectors_edge import EdgeVectorStore, _edge_filter

log = logging.getLogger("lumina.agents.vectors")

MODES = ("none", "scalar", "binary")
ITEM_FIELD = "item_id"  # the layer's id (event, record or shared memory id): ``among`` filters on it
# Candidates per result scored with the original vectors: one bit per dimension loses more order than eight.
OVERSAMPLING = {"scalar": 2.0, "binary": 4.0}
_RETRIEVE_BATCH = 1_000


# --- qdrant-edge -------------------------------------------------------------------------------------
class AgentLayer:
    """What stores.agent_vectors asks of a layer's adapter, public: the adapters' own steps under their names."""

    def require_open(self) -> None:
        self._require_open()

    def write_prepared(self, points) -> None:
        self._write_all(points)

    def query(self, vector, conditions, limit, fields=None):
        return self._query(vector, conditions, limit, fields)

    def vectors_by_point(self, user_id: str, point_ids: list[str]) -> dict[str, np.ndarray]:
        return self._vectors_by_point(user_id, point_ids)


def _edge_quantization(mode: str) -> Any:
    if mode == "scalar":
        return qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, quantile=0.99, always_ram=True)
    if mode == "binary":
        return qe.BinaryQuantizationConfig(always_ram=True)
    return None


def _edge_params(mode: str) -> qe.SearchParams:
    if mode == "none":
        return qe.SearchParams(quantization=qe.QuantizationSearchParams(ignore=True))
    return qe.SearchParams(quantization=qe.QuantizationSearchParams(rescore=True, oversampling=OVERSAMPLING[mode]))


class EdgeAgentVectors(AgentLayer, EdgeVectorStore):
    """Agent points on a qdrant-edge shard."""

    requested = "none"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.quantization = self.requested  # read by _config while the shard opens
        super().__init__(*args, **kwargs)

    def _config(self) -> qe.EdgeConfig:
        base = super()._config()
        quantization = _edge_quantization(self.quantization)
        if quantization is None:
            return base
        return qe.EdgeConfig(vectors=base.vectors, hnsw_config=base.hnsw_config, optimizers=base.optimizers,
                             quantization_config=quantization)

    def _ensure_indexes(self, shard: qe.EdgeShard | None = None) -> None:
        super()._ensure_indexes(shard)
        shard = shard or self._shard
        if ITEM_FIELD not in set(shard.info().payload_schema):
            shard.update(qe.UpdateOperation.create_field_index(ITEM_FIELD, qe.PayloadSchemaType.Keyword))

    def _requests(self, vectors: list[list[float]], conditions: list[Condition], limits: list[int],
                  fields: Sequence[str] | None) -> list[qe.QueryRequest]:
        flt, params = _edge_filter(conditions), _edge_params(self.quantization)
        payload = True if fields is None else list(fields)
        return [qe.QueryRequest(limit=limit, query=qe.Query.Nearest(v), filter=flt, with_payload=payload,
                                params=params) for v, limit in zip(vectors, limits)]

    def _query(self, vector, conditions, limit, fields=None):
        [request] = self._requests([vector], conditions, [limit], fields)
        return [(str(p.id), float(p.score), dict(p.payload or {})) for p in self._shard.query(request)]

    def _query_many(self, vectors, conditions, limits, fields):
        found = self._shard.query_batch(qe.QueryBatchRequest(self._requests(vectors, conditions, limits, fields)))
        return [[(str(p.id), float(p.score), dict(p.payload or {})) for p in points] for points in found]

    def _vectors_by_point(self, user_id: str, point_ids: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for chunk in batched(point_ids, _RETRIEVE_BATCH):
            records = self._shard.retrieve(list(chunk), with_payload=[TENANT_FIELD], with_vector=True)
            _collect_own(records, user_id, {pid: pid for pid in chunk}, out)
        return out


# --- Qdrant (server, or qdrant-client's local mode) ------------------------------------------------------
def client_agent_vectors():
    """The qdrant-client class (imported on demand: the embedded default never loads qdrant-client)."""
    from qdrant_client import models

    from .vectors_client import ClientVectorStore, _client_filter

    def quantization_config(mode: str) -> Any:
        if mode == "scalar":
            return models.ScalarQuantization(scalar=models.ScalarQuantizationConfig(
                type=models.ScalarType.INT8, quantile=0.99, always_ram=True))
        return models.BinaryQuantization(binary=models.BinaryQuantizationConfig(always_ram=True))

    class ClientAgentVectors(AgentLayer, ClientVectorStore):
        """Agent points on a Qdrant server (quantised as asked) or in qdrant-client's local mode (never)."""

        requested = "none"

        def _ensure_collection(self) -> None:
            super()._ensure_collection()
            self.quantization = "none" if self._local else self.requested
            if self._local:
                return  # local mode ignores payload indexes and quantisation
            if ITEM_FIELD not in set(self._client.get_collection(self.collection).payload_schema or {}):
                self._client.create_payload_index(self.collection, ITEM_FIELD, models.PayloadSchemaType.KEYWORD,
                                                  wait=True)
            if self.quantization != "none":
                self._client.update_collection(self.collection,
                                               quantization_config=quantization_config(self.quantization))

        def _params(self) -> Any:
            if self._local:
                return None
            if self.quantization == "none":
                # A collection quantised before keeps its quantised copies: searched without them.
                return models.SearchParams(quantization=models.QuantizationSearchParams(ignore=True))
            return models.SearchParams(quantization=models.QuantizationSearchParams(
                rescore=True, oversampling=OVERSAMPLING[self.quantization]))

        def _query(self, vector, conditions, limit, fields=None):
            with self._guard("search"):
                result = self._client.query_points(
                    self.collection, query=vector, query_filter=_client_filter(conditions), limit=limit,
                    with_payload=True if fields is None else list(fields), search_params=self._params())
            return [(str(p.id), float(p.score), dict(p.payload or {})) for p in result.points]

        def _query_many(self, vectors, conditions, limits, fields):
            return [self._query(v, conditions, limit, fields) for v, limit in zip(vectors, limits)]

        def _vectors_by_point(self, user_id: str, point_ids: list[str]) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            for chunk in batched(point_ids, _RETRIEVE_BATCH):
                with self._guard("get"):
                    records = self._client.retrieve(
                        self.collection, ids=list(chunk), with_vectors=True,
                        with_payload=models.PayloadSelectorInclude(include=[TENANT_FIELD]))
                _collect_own(records, user_id, {pid: pid for pid in chunk}, out)
            return out

    return ClientAgentVectors


# --- pgvector ------------------------------------------------------------------------------------------
def pg_agent_vectors():
    """The pgvector class (imported on demand: the embedded default never loads psycopg)."""
    from .vectors_pg import PgVectorStore, _hits
    from .vectors_pg_sql import _Params, _payload_sql, _where

    def quantised(mode: str, dim: int, value: str) -> str:
        """The quantised form of a vector expression, written as the index is (the planner matches it textually)."""
        if mode == "scalar":
            return f"(({value})::halfvec({dim}))"
        return f"(binary_quantize({value})::bit({dim}))"

    class PgAgentVectors(AgentLayer, PgVectorStore):
        """Agent points in a pgvector table; a quantised mode picks candidates by the quantised distance."""

        requested = "none"

        def _ensure_collection(self) -> None:
            super()._ensure_collection()
            self.quantization = self.requested

        def _quantised_sql(self, conditions: list[Condition], fields: Sequence[str] | None) -> tuple[str, _Params]:
            p = _Params()
            payload = _payload_sql(fields, p)
            near = quantised(self.quantization, self.dim, "embedding")
            query = quantised(self.quantization, self.dim, "%(q)s::vector")
            distance = "<=>" if self.quantization == "scalar" else "<~>"
            sql = (f"SELECT id, 1 - (embedding <=> %(q)s), {payload} FROM ("
                   f"SELECT id, embedding, payload FROM {self.table} WHERE {_where(conditions, p)} "
                   f"ORDER BY {near} {distance} {query} LIMIT %(c)s) AS candidates "
                   "ORDER BY embedding <=> %(q)s LIMIT %(k)s")
            return sql, p

        def _query_many(self, vectors, conditions, limits, fields):
            if self.quantization == "none" or not vectors:
                return super()._query_many(vectors, conditions, limits, fields)
            sql, p = self._quantised_sql(conditions, fields)
            wide = [max(k, int(np.ceil(k * OVERSAMPLING[self.quantization]))) for k in limits]
            with self._con("search") as con, self._wide_scan(con, max(wide)):
                out = [_hits(con.execute(sql, {**p.values, "q": np.asarray(v, dtype=np.float32), "k": k, "c": c})
                             .fetchall()) for v, k, c in zip(vectors, limits, wide)]
            short = [i for i, hits in enumerate(out) if len(hits) < limits[i]]
            if short:
                # The quantised scan gave up early: these searches are answered on the full vectors.
                exact = super()._query_many([vectors[i] for i in short], conditions, [limits[i] for i in short], fields)
                for i, hits in zip(short, exact):
                    out[i] = hits
            return out

        def _vectors_by_point(self, user_id: str, point_ids: list[str]) -> dict[str, np.ndarray]:
            return self.vectors_by_id(user_id, point_ids)

    return PgAgentVectors


def log_mode(collection: str, backend: str, requested: str, in_effect: str) -> None:
    """One log line naming the quantisation a collection runs with (a warning when it is not the one asked)."""
    if requested != in_effect:
        log.warning("agent vectors %s on %s: quantization %r asked, %r in effect (the engine has none)",
                    collection, backend, requested, in_effect)
    else:
        log.info("agent vectors %s on %s: quantization %r", collection, backend, in_effect)
