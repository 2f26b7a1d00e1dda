"""Long-term vectors on a Qdrant server (``QDRANT_URL``) through qdrant-client.

Also runs on qdrant-client's local mode (``QdrantClient(path=...)``), which is how the conformance suite
reaches it here: no Qdrant server binary is available on these machines. Local mode is far too slow for real
use (see STACK.md); the embedded default is ``EdgeVectorStore``.

The embedder name and dimension are stored as collection *metadata* (``create_collection(metadata=...)``,
returned by ``get_collection().config.metadata``), so the record travels with the collection: no side file, no
reserved point that searches would have to step around. A collection without that metadata (made by an older
server or by hand) is checked on its vector size and then adopted.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from . import file_swap
from .errors import DataDirLocked, EmbedderMismatch, LuminaError, StoreUnavailable
from .vector_filters import (
    HNSW_EF_CONSTRUCT,
    HNSW_M,
    HNSW_PAYLOAD_M,
    INDEXED_FIELDS,
    META_DIM,
    META_EMBEDDER,
    TENANT_FIELD,
    TIER,
    AtMost,
    Condition,
    Patch,
    PreparedPoint,
    VectorStoreBase,
    check_embedder,
    embedder_metadata,
    point_row,
)

try:  # grpc is a qdrant-client dependency, but only prefer_grpc=True clients raise its errors
    import grpc

    _RPC_ERRORS: tuple[type[BaseException], ...] = (grpc.RpcError,)
except ImportError:  # pragma: no cover
    _RPC_ERRORS = ()


def _client_condition(c: Condition) -> Any:
    if isinstance(c, AtMost):
        at_most = models.FieldCondition(key=c.key, range=models.Range(lte=float(c.limit)))
        if not c.missing_passes:
            return at_most
        # IsEmpty also matches a key that is null or []: none of them is a level, so all count as missing.
        return models.Filter(should=[at_most, models.IsEmptyCondition(is_empty=models.PayloadField(key=c.key))])
    match: Any = models.MatchValue(value=c.values[0]) if len(c.values) == 1 else models.MatchAny(any=list(c.values))
    return models.FieldCondition(key=c.key, match=match)


def _client_filter(conditions: list[Condition]) -> models.Filter:
    return models.Filter(must=[_client_condition(c) for c in conditions])


_SCHEMA_TYPES = {"keyword": models.PayloadSchemaType.KEYWORD, "float": models.PayloadSchemaType.FLOAT,
                 "integer": models.PayloadSchemaType.INTEGER}


def _index_schema(field: str, kind: str) -> Any:
    if field == TENANT_FIELD:
        return models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
    return _SCHEMA_TYPES[kind]


class ClientVectorStore(VectorStoreBase):
    """``VectorStore`` on a ``QdrantClient`` (server or local mode)."""

    backend = "qdrant"

    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dim: int,
        embedder_name: str,
        *,
        batch_size: int = 100,
        close_client: bool = True,
    ) -> None:
        """``close_client=False`` when the caller shares one client between several stores."""
        self._init_common(collection, dim, embedder_name, batch_size)
        self._client = client
        self._close_client = close_client
        opts = client.init_options
        self._local = opts.get("path") is not None or opts.get("location") == ":memory:"
        place = opts.get("path") or opts.get("url") or opts.get("location") or opts.get("host")
        self._where = f"Qdrant collection {self.collection!r} at {place}"
        try:
            with self._guard("open the collection"):
                self._ensure_collection()
            folder = self._collection_dir()
            if folder is not None:
                # A rewrite killed half-way is finished or undone, then one owed since a kill is redone.
                if file_swap.recover_pending(folder):
                    self._reload_collection(lambda: file_swap.recover(folder))
                if file_swap.rewrite_owed(folder):
                    self.rewrite()
        except BaseException:
            if close_client:
                client.close()
            raise

    @classmethod
    def from_url(
        cls,
        url: str,
        api_key: str | None,
        collection: str,
        dim: int,
        embedder_name: str,
        *,
        timeout: int = 10,
        batch_size: int = 100,
    ) -> "ClientVectorStore":
        """Production: a Qdrant server. Unreachable → StoreUnavailable on construction, not on first use."""
        # check_compatibility=False: its probe only warns; our constructor's first request reports instead.
        client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
        return cls(client, collection, dim, embedder_name, batch_size=batch_size)

    @classmethod
    def local(
        cls, path: Path | str, collection: str, dim: int, embedder_name: str, *, batch_size: int = 100
    ) -> "ClientVectorStore":
        """qdrant-client's local mode in ``path`` (tests; no server needed). One client per folder."""
        try:
            client = QdrantClient(path=str(path))
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise DataDirLocked(str(path), "another qdrant-client local instance") from exc
            raise
        return cls(client, collection, dim, embedder_name, batch_size=batch_size)

    # --- errors ---------------------------------------------------------------------------------------
    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Network and server-side failures become StoreUnavailable; bad requests stay what they are."""
        try:
            yield
        except LuminaError:
            raise
        except UnexpectedResponse as exc:
            if exc.status_code in (401, 403):
                detail = f"{action}: Qdrant refused the credentials (check QDRANT_API_KEY)"
                raise StoreUnavailable(TIER, detail) from exc
            if exc.status_code >= 500:
                raise StoreUnavailable(TIER, f"{action}: Qdrant answered {exc.status_code}") from exc
            raise
        except (ResponseHandlingException, httpx.TransportError, ConnectionError, TimeoutError) as exc:
            raise StoreUnavailable(TIER, f"{action}: cannot reach {self._where}: {exc}") from exc
        except _RPC_ERRORS as exc:
            raise StoreUnavailable(TIER, f"{action}: gRPC error from {self._where}: {exc}") from exc

    # --- opening ----------------------------------------------------------------------------------
    def _ensure_collection(self) -> None:
        name = self.collection
        if not self._client.collection_exists(name):
            try:
                self._client.create_collection(
                    name,
                    vectors_config=models.VectorParams(size=self.dim, distance=models.Distance.COSINE),
                    hnsw_config=models.HnswConfigDiff(m=HNSW_M, payload_m=HNSW_PAYLOAD_M, ef_construct=HNSW_EF_CONSTRUCT),
                    metadata=embedder_metadata(self.embedder_name, self.dim),
                )
            except UnexpectedResponse as exc:
                if exc.status_code != 409:  # 409: another process created it first; check it below
                    raise
        info = self._client.get_collection(name)
        stored = info.config.metadata or {}
        if META_EMBEDDER in stored or META_DIM in stored:
            check_embedder(stored, self._where, self.embedder_name, self.dim)
        else:
            self._adopt(info)
        if not self._local:
            # Local mode ignores payload indexes and warns on each; a server needs them for filtered search.
            existing = set(info.payload_schema or {})
            for field, kind in INDEXED_FIELDS:
                if field not in existing:
                    self._client.create_payload_index(name, field, _index_schema(field, kind), wait=True)

    def _adopt(self, info: models.CollectionInfo) -> None:
        vectors = info.config.params.vectors
        size = vectors.size if isinstance(vectors, models.VectorParams) else None
        if size != self.dim:
            raise EmbedderMismatch(
                f"{self._where} has no embedder record and its vectors are {size or 'named/multiple'}, "
                f"not a single {self.dim}-d vector for {self.embedder_name!r}. Use the collection named for "
                "this embedder (stores.ids.collection_name)."
            )
        self._client.update_collection(self.collection, metadata=embedder_metadata(self.embedder_name, self.dim))

    # --- engine primitives ------------------------------------------------------------------------
    def _write(self, points: Sequence[PreparedPoint]) -> None:
        batch = [models.PointStruct(id=p.point_id, vector=p.vector, payload=p.payload) for p in points]
        with self._guard("upsert"):
            self._client.upsert(self.collection, points=batch, wait=True)

    def _query(
        self, vector: list[float], conditions: list[Condition], limit: int, fields: Sequence[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        with self._guard("search"):
            result = self._client.query_points(
                self.collection, query=vector, query_filter=_client_filter(conditions), limit=limit,
                with_payload=True if fields is None else list(fields),
            )
        return [(str(p.id), float(p.score), dict(p.payload or {})) for p in result.points]

    def _query_many(
        self, vectors: list[list[float]], conditions: list[Condition], limits: list[int], fields: Sequence[str] | None
    ) -> list[list[tuple[str, float, dict]]]:
        flt = _client_filter(conditions)
        payload = True if fields is None else list(fields)
        requests = [models.QueryRequest(query=v, filter=flt, limit=limit, with_payload=payload)
                    for v, limit in zip(vectors, limits)]
        with self._guard("search"):
            results = self._client.query_batch_points(self.collection, requests=requests)
        return [[(str(p.id), float(p.score), dict(p.payload or {})) for p in r.points] for r in results]

    def _retrieve(self, point_ids: list[str], fields: Sequence[str] | None = None) -> list[tuple[str, dict]]:
        payload: Any = True if fields is None else models.PayloadSelectorInclude(include=list(fields))
        with self._guard("get"):
            records = self._client.retrieve(self.collection, ids=point_ids, with_payload=payload, with_vectors=False)
        return [(str(r.id), dict(r.payload or {})) for r in records]

    def _count(self, conditions: list[Condition] | None) -> int:
        flt = _client_filter(conditions) if conditions else None
        with self._guard("count"):
            return int(self._client.count(self.collection, count_filter=flt, exact=True).count)

    def _delete(self, conditions: list[Condition]) -> None:
        selector = models.FilterSelector(filter=_client_filter(conditions))
        with self._guard("delete"):
            self._client.delete(self.collection, points_selector=selector, wait=True)

    def _patch(self, patches: Sequence[Patch]) -> None:
        operations: list[Any] = []
        vectors = [models.PointVectors(id=p.point_id, vector=p.vector) for p in patches if p.vector is not None]
        if vectors:
            operations.append(models.UpdateVectorsOperation(update_vectors=models.UpdateVectors(points=vectors)))
        operations += [
            models.SetPayloadOperation(set_payload=models.SetPayload(payload=p.fields, points=[p.point_id]))
            for p in patches if p.fields
        ]
        if operations:  # one request, applied in order: vectors, then every point's fields
            with self._guard("update"):
                self._client.batch_update_points(self.collection, operations, wait=True)

    def _release(self) -> None:
        if self._close_client:
            self._client.close()  # local mode: persists and frees the folder lock for the next process

    # --- backups and erasure (L10, L11) -------------------------------------------------------------
    def _scroll(self, page: int = 1_000):
        """Every point as (id, vector, payload), in pages (backups, rewrite)."""
        offset = None
        while True:
            with self._guard("scroll"):
                records, offset = self._client.scroll(
                    self.collection, limit=page, offset=offset, with_payload=True, with_vectors=True)
            for r in records:
                yield point_row(r.id, r.vector, r.payload)
            if offset is None or not records:
                return

    def payloads(self, fields: Sequence[str], page: int = 2_000) -> Iterator[dict[str, Any]]:
        """These payload fields of every point, without vectors (maintenance counts)."""
        self._require_open()
        offset = None
        while True:
            with self._guard("scroll"):
                records, offset = self._client.scroll(
                    self.collection, limit=page, offset=offset, with_payload=list(fields), with_vectors=False)
            for r in records:
                yield dict(r.payload or {})
            if offset is None or not records:
                return

    def raw_paths(self) -> list[Path]:
        path = self._client.init_options.get("path")
        return [Path(path)] if path else []

    def _collection_dir(self) -> Path | None:
        """The folder local mode keeps this collection's SQLite file in; None on a server or in memory."""
        local = getattr(self._client, "_client", None)
        if not self._local or not getattr(local, "persistent", False):
            return None
        return Path(local._collection_path(self.collection))

    def _reload_collection(self, between: Callable[[], object]) -> None:
        """Close local mode's handle on this collection's files, run ``between``, and load the collection from
        its folder again (the same client object: a shared client keeps serving its other collections)."""
        from qdrant_client.local.local_collection import LocalCollection

        local = self._client._client
        live = local.collections[self.collection]
        live.close()
        try:
            between()
        finally:
            fresh = LocalCollection(live.config, str(self._collection_dir()),
                                    force_disable_check_same_thread=local.force_disable_check_same_thread)
            fresh.text_indexes = live.text_indexes
            local.collections[self.collection] = fresh

    def delete_user(self, user_id: str) -> int:
        folder = self._collection_dir() if not self._closed else None
        if folder is not None and self.count(user_id):
            # Before the delete: a kill between it and the erasure's rewrite leaves the user's payloads in
            # free pages of the SQLite file, and the next open must still rewrite it.
            file_swap.owe_rewrite(folder)
        return super().delete_user(user_id)

    def rewrite(self) -> None:
        """Local mode keeps deleted points' payloads in free pages of its SQLite file: the live points are
        written into a new collection folder built beside the live one, which stores.file_swap then switches
        in (L11), so a kill at any moment leaves the old folder or the new one, never neither. A Qdrant server
        reclaims deleted points itself (its optimizer rewrites segments), and memory mode has no files: nothing
        is done there."""
        self._require_open()
        folder = self._collection_dir()
        if folder is None:
            return
        from qdrant_client.local.local_collection import LocalCollection

        file_swap.owe_rewrite(folder)  # until the switch: a kill before it leaves the next open to redo this
        points = [models.PointStruct(id=pid, vector=vec, payload=payload) for pid, vec, payload in self._scroll()]
        live = self._client._client.collections[self.collection]
        built = LocalCollection(live.config, str(file_swap.staging(folder) / folder.name))
        try:
            for start in range(0, len(points), self.batch_size):
                built.upsert(points[start : start + self.batch_size])
        finally:
            built.close()
        self._reload_collection(lambda: file_swap.commit(folder))
