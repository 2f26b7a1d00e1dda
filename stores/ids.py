"""The one place that validates ids and builds every id, Redis key, table and collection name.

Ids are deterministic (uuid5 of user, segment, turn), so replaying a transcript or retrying a step
rewrites the same records instead of adding new ones.
"""

from __future__ import annotations

import re
import uuid
from functools import lru_cache

from .errors import InvalidInput

NAMESPACE = uuid.UUID("6f1c8a52-3d0e-5b7a-9c41-4c756d696e61")  # fixed forever: ids depend on it

# Letters, digits and a few separators; must start with a letter or digit. Rejects "../x", quotes,
# spaces, braces and everything else a query language or a file system could read as syntax.
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")


def validate_id(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(field, "must be a non-empty string")
    if ".." in value or not _ID_RE.match(value):
        raise InvalidInput(
            field, f"{value[:40]!r} is not allowed; use 1-128 letters, digits or _ . : @ - (no '..')"
        )
    return value


# uuid5 is a SHA-1 and a UUID object per call; ingest asks for the same ids several times per turn
# (prefetch, ingest, archive, turn points, recall's index top-up). Pure functions of their strings.
_IDS_CACHED = 65_536


@lru_cache(maxsize=_IDS_CACHED)
def turn_id(user_id: str, source_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"turn|{user_id}|{source_id}"))


@lru_cache(maxsize=_IDS_CACHED)
def segment_id(user_id: str, first_turn_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"segment|{user_id}|{first_turn_id}"))


@lru_cache(maxsize=_IDS_CACHED)
def concept_id(user_id: str, keyword: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"concept|{user_id}|{keyword}"))


@lru_cache(maxsize=_IDS_CACHED)
def point_id(user_id: str, segment: str) -> str:
    """Qdrant point id of a segment (Qdrant accepts UUID strings)."""
    return str(uuid.uuid5(NAMESPACE, f"point|{user_id}|{segment}"))


# --- Redis -------------------------------------------------------------------------------------------
REDIS_PREFIX = "lumina"


def redis_segment_key(user_id: str, segment: str) -> str:
    return f"{REDIS_PREFIX}:{{{user_id}}}:seg:{segment}"


def redis_recent_key(user_id: str) -> str:
    """Sorted set of a user's segment ids scored by end time; hash-tagged so Redis Cluster keeps a
    user's keys in one slot (MULTI/pipelines stay valid)."""
    return f"{REDIS_PREFIX}:{{{user_id}}}:recent"


def redis_user_pattern(user_id: str) -> str:
    return f"{REDIS_PREFIX}:{{{user_id}}}:*"


# --- DuckDB ------------------------------------------------------------------------------------------
TURNS_TABLE = "turn_archive"
SEGMENTS_TABLE = "session_archive"  # the design notes' name for the archive of threads/segments
AUDIT_TABLE = "session_log"


# --- Qdrant ------------------------------------------------------------------------------------------
def collection_name(kind: str, embedder_name: str, dim: int) -> str:
    """One collection per embedder so vectors of different models never mix."""
    safe = re.sub(r"[^a-z0-9]+", "_", embedder_name.lower()).strip("_")
    return f"lumina_{kind}_{safe}_{dim}"
