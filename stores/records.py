"""Values and names that cross the store contract, the same for every backend.

Callers (nodes/, graphs/) pass these to Protocol methods or read them back; adapters import them from here,
so no caller needs an adapter module for a record type, an id helper or a vocabulary.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence, TypedDict

import numpy as np

from . import ids
from .errors import InvalidInput, LuminaError


@dataclass
class ArchiveCounts:
    """Per user: what the archive says each derived tier should hold."""

    segments: Counter = field(default_factory=Counter)
    turns: Counter = field(default_factory=Counter)
    forgotten: Counter = field(default_factory=Counter)  # memories the lifecycle forgot (no point, no node)
    owed: Counter = field(default_factory=Counter)  # segments the outbox still owes derived writes
    knowledge: Counter = field(default_factory=Counter)  # remembered items already written to the derived tiers
    other_users: set = field(default_factory=set)  # users with knowledge items or lifecycle rows (no segment left)

    def users(self) -> set:
        return set(self.segments) | set(self.turns)


class RecentSignal(NamedTuple):
    """What mid-term recall reads of a recent segment (``MidTermStore.recent_signals``)."""

    segment_id: str
    importance: float
    end_ts: float
    embedding: np.ndarray  # float32; empty when the segment had none


class LinkedSegment(NamedTuple):
    """A segment as the graph holds it, with the earlier segments it is ASSOCIATED with."""

    segment_id: str
    characters: Sequence[str]
    concepts: Sequence[str]
    summary: str
    ts: float
    importance: float
    neighbours: Sequence[tuple[str, float]]


class KnowledgeNode(NamedTuple):
    """A knowledge item as the graph holds it: its node's properties and the segments it was learned from."""

    item_id: str
    subject: str
    attribute: str
    value: str
    polarity: str
    status: str
    episode_ids: Sequence[str]


# --- the memory lifecycle's state (MemoryLifecycleStore) -------------------------------------------
OUTBOX_ACTIONS = ("reembed", "payload", "relations", "delete")
"""Derived writes the lifecycle may owe a memory (``MemoryLifecycleStore.queue``/``owed``)."""
WRITTEN_BY_BATCH = ("decay", "memory_days", "retention", "level", "protected", "recalled", "recall_count",
                    "unbatched", "idle_days", "archived_on", "archive_reason", "revival_requested",
                    "revival_requested_at")
"""The lifecycle columns one batch day rewrites (``MemoryLifecycleStore.write_day``'s ``values``)."""


class RecentMemory(TypedDict):
    """One of a user's memories with its segment's fields, as encoding-time relations need them."""

    memory_id: str
    created: float  # when its segment ended (the conversation's clock)
    retention: float  # as of the last batch (a new memory's: its intensity)
    level: int
    start_ts: float  # when its segment began
    characters: list[str]  # who spoke in it besides the user
    close_reason: str  # the boundary rule that closed it (nodes.boundary_rules), "explicit" for a flush
    keywords: list[str]
    embedding: np.ndarray  # float32, the segment's unit centroid (zero length when none)


# --- knowledge bases (KBStore) ----------------------------------------------------------------------
SHARED = ""  # the owner of a shared KB's rows
KB_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,47}")


class UnknownKB(LuminaError, LookupError):
    """No such knowledge base for this caller (another user's per-user KB reads as absent, never as forbidden)."""

    def __init__(self, name: str, user_id: str | None):
        scope = f"shared or of user {user_id!r}" if user_id else "shared (pass a user id for per-user KBs)"
        super().__init__(f"no knowledge base {name!r} ({scope}); `lumina-memory kb list` shows them, "
                         "`lumina-memory kb add NAME FILE…` creates one")


@dataclass(frozen=True)
class Base:
    """One knowledge base of one owner ('' for shared) and the collection holding its passages."""

    kb: str
    owner: str
    collection: str
    created_at: float

    @property
    def per_user(self) -> bool:
        return self.owner != SHARED


def owner_of(user_id: str | None) -> str:
    return SHARED if user_id is None else ids.validate_id(user_id, "user_id")


def doc_id_for(owner: str, kb: str, content_sha256: str) -> str:
    """The same text added to the same KB is the same document (idempotent re-add)."""
    return str(uuid.uuid5(ids.NAMESPACE, f"kbdoc|{owner}|{kb}|{content_sha256}"))


def validate_kb_name(value: object) -> str:
    """A KB name is a directory and a collection name: 1-48 letters, digits, _ or -, folded to lower case
    (file systems that fold case would otherwise merge "Docs" and "docs")."""
    if not isinstance(value, str) or not KB_NAME_RE.fullmatch(value):
        shown = repr(value[:40]) if isinstance(value, str) else type(value).__name__
        raise InvalidInput("kb name", f"{shown} is not allowed; use 1-48 letters, digits, _ or - "
                                      "(starting with a letter or digit)")
    return value.lower()


# --- turn points and reads (TurnVectorStore, TurnReadStore) -----------------------------------------
def turn_point_id(user_id: str, turn_id: str) -> str:
    return ids.point_id(user_id, f"turn:{turn_id}")


def passage_point_id(user_id: str, turn_id: str, passage: int) -> str:
    """A passage window of a long turn (nodes.text.passages): a point of its own whose payload names the
    turn, so deleting the turn's points (by ``turn_id``) takes its passages too."""
    return ids.point_id(user_id, f"turn:{turn_id}:p{passage}")


def text_md5(text: str) -> str:
    """The fingerprint of a turn's text a kept read is checked against (hex md5 of its UTF-8 bytes)."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()
