"""The vector tier's vocabulary: payload fields and their indexes, the neutral filter conditions the adapters
translate (``Match``, ``AtMost``), and the checks every point, id list, payload and embedder record passes
before an engine sees it (stores.vector_filters' VectorStoreBase and the other collections use them)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Mapping, Sequence, TypeVar, Union

import numpy as np

from . import ids
from .errors import EmbedderMismatch, InvalidInput
from .models import SegmentRecord, VectorHit

TIER = "long-term"

# Payload fields with an index, and its kind. user_id is the tenant key: every read filters on it.
IndexKind = Literal["keyword", "float", "integer"]
INDEXED_FIELDS: tuple[tuple[str, IndexKind], ...] = (
    ("user_id", "keyword"),
    ("characters", "keyword"),
    ("segment_id", "keyword"),
    ("end_ts", "float"),
    ("importance", "float"),
    ("level", "integer"),
)
TENANT_FIELD = "user_id"
SEGMENT_FIELD = "segment_id"

# A memory's compression level (issue 17): 1 full text ... 4 archived. Points written before the lifecycle
# existed carry no level and are full-strength memories, so a missing level counts as 1.
LEVEL_FIELD = "level"
END_FIELD = "end_ts"  # a segment point's last turn time (L5 links only to segments that ended before)
LEVELS: tuple[int, ...] = (1, 2, 3, 4)
MISSING_LEVEL = 1
# What names a point: changing these in place would move it to another user or segment under the same id.
IDENTITY_FIELDS = frozenset({TENANT_FIELD, SEGMENT_FIELD})
# Plain names only: a dot or bracket would be read as a nested path by the engines' filters and set_payload.
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_FILTER_CHUNK = 1_000  # ids per MatchAny condition

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
class AtMost:
    """One payload condition: numeric ``key`` <= ``limit``; a point without the key counts as ``missing``."""

    key: str
    limit: float
    missing: float

    @property
    def missing_passes(self) -> bool:
        return self.missing <= self.limit


Condition = Union[Match, AtMost]


@dataclass(frozen=True)
class Patch:
    """An in-place change of one existing point: a new vector (None: keep it) and payload fields to merge."""

    point_id: str
    vector: list[float] | None
    fields: dict[str, Any]


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


def user_conditions(user_id: str, character: str | None = None, max_level: int | None = None) -> list[Condition]:
    """The scope of every read: one user's points, optionally those a given character spoke in, and
    optionally only memories at ``max_level`` or below (priming leaves out archived ones, level 4)."""
    conditions: list[Condition] = [Match(TENANT_FIELD, (ids.validate_id(user_id, "user_id"),))]
    if character is not None:
        conditions.append(Match("characters", (ids.validate_id(character, "character"),)))
    if max_level is not None:
        if isinstance(max_level, bool) or not isinstance(max_level, int):
            raise InvalidInput("max_level", f"must be a whole number or None, got {max_level!r}")
        conditions.append(AtMost(LEVEL_FIELD, max_level, MISSING_LEVEL))
    return conditions


def check_fields(fields: object, where: str) -> dict[str, Any]:
    """Payload fields a caller may merge into existing points: plain names, not the point's identity,
    JSON values (no NaN: it would poison any ranking that reads them), ``level`` one of LEVELS."""
    if not isinstance(fields, Mapping):
        raise InvalidInput(where, f"must be a mapping of field name to value, got {type(fields).__name__}")
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if not isinstance(key, str) or not _FIELD_NAME.fullmatch(key):
            raise InvalidInput(where, f"field name {str(key)[:40]!r} is not allowed; use 1-64 letters, digits or _")
        if key in IDENTITY_FIELDS:
            raise InvalidInput(where, f"{key!r} names the point and cannot be changed in place")
        if key == LEVEL_FIELD and (isinstance(value, bool) or not isinstance(value, int) or value not in LEVELS):
            raise InvalidInput(where, f"level must be one of {list(LEVELS)}, got {value!r}")
        try:
            json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInput(where, f"{key!r} is not valid Unicode (lone surrogate at position {exc.start})") from None
        except (TypeError, ValueError) as exc:
            raise InvalidInput(where, f"{key!r} must be a JSON value without NaN or infinity ({exc})") from None
        out[key] = value
    return out


def check_id_list(values: object, field: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidInput(field, "must be a list of ids, not a single string")
    return list(dict.fromkeys(ids.validate_id(v, f"{field}[]") for v in values))


def _segment_map(values: object, field: str) -> Mapping[Any, Any]:
    if not isinstance(values, Mapping):
        raise InvalidInput(field, f"must be a mapping keyed by segment id, got {type(values).__name__}")
    for key in values:
        ids.validate_id(key, f"{field} key")
    return values


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
