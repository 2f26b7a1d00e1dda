"""Long-term vectors on qdrant-edge: the Qdrant engine in-process, one shard per directory.

Layout: ``path`` (``<data_dir>/qdrant/<collection>/``, as stores.factory passes it) is one edge shard (qdrant-edge's own ``wal/``, ``segments/``,
``edge_config.json``) plus ``lumina_collection.json``, our record of which embedder and dimension made it.
The shard's WAL is locked by the engine, so a second handle (this process or another) fails to open; that is
reported as DataDirLocked instead of the engine's raw "WouldBlock".
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator, Sequence

import qdrant_edge as qe

from . import file_swap
from .errors import DataDirLocked, EmbedderMismatch, StoreUnavailable
from .vector_filters import (
    HNSW_EF_CONSTRUCT,
    HNSW_M,
    HNSW_PAYLOAD_M,
    INDEXED_FIELDS,
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

META_FILE = "lumina_collection.json"


def _edge_condition(c: Condition) -> Any:
    if isinstance(c, AtMost):
        at_most = qe.FieldCondition(key=c.key, range=qe.RangeFloat(lte=float(c.limit)))
        # IsEmpty also matches a key that is null or []: none of them is a level, so all count as missing.
        return qe.Filter(should=[at_most, qe.IsEmptyCondition(c.key)]) if c.missing_passes else at_most
    # MatchValue on an array field (characters) matches when the array contains the value.
    match = qe.MatchValue(c.values[0]) if len(c.values) == 1 else qe.MatchAny(list(c.values))
    return qe.FieldCondition(key=c.key, match=match)


def _edge_filter(conditions: list[Condition]) -> qe.Filter:
    return qe.Filter(must=[_edge_condition(c) for c in conditions])


_SCHEMA_TYPES = {"keyword": qe.PayloadSchemaType.Keyword, "float": qe.PayloadSchemaType.Float,
                 "integer": qe.PayloadSchemaType.Integer}


def _index_schema(field: str, kind: str) -> Any:
    if field == TENANT_FIELD:
        # is_tenant lets the engine co-locate each user's points, which is what user-scoped search wants.
        return qe.KeywordIndexParams(is_tenant=True)
    return _SCHEMA_TYPES[kind]


class EdgeVectorStore(VectorStoreBase):
    """``VectorStore`` on the in-process qdrant-edge shard in directory ``path`` (created when missing).

    ``collection`` names it in info() and errors and is recorded beside the shard; it does not pick a
    subdirectory, so the caller decides the layout (stores.factory: ``<data_dir>/qdrant/<collection>``).
    """

    backend = "qdrant-edge"

    def __init__(
        self, path: Path, collection: str, dim: int, embedder_name: str, *, batch_size: int = 100,
        indexing_threshold_kb: int | None = None, full_scan_threshold_kb: int | None = None,
    ) -> None:
        """``indexing_threshold_kb``: a segment of the shard bigger than this gets a vector index at the
        next ``optimize()``; ``full_scan_threshold_kb``: a user whose vectors take less than this is
        scanned exactly even when indexed. None = the engine's defaults (10,000 KB each: ~5,000 vectors
        at 512-d)."""
        self._init_common(collection, dim, embedder_name, batch_size)
        self._indexing_threshold_kb, self._full_scan_threshold_kb = indexing_threshold_kb, full_scan_threshold_kb
        self.shard_dir = Path(path).expanduser().resolve()
        self._meta_path = self.shard_dir / META_FILE
        # A rewrite killed half-way is finished or undone before the engine opens the shard.
        file_swap.recover(self.shard_dir)
        self._shard = self._open()
        try:
            self._ensure_indexes()
            if file_swap.rewrite_owed(self.shard_dir):
                # A process died between deleting a user's points and rewriting the shard: their bytes
                # are still in the WAL and payload pages.
                self.rewrite()
        except BaseException:
            self._shard.close()  # do not keep the WAL lock of a store the caller never got
            raise

    # --- opening ----------------------------------------------------------------------------------
    def _config(self) -> qe.EdgeConfig:
        # Given on every open: a shard made before these settings adopts them (the engine persists what
        # it is given) and indexes accordingly at its next optimize().
        hnsw = qe.HnswIndexConfig(
            m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT, payload_m=HNSW_PAYLOAD_M,
            full_scan_threshold=self._full_scan_threshold_kb if self._full_scan_threshold_kb is not None else 10_000,
        )
        optimizers = (qe.EdgeOptimizersConfig(indexing_threshold=self._indexing_threshold_kb)
                      if self._indexing_threshold_kb is not None else None)
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=self.dim, distance=qe.Distance.Cosine), hnsw_config=hnsw,
            optimizers=optimizers,
        )

    def _open(self) -> qe.EdgeShard:
        config = self._config()
        stored = self._read_meta()
        if stored is not None:
            # Checked before the engine opens anything, so a mismatch never touches the shard.
            where = f"qdrant-edge collection {self.collection!r} at {self.shard_dir}"
            check_embedder(stored, where, self.embedder_name, self.dim)
        # Our own files (the record and its temp file) do not make a shard.
        has_shard = self.shard_dir.is_dir() and any(
            not p.name.startswith(META_FILE) for p in self.shard_dir.iterdir()
        )
        try:
            if has_shard:
                # Passing the config makes the engine verify vector size and distance against the segments;
                # that is the only check for a shard written before our metadata file existed.
                shard = qe.EdgeShard.load(str(self.shard_dir), config)
            else:
                # Metadata first: a shard then never exists without its embedder record.
                self.shard_dir.mkdir(parents=True, exist_ok=True)
                self._write_meta()
                shard = qe.EdgeShard.create(str(self.shard_dir), config)
        except Exception as exc:  # the engine raises plain Exception; sort by its message
            raise self._translate_open_error(exc) from exc
        if stored is None and has_shard:
            self._write_meta()  # adopting a shard without a record (e.g. crash right after create)
        return shard

    def _translate_open_error(self, exc: Exception) -> Exception:
        text = str(exc)
        if "WouldBlock" in text or "failed to open WAL" in text:
            return DataDirLocked(
                str(self.shard_dir), "another open qdrant-edge handle on this shard (this or another process)"
            )
        if "incompatible" in text.lower():
            return EmbedderMismatch(
                f"qdrant-edge shard {self.shard_dir} does not fit {self.embedder_name!r} ({self.dim}-d, cosine): "
                f"{text}. Use the collection named for this embedder or re-embed into a new one."
            )
        return StoreUnavailable(TIER, f"cannot open qdrant-edge shard {self.shard_dir}: {text}")

    def _read_meta(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self._meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreUnavailable(TIER, f"unreadable {self._meta_path}: {exc}") from exc
        return data if isinstance(data, dict) else {}

    def _write_meta(self, meta_path: Path | None = None) -> None:
        # Write-then-rename so a crash leaves the old file or the new one, never half of one.
        meta_path = meta_path or self._meta_path
        tmp = meta_path.with_suffix(".json.tmp")
        record = {"collection": self.collection, **embedder_metadata(self.embedder_name, self.dim)}
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, meta_path)

    def _ensure_indexes(self, shard: qe.EdgeShard | None = None) -> None:
        # Also on reopen: a shard made by an older version gets the indexes it lacks.
        shard = shard or self._shard
        existing = set(shard.info().payload_schema)
        for field, kind in INDEXED_FIELDS:
            if field not in existing:
                shard.update(qe.UpdateOperation.create_field_index(field, _index_schema(field, kind)))

    # --- engine primitives ------------------------------------------------------------------------
    def _write(self, points: Sequence[PreparedPoint]) -> None:
        batch = [qe.Point(p.point_id, p.vector, p.payload) for p in points]
        self._shard.update(qe.UpdateOperation.upsert_points(batch))

    def _query(
        self, vector: list[float], conditions: list[Condition], limit: int, fields: Sequence[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        request = qe.QueryRequest(
            limit=limit, query=qe.Query.Nearest(vector), filter=_edge_filter(conditions),
            with_payload=True if fields is None else list(fields),
        )
        # Ids come back as uuid.UUID; the protocol speaks strings.
        return [(str(p.id), float(p.score), dict(p.payload or {})) for p in self._shard.query(request)]

    def _query_many(
        self, vectors: list[list[float]], conditions: list[Condition], limits: list[int], fields: Sequence[str] | None
    ) -> list[list[tuple[str, float, dict]]]:
        flt = _edge_filter(conditions)
        payload = True if fields is None else list(fields)
        requests = [qe.QueryRequest(limit=limit, query=qe.Query.Nearest(v), filter=flt, with_payload=payload)
                    for v, limit in zip(vectors, limits)]
        # One call: the shard searches on its own thread pool, and each call pays a hand-off to it.
        return [[(str(p.id), float(p.score), dict(p.payload or {})) for p in points]
                for points in self._shard.query_batch(qe.QueryBatchRequest(requests))]

    def _retrieve(self, point_ids: list[str], fields: Sequence[str] | None = None) -> list[tuple[str, dict]]:
        # with_vector must be passed: the binding rejects a call without it, despite the stub's default.
        payload = True if fields is None else list(fields)
        records = self._shard.retrieve(point_ids, with_payload=payload, with_vector=False)
        return [(str(r.id), dict(r.payload or {})) for r in records]

    def _count(self, conditions: list[Condition] | None) -> int:
        flt = _edge_filter(conditions) if conditions else None
        return int(self._shard.count(qe.CountRequest(exact=True, filter=flt)))

    def _delete(self, conditions: list[Condition]) -> None:
        self._shard.update(qe.UpdateOperation.delete_points_by_filter(_edge_filter(conditions)))

    def _patch(self, patches: Sequence[Patch]) -> None:
        vectors = [qe.PointVectors(p.point_id, p.vector) for p in patches if p.vector is not None]
        if vectors:
            self._shard.update(qe.UpdateOperation.update_vectors(vectors))
        # The shard takes one payload per set_payload operation; the same fields (a level many memories
        # moved to) go to all their points in one.
        by_fields: dict[str, list[str]] = defaultdict(list)
        for p in patches:
            if p.fields:
                by_fields[json.dumps(p.fields, sort_keys=True)].append(p.point_id)
        for fields, point_ids in by_fields.items():
            self._shard.update(qe.UpdateOperation.set_payload(point_ids, json.loads(fields)))

    def _optimize(self) -> bool:
        self._shard.optimize()
        return True

    def indexed_vectors(self) -> int | None:
        return int(self._shard.info().indexed_vectors_count)

    def unindexed(self) -> int | None:
        self._require_open()
        info = self._shard.info()
        return max(0, int(info.points_count) - int(info.indexed_vectors_count))

    def _release(self) -> None:
        try:
            self._shard.flush()
        finally:
            self._shard.close()  # releases the WAL lock so a later process can open the shard

    # --- backups and erasure (L10, L11) -------------------------------------------------------------
    def _scroll(self, page: int = 1_000):
        """Every point as (id, vector, payload), in pages (backups, rewrite)."""
        offset = None
        while True:
            records, offset = self._shard.scroll(
                qe.ScrollRequest(offset=offset, limit=page, with_payload=True, with_vector=True))
            for r in records:
                yield point_row(r.id, r.vector, r.payload)
            if offset is None or not records:
                return

    def payloads(self, fields: Sequence[str], page: int = 2_000) -> Iterator[dict[str, Any]]:
        """These payload fields of every point, without vectors (maintenance counts)."""
        self._require_open()
        offset = None
        while True:
            records, offset = self._shard.scroll(
                qe.ScrollRequest(offset=offset, limit=page, with_payload=list(fields), with_vector=False))
            for r in records:
                yield dict(r.payload or {})
            if offset is None or not records:
                return

    def raw_paths(self) -> list[Path]:
        return [self.shard_dir]

    def delete_user(self, user_id: str) -> int:
        # Owed before the delete: a kill between the delete and the erasure's rewrite leaves the user's
        # bytes in the WAL, and the next open must still rewrite the shard (see __init__).
        self._require_open()
        if self.count(user_id):
            file_swap.owe_rewrite(self.shard_dir)
        return super().delete_user(user_id)

    def rewrite(self) -> None:
        """Rebuild the shard from its live points (L11): deleted points stay in the engine's WAL and
        payload pages until then. The new shard is built complete beside the live one and switched in by
        stores.file_swap, so a kill at any moment leaves the old shard or the new one."""
        self._require_open()
        file_swap.owe_rewrite(self.shard_dir)  # until the switch: a kill before it leaves the next open to redo this
        points = [PreparedPoint(pid, vec, payload) for pid, vec, payload in self._scroll()]
        self._shard.flush()
        fresh = file_swap.staging(self.shard_dir) / self.shard_dir.name
        fresh.mkdir(mode=0o700)
        self._write_meta(fresh / META_FILE)
        try:
            shard = qe.EdgeShard.create(str(fresh), self._config())
        except Exception as exc:  # the engine raises plain Exception
            raise self._translate_open_error(exc) from exc
        try:
            self._ensure_indexes(shard)
            for start in range(0, len(points), self.batch_size):
                batch = points[start : start + self.batch_size]
                shard.update(qe.UpdateOperation.upsert_points([qe.Point(p.point_id, p.vector, p.payload) for p in batch]))
            shard.flush()
        finally:
            shard.close()
        self._shard.close()
        try:
            file_swap.commit(self.shard_dir)
        finally:
            self._shard = self._open()  # the new shard, or the old one if the switch failed
