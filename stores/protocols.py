"""One small Protocol per tier. Adapters implement them; nothing above ``stores`` sees a driver.

These are the contract a new backend implements: every member nodes/ and graphs/ use is declared here
(tests/test_store_contract.py reads their source and fails on any other), with the archive's tables in
``protocols_tables`` and the further collections in ``protocols_collections``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from .models import GraphCounts, SegmentRecord, Turn, VectorHit
from .protocols_agents import AgentTables
from .protocols_collections import KBCatalogStore, PointCollection
from .protocols_files import AuditTrail
from .protocols_tables import (
    CostLogStore, KnowledgeItemStore, MemoryLifecycleStore, ProcedureStore, RecallCache, SemanticStore, StrategyStore,
    TurnReadStore,
)
from .records import ArchiveCounts, LinkedSegment, RecentSignal
from .user_data import UserDataPlace


@runtime_checkable
class TextVectorCache(Protocol):
    """S6: the embedding cache's tier shared by a memory's processes: a text's vector bytes by its hash, with a TTL;
    not filed by user (erasure clears it whole). Calls raise StoreUnavailable at once when the server does not
    answer (a cache is skipped, not waited for)."""

    namespace: str

    def get_many(self, texts: Sequence[str]) -> list[bytes | None]: ...
    def put_many(self, vectors: Mapping[str, bytes], ttl_seconds: int) -> None: ...
    def count(self) -> int: ...
    def clear(self) -> int: ...


@runtime_checkable
class MidTermStore(Protocol):
    """Recent segments with a TTL (Redis/Valkey)."""

    backend: str
    on_reconnect: Callable[[], object] | None
    """Called after the store had to reconnect (a server that restarted may have lost records)."""

    def put_segment(self, record: SegmentRecord, ttl_seconds: int) -> None: ...
    def put_segments(self, records: Sequence[SegmentRecord], ttl_seconds: int) -> None:
        """``put_segment`` for many; every record is checked before anything is written."""
        ...
    def get_segment(self, user_id: str, segment_id: str) -> SegmentRecord | None: ...
    def recent_segments(self, user_id: str, limit: int) -> list[SegmentRecord]: ...
    def recent_signals(self, user_id: str, limit: int) -> list[RecentSignal]:
        """Newest first, like recent_segments, but only (segment_id, importance, end_ts, embedding)."""
        ...
    def missing(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """The (user_id, segment_id) pairs without a record here, in the order given."""
        ...
    def ttl(self, user_id: str, segment_id: str) -> int:
        """Seconds left; -2 when the record is gone."""
        ...
    def count(self, user_id: str | None = None) -> int: ...
    def delete_segments(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Remove these segments of this user (records and index entries); records removed."""
        ...
    def delete_user(self, user_id: str) -> int: ...
    def ping(self) -> str:
        """Server version; raises StoreUnavailable when unreachable."""
        ...
    def vector_cache(self, namespace: str) -> TextVectorCache:
        """The embedding cache's shared tier on this server, for one embedder (``namespace``: its name and dimension)."""
        ...
    def close(self) -> None: ...


@runtime_checkable
class ArchiveStore(RecallCache, Protocol):
    """Durable history of every turn and segment (DuckDB)."""

    backend: str
    memories: MemoryLifecycleStore
    """The memory lifecycle's state, in the archive's transactions."""
    knowledge: KnowledgeItemStore
    """Knowledge items, the source of truth the knowledge vectors and graph nodes mirror."""
    procedures: ProcedureStore
    semantic: SemanticStore
    turn_reads: TurnReadStore

    def transaction(self) -> AbstractContextManager[None]:
        """Writes inside the block (this store's and its tables') commit together or not at all."""
        ...
    @property
    def generation(self) -> int:
        """Changes whenever a write transaction ends; equal values mean nothing was written in between."""
        ...
    def kept(self, user_id: str, key: Hashable, load: Callable[[], Any]) -> Any:
        """``load()`` (a read of the user's archive), called again only after a write touched the user."""
        ...

    # --- turns
    def put_turns(self, turns: Sequence[Turn]) -> None: ...
    def has_turn(self, user_id: str, turn_id: str) -> bool: ...
    def missing_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[str]:
        """Which of ``turn_ids`` the user has no archived turn for, in the order asked."""
        ...
    def get_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[Turn]: ...
    def all_turns(self, user_id: str) -> list[Turn]: ...
    def turns_since(self, user_id: str, after_seq: int = 0) -> tuple[list[Turn], int]:
        """Turns first arrived after arrival number ``after_seq`` (conversation order), and the number to ask from next."""
        ...
    def turn_columns(self, user_id: str) -> tuple[dict[str, tuple], int]:
        """Every turn of the user in conversation order as one tuple per Turn field, and the newest arrival number."""
        ...
    def turns_before(self, before_ts: float) -> list[Turn]:
        """Every user's turns said before ``before_ts``, by user then conversation order (retention)."""
        ...
    def delete_turns(self, user_id: str, turn_ids: Sequence[str]) -> int:
        """Remove these turns of this user; turns removed."""
        ...

    # --- segments
    def put_segment(self, record: SegmentRecord) -> None: ...
    def put_segments(self, records: Sequence[SegmentRecord]) -> None:
        """Upsert many segments at once."""
        ...
    def get_segment(self, user_id: str, segment_id: str) -> SegmentRecord | None: ...
    def segments(self, user_id: str, limit: int | None = None) -> list[SegmentRecord]:
        """Newest first."""
        ...
    def segment_texts(self, user_id: str, archived_since: float = 0.0) -> list[tuple[str, str, list[str], float]]:
        """(segment_id, text, keywords, archived_at) of segments archived at or after ``archived_since``, newest first."""
        ...
    def recent_importances(self, user_id: str, limit: int) -> list[float]:
        """Importance of the user's newest ``limit`` segments, newest first."""
        ...
    def segments_at(self, user_id: str, start_ts: float, end_ts: float, limit: int = 5) -> list[str]:
        """Ids of the user's segments holding a turn said in [start_ts, end_ts), earliest such turn first."""
        ...
    def segments_before(self, before_ts: float) -> list[SegmentRecord]:
        """Every user's segments that ended before ``before_ts`` (retention)."""
        ...
    def archived_since(self, since: float) -> list[tuple[str, str, float]]:
        """(user_id, segment_id, archived_at) of every segment archived at or after ``since`` (wall clock), oldest first."""
        ...
    def clear_segment_texts(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Blank these segments' raw text (summary, keywords, embedding stay); segments changed."""
        ...
    def delete_segments(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Remove these segments of this user; segments removed."""
        ...
    def ids_starting(self, user_id: str, kind: str, start: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` of the user's ids of ``kind`` (episode, segment, knowledge, procedure) starting with ``start``."""
        ...

    # --- derived writes owed per segment (the outbox)
    def put_outbox(self, entries: Sequence[tuple[str, str, Sequence[str], str]]) -> None:
        """Owe (user_id, segment_id, stages, promotion) per segment; inside ``transaction()`` it commits with them."""
        ...
    def settle_outbox(self, user_id: str, remaining: dict[str, Sequence[str]]) -> None:
        """What each segment still owes after a pass; an empty list settles it."""
        ...
    def outbox(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Owed rows, oldest first: {'user_id', 'segment_id', 'stages', 'promotion', 'seq', 'queued_at'}."""
        ...
    def outbox_size(self) -> int:
        """How many segments of all users still owe derived writes."""
        ...
    def counts(self, user_id: str | None = None, which: Sequence[str] = ("turns", "segments")) -> dict[str, int]:
        """{'turns': n, 'segments': n}, or only the keys in ``which``."""
        ...
    def generation_of(self, user_id: str) -> int:
        """A stamp that changes whenever a write of this user's turns or segments ends."""
        ...
    def recent_users(self, limit: int) -> list[str]:
        """The users whose turns were archived last, most recent first."""
        ...
    def tier_counts(self) -> ArchiveCounts:
        """Per user: what the archive says each derived tier should hold (doctor and stats compare them)."""
        ...
    def append_audit(self, event: str, user_id: str, detail: str = "") -> None: ...
    def audit(self, user_id: str) -> list[dict]: ...
    def delete_user(self, user_id: str) -> int: ...
    def compact(self, free_share: float) -> dict[str, Any]:
        """Reclaim deleted rows' space (maintenance): an embedded file is checkpointed, and rewritten whole while
        more than ``free_share`` of it is reclaimable; a server reclaims on its own. Returns what was done."""
        ...
    def close(self) -> None: ...

    # --- what else lives in the archive's database, in its transactions
    def audit_trail(self, key: bytes) -> AuditTrail:
        """The keyed, chained audit log kept in the archive's database, its head sealed with ``key``."""
        ...
    def user_data_places(self) -> list[UserDataPlace]:
        """A place per table of the archive that holds user data, and the audit log's (erasure, backup)."""
        ...
    def strategies(self) -> StrategyStore:
        """S5's strategies, in the archive's database (one per archive)."""
        ...
    def op_costs(self) -> CostLogStore:
        """What each operation cost (issue 49), in the archive's database (one per archive)."""
        ...
    def kb_catalog(self) -> KBCatalogStore:
        """The knowledge bases' records, in the archive's database."""
        ...
    def agent_tables(self) -> AgentTables:
        """Agents' memory records (PIANO), in the archive's database."""
        ...


@runtime_checkable
class VectorStore(PointCollection, Protocol):
    """Long-term, importance-scored segment vectors, one namespace (payload filter) per user."""

    def upsert(self, records: Sequence[SegmentRecord]) -> None: ...
    def search(
        self, user_id: str, vector: Sequence[float], limit: int, character: str | None = None,
        fields: Sequence[str] | None = None, *, max_level: int | None = None,
    ) -> list[VectorHit]:
        """``max_level``: only memories at that level or below (a point without ``level`` counts as 1)."""
        ...
    def search_many(
        self, user_id: str, vectors: Sequence[Sequence[float]], limits: Sequence[int], fields: Sequence[str] | None = None,
        *, max_level: int | None = None, ended_by: float | None = None,
    ) -> list[list[VectorHit]]:
        """``search`` for each vector (with its own limit) in one engine call; ``ended_by``: only segments whose
        end_ts is at or before it."""
        ...
    def get(self, user_id: str, segment_ids: Sequence[str]) -> list[VectorHit]: ...
    def delete(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Remove these segments' points of this user; points removed (missing/foreign ids: 0)."""
        ...
    def set_payload(self, user_id: str, fields_by_segment: Mapping[str, Mapping[str, Any]]) -> int:
        """Merge fields into this user's existing points' payloads (others kept); points changed."""
        ...
    def replace_vector(
        self, user_id: str, vectors_by_segment: Mapping[str, Sequence[float]],
        fields_by_segment: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> int:
        """New vectors for this user's existing points, payload kept plus the merged fields; points changed."""
        ...
    def info(self) -> dict:
        """{'collection', 'embedder', 'dim', 'points'}"""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """Associative memory: User, Character, Segment, Concept and Knowledge nodes (ladybug or Neo4j)."""

    backend: str

    def upsert_segment(
        self,
        user_id: str,
        segment_id: str,
        characters: Sequence[str],
        concepts: Sequence[str],
        summary: str,
        ts: float,
        importance: float,
    ) -> None: ...
    def upsert_linked_segments(self, user_id: str, segments: Sequence[LinkedSegment]) -> None:
        """``upsert_segment`` then ``link_segments`` for each, in order, as one unit of work."""
        ...
    def link_segments(self, user_id: str, segment_id: str, neighbours: Sequence[tuple[str, float]]) -> None:
        """ASSOCIATED {score} edges from segment_id to each neighbour (idempotent)."""
        ...
    def associated(self, user_id: str, segment_ids: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Neighbours over ASSOCIATED edges, best score first, excluding the seeds."""
        ...
    def segments_for_concepts(self, user_id: str, concepts: Sequence[str], limit: int) -> list[tuple[str, int]]:
        """Segments that MENTION any of the concepts, with how many of them they mention."""
        ...
    def prepare_recall_reads(self, limit: int) -> None:
        """Compile what recall reads, once, when the process opens the store (never inside a recall)."""
        ...
    def concepts_of(self, user_id: str, segment_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def delete_segments(self, user_id: str, segment_ids: Sequence[str], *, knowledge: bool = True) -> int:
        """Remove these Segment nodes of this user with every edge they have (and concepts nothing else
        mentions any more; with ``knowledge``, Knowledge nodes nothing else supports); Segment nodes removed."""
        ...
    def set_relations(self, user_id: str, relations: Sequence[tuple[str, str, str, float]]) -> int:
        """Make the user's typed memory relations (src, dst, kind, score) exactly these (kinds in
        stores.cypher.RELATION_KINDS); ones whose ends are not both this user's segments are left out.
        Returns how many are stored."""
        ...
    def relations(self, user_id: str, segment_ids: Sequence[str] | None = None) -> list[tuple[str, str, str, float]]:
        """The user's relations as (src, dst, kind, score), sorted; only those touching ``segment_ids`` if given."""
        ...
    def upsert_knowledge(self, user_id: str, items: Sequence[Any], supersedes: Sequence[tuple[str, str]] = (),
                         links: Sequence[tuple[str, str, str, str]] = ()) -> int:
        """Knowledge nodes (stores.graph_base.KnowledgeNode) with their LEARNED_FROM segments, and the
        SUPERSEDES edges and the links between facts ((src, dst, kind, winner), kinds in
        stores.cypher.KNOWLEDGE_LINK_KINDS) touching them made exactly as given (idempotent); items written."""
        ...
    def knowledge_links(self, user_id: str) -> list[tuple[str, str, str, str]]:
        """The links leaving the user's Knowledge nodes as (src, dst, kind, winner), sorted."""
        ...
    def knowledge(self, user_id: str) -> list[dict]:
        """The user's Knowledge nodes with their ``episode_ids`` and the items each ``supersedes``."""
        ...
    def delete_knowledge(self, user_id: str, item_ids: Sequence[str]) -> None:
        """Remove these Knowledge nodes of this user with their edges (forgotten items)."""
        ...
    def counts(self, user_id: str | None = None) -> GraphCounts: ...
    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every node and edge, by kind (stores.cypher_backup.DUMP); each row names its user (backups, upkeep)."""
        ...
    def segments_per_user(self) -> dict[str, int]:
        """user_id -> Segment nodes held (doctor and stats compare it with the archive)."""
        ...
    def cross_user_edges(self, *, delete: bool = False) -> list[dict[str, Any]]:
        """Edges whose two ends belong to two users (a leak the protocol never writes), as {kind, a, b, a_user,
        b_user}; with ``delete`` removed in the same unit of work, their nodes and other edges kept."""
        ...
    def delete_user(self, user_id: str) -> int: ...
    def close(self) -> None: ...


@runtime_checkable
class LexicalIndex(Protocol):
    """BM25 over one user's documents, numbered in the order they were added (stores.lexical.InProcessLexical).
    Immutable: ``extended`` gives a new index, so a query running on this one keeps its view."""

    postings: Mapping[str, tuple[Any, Any]]
    """term -> (document numbers, increasing; term frequencies), numpy arrays: what a snapshot of it keeps."""
    lengths: Any
    """Each document's length in terms (a numpy array)."""

    @property
    def size(self) -> int:
        """Documents held."""
        ...
    def extended(self, terms: Sequence[Sequence[str]], keys: Sequence[Sequence[str]]) -> "LexicalIndex":
        """This index with documents appended: each one's terms (repeats counted) and cross-script keys (posted
        once, not counted in its length)."""
        ...
    def search(self, query_terms: Sequence[str], limit: int, k1: float = 1.2, b: float = 0.75) -> list[tuple[int, float]]:
        """(document, BM25 score) of the ``limit`` best matches, best first, ties in document order."""
        ...
