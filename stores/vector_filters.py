"""What the two vector adapters share: validation, the filter vocabulary, batching and the public methods.

``EdgeVectorStore`` (qdrant-edge, in-process) and ``ClientVectorStore`` (qdrant-client) differ only in how they
talk to the engine. Everything that decides *what* is written or returned lives here, once, so the two can
never drift apart: a record is validated the same way, a search is always scoped to one user, and a hit looks
the same whichever engine produced it. Each adapter implements five small engine primitives (``_write``,
``_query``, ``_retrieve``, ``_count``, ``_delete``) on neutral ``Match`` conditions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Mapping, Sequence, TypeVar

import numpy as np

from . import ids
from .errors import EmbedderMismatch, InvalidInput, StoreUnavailable
from .models import SegmentRecord, VectorHit

TIER = "long-term"

# Payload fields with an index, and its kind. user_id is the tenant key: every read filters on it.
IndexKind = Literal["keyword", "float"]
INDEXED_FIELDS: tuple[tuple[str, IndexKind], ...] = (
    ("user_id", "keyword"),
    ("characters", "keyword"),
    ("segment_id", "keyword"),
    ("end_ts", "float"),
    ("importance", "float"),
)
TENANT_FIELD = "user_id"

# The vector index, built per tenant: every search filters on one user, so a graph over all users' points
# (m) would only be walked through a 1 % filter; payload_m builds one small graph per user_id value
# instead (Qdrant's multitenancy setting). A search with no user filter, which recall never makes, scans.
HNSW_M = 0
HNSW_PAYLOAD_M = 16
HNSW_EF_CONSTRUCT = 100

# Keys of the embedder record (a JSON file beside an edge shard, collection metadata on a Qdrant server).
# Prefixed so they cannot clash with metadata other tools put on a shared server.
META_EMBEDDER = "lumina_embedder"
META_DIM = "lumina_dim"
META_DISTANCE = "lumina_distance"

T = TypeVar("T")


@dataclass(frozen=True)
class Match:
    """One payload condition: ``key`` equals (or, for an array field, contains) any of ``values``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class PreparedPoint:
    point_id: str
    vector: list[float]
    payload: dict[str, Any]


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def check_vector(vector: Sequence[float], dim: int, field: str) -> list[float]:
    """A plain list of ``dim`` finite floats with a non-zero norm, or InvalidInput naming ``field``.

    The engines accept NaN and all-zero vectors silently (cosine then yields NaN scores that poison ranking),
    so they are rejected here, before anything is written.
    """
    try:
        # numpy checks 512 floats in microseconds; a Python loop over them showed up in ingest profiles
        arr = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(field, f"must be a sequence of numbers ({exc})") from None
    if arr.ndim != 1:
        raise InvalidInput(field, f"must be a flat sequence of numbers, got shape {arr.shape}")
    if arr.shape[0] != dim:
        raise InvalidInput(
            field,
            f"has {arr.shape[0]} dimensions but this collection holds {dim}-d vectors; "
            "embed with the collection's embedder",
        )
    if not np.isfinite(arr).all():
        raise InvalidInput(field, "contains NaN or infinity")
    if not arr.any():
        raise InvalidInput(field, "is all zeros; cosine similarity is undefined for it")
    values = arr.tolist()
    return values


def _wanted(fields: Sequence[str] | None) -> list[str] | None:
    """The payload keys to read: ``fields`` and always the tenant key (None: the whole payload)."""
    return None if fields is None else list(dict.fromkeys([TENANT_FIELD, *fields]))


def _own_hits(hits: Sequence[tuple[str, float, dict]], user_id: str) -> list[VectorHit]:
    # The filter already scopes to the user; checking again costs nothing and makes a leak impossible.
    return [VectorHit(point_id=p, score=s, payload=pl) for p, s, pl in hits if pl.get(TENANT_FIELD) == user_id]


def point_row(point_id: object, vector: object, payload: object) -> tuple[str, list[float], dict]:
    """A scrolled point as (id, vector, payload) whatever the engine returned (a named-vector dict, None):
    the one shape backups and shard rewrites read."""
    if isinstance(vector, dict):
        vector = next(iter(vector.values()), None)
    return str(point_id), [float(x) for x in (vector or [])], dict(payload or {})


def prepare_points(records: Sequence[SegmentRecord], dim: int) -> list[PreparedPoint]:
    """Validate every record first, so a bad one in a batch writes nothing at all."""
    by_id: dict[str, PreparedPoint] = {}
    for i, record in enumerate(records):
        user_id = ids.validate_id(record.user_id, f"records[{i}].user_id")
        segment_id = ids.validate_id(record.segment_id, f"records[{i}].segment_id")
        vector = check_vector(record.embedding, dim, f"records[{i}].embedding")
        pid = ids.point_id(user_id, segment_id)
        # The same segment twice in one call: the last one wins, as a second upsert call would.
        by_id[pid] = PreparedPoint(pid, vector, record.payload())
    return list(by_id.values())


def user_conditions(user_id: str, character: str | None = None) -> list[Match]:
    """The scope of every read: one user's points, optionally those a given character spoke in."""
    conditions = [Match(TENANT_FIELD, (ids.validate_id(user_id, "user_id"),))]
    if character is not None:
        conditions.append(Match("characters", (ids.validate_id(character, "character"),)))
    return conditions


def embedder_metadata(embedder_name: str, dim: int) -> dict[str, Any]:
    return {META_EMBEDDER: embedder_name, META_DIM: dim, META_DISTANCE: "cosine"}


def check_embedder(stored: Mapping[str, Any], where: str, embedder_name: str, dim: int) -> None:
    """Raise EmbedderMismatch when ``stored`` records another model or dimension than the caller's."""
    found_name, found_dim = stored.get(META_EMBEDDER), stored.get(META_DIM)
    if found_name != embedder_name or found_dim != dim:
        raise EmbedderMismatch(
            f"{where} was created with embedder {found_name!r} ({found_dim}-d) but is being opened with "
            f"{embedder_name!r} ({dim}-d). Vectors of different models must not mix: use the collection "
            "named for this embedder (stores.ids.collection_name) or re-embed into a new collection."
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

    @abstractmethod
    def _query(
        self, vector: list[float], conditions: list[Match], limit: int, fields: Sequence[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        """(point id, score, payload), best first; ``fields``: only these payload keys (None = all)."""

    @abstractmethod
    def _retrieve(self, point_ids: list[str]) -> list[tuple[str, dict]]: ...

    @abstractmethod
    def _count(self, conditions: list[Match] | None) -> int: ...

    @abstractmethod
    def _delete(self, conditions: list[Match]) -> None: ...

    def _optimize(self) -> bool:
        """Build the engine's vector index where it does not do so by itself; False when it does."""
        return False

    @abstractmethod
    def _release(self) -> None:
        """Flush and let go of the engine (files, locks, connections)."""

    # --- the protocol -----------------------------------------------------------------------------
    def _require_open(self) -> None:
        if self._closed:
            raise StoreUnavailable(TIER, f"{type(self).__name__} for {self.collection!r} is closed")

    def upsert(self, records: Sequence[SegmentRecord]) -> None:
        self._require_open()
        points = prepare_points(records, self.dim)
        for batch in batched(points, self.batch_size):
            self._write(batch)

    def search(
        self, user_id: str, vector: Sequence[float], limit: int, character: str | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """``fields``: the payload keys the caller reads (the tenant key always comes too). A segment's
        payload holds its whole text; reading all of it for 40 hits cost ~0.3 ms of a ~1.5 ms warm search."""
        self._require_open()
        conditions = user_conditions(user_id, character)
        query = check_vector(vector, self.dim, "vector")
        if not isinstance(limit, int) or limit < 0:
            raise InvalidInput("limit", f"must be a non-negative integer, got {limit!r}")
        if limit == 0:
            return []
        return _own_hits(self._query(query, conditions, limit, _wanted(fields)), user_id)

    def search_many(
        self, user_id: str, vectors: Sequence[Sequence[float]], limits: Sequence[int], fields: Sequence[str] | None = None
    ) -> list[list[VectorHit]]:
        """``search(user_id, vectors[i], limits[i], fields=fields)`` for every i, in one engine call
        (a run's flush searches once per segment it closed; each call has a fixed cost)."""
        self._require_open()
        if len(vectors) != len(limits):
            raise InvalidInput("limits", "one limit per vector")
        conditions = user_conditions(user_id)
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
        self, vectors: list[list[float]], conditions: list[Match], limits: list[int], fields: Sequence[str] | None
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
