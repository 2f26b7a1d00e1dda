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
# fullmatch, never `$`: `$` also matches before a final newline, so "alice\n" would pass as another user.
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")


def validate_id(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(field, "must be a non-empty string")
    if ".." in value or not _ID_RE.fullmatch(value):
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


def user_file_stem(user_id: str) -> str:
    """A user's file name stem in the data dir (activity log, journals): a hash, so no file name is a
    user id (ids may be look-alikes or sensitive, and file systems fold case)."""
    return "u-" + uuid.uuid5(NAMESPACE, f"user-file|{user_id}").hex[:24]


PART_MARK = ":part"


def part_source_id(parent: str, index: int) -> str:
    """Source id of part ``index`` (0-based) of a long message chunked under ``parent`` (S3); a parent
    too long to take the suffix keeps its head and a hash of the rest, so ids stay within 128 chars."""
    suffix = f"{PART_MARK}{index}"
    if len(parent) + len(suffix) > 128:
        parent = f"{parent[:100]}.{uuid.uuid5(NAMESPACE, parent).hex[:12]}"
    return parent + suffix


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
OUTBOX_TABLE = "derive_outbox"  # derived-tier work owed per archived segment (crash safety, outages)


# --- Qdrant ------------------------------------------------------------------------------------------
def collection_name(kind: str, embedder_name: str, dim: int) -> str:
    """One collection per embedder so vectors of different models never mix."""
    safe = re.sub(r"[^a-z0-9]+", "_", embedder_name.lower()).strip("_")
    return f"lumina_{kind}_{safe}_{dim}"
