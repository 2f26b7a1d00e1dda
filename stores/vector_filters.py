"""What the two vector adapters share: validation, the filter vocabulary, batching and the public methods.

``EdgeVectorStore`` (qdrant-edge, in-process) and ``ClientVectorStore`` (qdrant-client) differ only in how they
talk to the engine. Everything that decides *what* is written or returned lives here, once, so the two can
never drift apart: a record is validated the same way, a search is always scoped to one user, and a hit looks
the same whichever engine produced it. Each adapter implements five small engine primitives (``_write``,
``_query``, ``_retrieve``, ``_count``, ``_delete``) on neutral conditions (``Match``, ``AtMost``), plus
``_patch`` for the lifecycle's in-place changes (new vectors, merged payload fields). The vocabulary and the
checks (payload fields, conditions, point and id validation) are in stores.vector_points.
"""

from __future__ import annotations

import math

from abc import ABC, abstractmethod
from typing import Any, Iterator, Mapping, Sequence

from . import ids
from .errors import InvalidInput, StoreUnavailable
from .models import SegmentRecord, VectorHit
from .vector_points import (  # noqa: F401 - the adapters import these here
    AtMost, Condition, END_FIELD, HNSW_EF_CONSTRUCT, HNSW_M, HNSW_PAYLOAD_M, INDEXED_FIELDS, META_DIM, META_EMBEDDER, Match,
    Patch, PreparedPoint, SEGMENT_FIELD, T, TENANT_FIELD, TIER, _FILTER_CHUNK, _own_hits, _segment_map, _wanted,
    batched, check_embedder, check_fields, check_id_list, check_vector, embedder_metadata, point_row,
    prepare_points, user_conditions,
)


class VectorStoreBase(ABC):
    """The ``VectorStore`` protocol on top of five engine primitives supplied by each adapter."""

    backend: str
    collection: str
    dim: int
    embedder_name: str
    batch_size: int
    _closed: bool = False

    def _init_common(self, collection: str, dim: int, embedder_name: str, batch_size: int) -> None:
        self.collection = ids.validate_id(collection, "collection")
        if not isinstance(dim, int) or dim < 1:
            raise InvalidInput("dim", f"must be a positive integer, got {dim!r}")
        if not isinstance(embedder_name, str) or not embedder_name.strip():
            raise InvalidInput("embedder_name", "must be a non-empty string")
        if batch_size < 1:
            raise InvalidInput("batch_size", "must be at least 1")
        self.dim, self.embedder_name, self.batch_size = dim, embedder_name, batch_size

    # --- engine primitives ------------------------------------------------------------------------
    @abstractmethod
    def _write(self, points: Sequence[PreparedPoint]) -> None: ...

    def _write_all(self, points: Sequence[PreparedPoint]) -> None:
        """Write checked points in batches of ``batch_size``; an engine with transactions writes them at once."""
        for batch in batched(points, self.batch_size):
            self._write(batch)

    @abstractmethod
    def _query(
        self, vector: list[float], conditions: list[Condition], limit: int, fields: Sequence[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        """(point id, score, payload), best first; ``fields``: only these payload keys (None = all)."""

    @abstractmethod
    def _retrieve(self, point_ids: list[str], fields: Sequence[str] | None = None) -> list[tuple[str, dict]]:
        """(point id, payload) of the points that exist; ``fields``: only these payload keys (None = all)."""

    @abstractmethod
    def _count(self, conditions: list[Condition] | None) -> int: ...

    @abstractmethod
    def _delete(self, conditions: list[Condition]) -> None: ...

    @abstractmethod
    def _patch(self, patches: Sequence[Patch]) -> None:
        """Apply in-place changes to points that exist (the caller checked): vectors first, then fields."""

    def _optimize(self) -> bool:
        """Build the engine's vector index where it does not do so by itself; False when it does."""
        return False

    @abstractmethod
    def _release(self) -> None:
        """Flush and let go of the engine (files, locks, connections)."""

    @abstractmethod
    def _scroll(self, page: int = 1_000) -> Iterator[tuple[str, list[float], dict]]:
        """Every point as (id, vector, payload), in pages."""

    # --- whole collection: backups, and collections whose caller owns the payload schema ------------
    def points(self) -> Iterator[tuple[str, list[float], dict]]:
        """Every point of every user as (id, vector, payload), in pages (a backup copies the collection whole)."""
        self._require_open()
        return self._scroll()

    def write_points(self, points: Sequence[PreparedPoint]) -> int:
        """Write these points as they are (a restore; the LangGraph store's own points), all checked before
        any is written: a vector of the collection's dimension and a dict payload each; points written."""
        self._require_open()
        checked = []
        for i, p in enumerate(points):
            if not isinstance(p, PreparedPoint) or not isinstance(p.payload, dict):
                raise InvalidInput(f"points[{i}]", "must be a PreparedPoint with a dict payload")
            checked.append(PreparedPoint(p.point_id, check_vector(p.vector, self.dim, f"points[{i}].vector"), p.payload))
        self._write_all(checked)
        return len(checked)

    def search_where(self, vector: Sequence[float], conditions: Sequence[Condition], limit: int) -> list[tuple[str, float, dict]]:
        """(point id, score, payload) of the nearest points meeting every condition, best first. No user scope
        is added: for a collection whose caller scopes its own points (the LangGraph store, by namespace)."""
        self._require_open()
        query = check_vector(vector, self.dim, "vector")
        if not isinstance(limit, int) or limit < 0:
            raise InvalidInput("limit", f"must be a non-negative integer, got {limit!r}")
        return self._query(query, _conditions(conditions), limit) if limit else []

    def count_where(self, conditions: Sequence[Condition]) -> int:
        """Points meeting every condition (no user scope added, as for ``search_where``)."""
        self._require_open()
        return self._count(_conditions(conditions))

    def delete_where(self, conditions: Sequence[Condition]) -> int:
        """Remove the points meeting every condition (at least one: never the whole collection); points removed."""
        self._require_open()
        checked = _conditions(conditions)
        if not checked:
            raise InvalidInput("conditions", "at least one condition (delete_user or drop removes a whole tenant)")
        n = self._count(checked)
        if n:
            self._delete(checked)
        return n

    # --- the protocol -----------------------------------------------------------------------------
    def _require_open(self) -> None:
        if self._closed:
            raise StoreUnavailable(TIER, f"{type(self).__name__} for {self.collection!r} is closed")

    def upsert(self, records: Sequence[SegmentRecord]) -> None:
        self._require_open()
        self._write_all(prepare_points(records, self.dim))

    def search(
        self, user_id: str, vector: Sequence[float], limit: int, character: str | None = None,
        fields: Sequence[str] | None = None, *, max_level: int | None = None,
    ) -> list[VectorHit]:
        """``fields``: the payload keys the caller reads (the tenant key always comes too). A segment's
        payload holds its whole text; reading all of it for 40 hits cost ~0.3 ms of a ~1.5 ms warm search.
        ``max_level``: only memories at this level or below (a point without a level counts as 1)."""
        self._require_open()
        conditions = user_conditions(user_id, character, max_level)
        query = check_vector(vector, self.dim, "vector")
        if not isinstance(limit, int) or limit < 0:
            raise InvalidInput("limit", f"must be a non-negative integer, got {limit!r}")
        if limit == 0:
            return []
        return _own_hits(self._query(query, conditions, limit, _wanted(fields)), user_id)

    def search_many(
        self, user_id: str, vectors: Sequence[Sequence[float]], limits: Sequence[int], fields: Sequence[str] | None = None,
        *, max_level: int | None = None, ended_by: float | None = None,
    ) -> list[list[VectorHit]]:
        """``search(user_id, vectors[i], limits[i], fields=fields, max_level=max_level)`` for every i, in one
        engine call (a run's flush searches once per segment it closed; each call has a fixed cost).
        ``ended_by``: only segments whose ``end_ts`` is at or before it (a point without one is left out)."""
        self._require_open()
        if len(vectors) != len(limits):
            raise InvalidInput("limits", "one limit per vector")
        conditions = user_conditions(user_id, max_level=max_level)
        if ended_by is not None:
            if isinstance(ended_by, bool) or not isinstance(ended_by, (int, float)) or not math.isfinite(ended_by):
                raise InvalidInput("ended_by", f"must be a finite time or None, got {ended_by!r}")
            conditions.append(AtMost(END_FIELD, float(ended_by), math.inf))
        queries = [check_vector(v, self.dim, f"vectors[{i}]") for i, v in enumerate(vectors)]
        for limit in limits:
            if not isinstance(limit, int) or limit < 0:
                raise InvalidInput("limits", f"must be non-negative integers, got {limit!r}")
        asked = [i for i, limit in enumerate(limits) if limit > 0]
        found = self._query_many([queries[i] for i in asked], conditions, [limits[i] for i in asked], _wanted(fields)) if asked else []
        out: list[list[VectorHit]] = [[] for _ in vectors]
        for i, hits in zip(asked, found):
            out[i] = _own_hits(hits, user_id)
        return out

    def _query_many(
        self, vectors: list[list[float]], conditions: list[Condition], limits: list[int], fields: Sequence[str] | None
    ) -> list[list[tuple[str, float, dict]]]:
        """One ``_query`` per vector; engines with a batch call override this."""
        return [self._query(v, conditions, limit, fields) for v, limit in zip(vectors, limits)]

    def get(self, user_id: str, segment_ids: Sequence[str]) -> list[VectorHit]:
        """Stored points of this user's segments, in the order asked, missing ones left out (score 0.0)."""
        self._require_open()
        ids.validate_id(user_id, "user_id")
        wanted = list(dict.fromkeys(ids.validate_id(s, "segment_ids[]") for s in segment_ids))
        if not wanted:
            return []
        # Point ids are uuid5(user, segment): another user's segment of the same id has another point id.
        found = {pid: payload for pid, payload in self._retrieve([ids.point_id(user_id, s) for s in wanted])}
        hits = []
        for seg in wanted:
            payload = found.get(ids.point_id(user_id, seg))
            if payload is not None and payload.get(TENANT_FIELD) == user_id:
                hits.append(VectorHit(point_id=ids.point_id(user_id, seg), score=0.0, payload=payload))
        return hits

    def count(self, user_id: str | None = None) -> int:
        self._require_open()
        return self._count(None if user_id is None else user_conditions(user_id))

    def delete_user(self, user_id: str) -> int:
        self._require_open()
        conditions = user_conditions(user_id)
        n = self._count(conditions)
        if n:
            self._delete(conditions)
        return n

    # --- per-memory changes (the forgetting lifecycle, issue 17) ---------------------------------------
    def delete(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Remove these segments' points of this user; returns how many there were (0 for ids that are
        missing or another user's, so a second call returns 0)."""
        self._require_open()
        user = ids.validate_id(user_id, "user_id")
        return self._delete_matching(user, SEGMENT_FIELD, check_id_list(segment_ids, "segment_ids"))

    def delete_matching(self, user_id: str, field: str, values: Sequence[str]) -> int:
        """Remove this user's points whose payload ``field`` is one of ``values``; returns how many there were."""
        self._require_open()
        return self._delete_matching(ids.validate_id(user_id, "user_id"), field, check_id_list(values, "values"))

    def _delete_matching(self, user: str, key: str, values: list[str]) -> int:
        removed = 0
        for chunk in batched(values, _FILTER_CHUNK):
            conditions = [*user_conditions(user), Match(key, tuple(chunk))]
            n = self._count(conditions)
            if n:
                self._delete(conditions)
            removed += n
        return removed

    def set_payload(self, user_id: str, fields_by_segment: Mapping[str, Mapping[str, Any]]) -> int:
        """Merge fields (level, retention, protected, ...) into the payloads of this user's existing points,
        other fields kept; returns how many points changed. Missing or foreign segments are skipped."""
        self._require_open()
        user = ids.validate_id(user_id, "user_id")
        wanted = {seg: check_fields(fields, f"fields_by_segment[{seg}]")
                  for seg, fields in _segment_map(fields_by_segment, "fields_by_segment").items()}
        existing = self._existing(user, [seg for seg, fields in wanted.items() if fields])
        patches = [Patch(ids.point_id(user, seg), None, wanted[seg]) for seg in existing]
        for batch in batched(patches, self.batch_size):
            self._patch(batch)
        return len(patches)

    def replace_vector(
        self, user_id: str, vectors_by_segment: Mapping[str, Sequence[float]],
        fields_by_segment: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> int:
        """A new vector for this user's existing points (a memory re-embedded from its compressed text),
        their payload kept, plus ``fields_by_segment`` merged in; returns how many points changed.
        Every vector and field is checked before anything is written."""
        self._require_open()
        user = ids.validate_id(user_id, "user_id")
        vectors = {seg: check_vector(v, self.dim, f"vectors_by_segment[{seg}]")
                   for seg, v in _segment_map(vectors_by_segment, "vectors_by_segment").items()}
        fields = {seg: check_fields(f, f"fields_by_segment[{seg}]")
                  for seg, f in _segment_map(fields_by_segment or {}, "fields_by_segment").items()}
        stray = [seg for seg in fields if seg not in vectors]
        if stray:
            raise InvalidInput("fields_by_segment", f"{stray[0]!r} has no new vector; use set_payload for fields alone")
        existing = self._existing(user, list(vectors))
        patches = [Patch(ids.point_id(user, seg), vectors[seg], fields.get(seg, {})) for seg in existing]
        for batch in batched(patches, self.batch_size):
            self._patch(batch)
        return len(patches)

    def _existing(self, user: str, segment_ids: list[str]) -> list[str]:
        """The segments of ``segment_ids`` that have a point of this user, in the order given."""
        found: set[str] = set()
        for chunk in batched(segment_ids, _FILTER_CHUNK):
            pids = {ids.point_id(user, seg): seg for seg in chunk}
            for pid, payload in self._retrieve(list(pids), [TENANT_FIELD]):
                if payload.get(TENANT_FIELD) == user and pid in pids:
                    found.add(pids[pid])
        return [seg for seg in segment_ids if seg in found]

    def optimize(self) -> dict[str, Any]:
        """Index what has been written since the last call (qdrant-edge only indexes when asked; a Qdrant
        server does it in the background, so there this changes nothing). Until then new points are found
        by an exact scan of the user's points: correct, only slower. Synchronous and CPU-bound: run it after
        a bulk import or from a maintenance job (``lumina-memory optimize``), not inside a turn."""
        self._require_open()
        ran = self._optimize()
        return {"collection": self.collection, "backend": self.backend, "optimized": ran,
                "indexed_vectors": self.indexed_vectors()}

    def indexed_vectors(self) -> int | None:
        """Points inside the vector index (the rest are scanned); None when the engine does not say."""
        return None

    def unindexed(self) -> int | None:
        """Points an ``optimize()`` could still index (they are scanned exactly until then); None when the
        engine indexes by itself (a Qdrant server)."""
        return None

    def info(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "embedder": self.embedder_name,
            "dim": self.dim,
            "points": self.count(),
            "backend": self.backend,
        }

    def close(self) -> None:
        """Idempotent; afterwards every call raises StoreUnavailable."""
        if not self._closed:
            self._closed = True
            self._release()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _conditions(conditions: Sequence[Condition]) -> list[Condition]:
    """The conditions as a list, each a ``Match`` or ``AtMost`` (anything else is refused, not ignored)."""
    out = list(conditions)
    for i, c in enumerate(out):
        if not isinstance(c, (Match, AtMost)):
            raise InvalidInput(f"conditions[{i}]", f"must be a Match or AtMost, got {type(c).__name__}")
    return out
