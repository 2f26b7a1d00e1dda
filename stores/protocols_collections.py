"""The vector collections beside the segment vectors: turn points, knowledge points, knowledge bases.

Each is one collection of points, one tenant (payload ``user_id``) per user like ``VectorStore``, with its own
record kind. Every member nodes/ and graphs/ use is declared (tests/test_store_contract.py).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from .records import Base


@runtime_checkable
class PointCollection(Protocol):
    """What every collection of points answers, whatever its records are."""

    backend: str
    collection: str
    dim: int

    def count(self, user_id: str | None = None) -> int: ...
    def delete_user(self, user_id: str) -> int: ...
    def delete_matching(self, user_id: str, field: str, values: Sequence[str]) -> int:
        """Remove this user's points whose payload ``field`` is one of ``values``; points removed."""
        ...
    def payloads(self, fields: Sequence[str]) -> Iterable[dict[str, Any]]:
        """These payload fields of every point of every user (maintenance counts; no vectors)."""
        ...
    def optimize(self) -> dict:
        """Build the vector index where the engine waits to be asked (maintenance, not per turn)."""
        ...
    def unindexed(self) -> int | None:
        """Points ``optimize()`` could still index; None when the engine indexes by itself."""
        ...
    def points(self) -> Iterable[tuple[str, list[float], dict[str, Any]]]:
        """Every point of every user as (id, vector, payload): what a backup copies."""
        ...
    def write_points(self, points: Sequence[Any]) -> int:
        """Write these points (``PreparedPoint``s: id, vector, payload) as they are, all checked before any
        is written: what a restore does; points written."""
        ...
    def close(self) -> None: ...


@runtime_checkable
class TurnVectorStore(PointCollection, Protocol):
    """One point per archived turn (and per passage of a long turn), for fine-grained recall."""

    def upsert_turns(self, user_id: str, turns: Sequence[Any], vectors: Sequence[Sequence[float]]) -> int:
        """Points for these turns (objects or dicts; a dict with ``passage`` is a passage of its turn); points written."""
        ...
    def search_point_ids(self, user_id: str, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """This user's nearest points as (point id, score), best first, without payloads."""
        ...
    def vectors_of(self, user_id: str, turn_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of this user's turns (float32; missing ones left out)."""
        ...
    def delete(self, user_id: str, turn_ids: Sequence[str]) -> int:
        """Remove these turns' points (their passages too) of this user; points removed."""
        ...


@runtime_checkable
class KnowledgeVectorStore(PointCollection, Protocol):
    """One point per remembered knowledge item, mirroring the archive's knowledge items."""

    def upsert_items(self, user_id: str, items: Sequence[Mapping[str, Any]], vectors: Sequence[Sequence[float]]) -> int:
        """Points for these knowledge rows, one vector each, all checked before any is written; points written."""
        ...
    def search_items(self, user_id: str, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """This user's nearest items as (item_id, cosine), best first."""
        ...
    def set_episodes(self, user_id: str, episodes_by_item: Mapping[str, Sequence[str]]) -> int:
        """New ``episode_ids`` for this user's existing item points, the rest kept; points changed."""
        ...
    def delete(self, user_id: str, item_ids: Sequence[str]) -> int:
        """Remove these items' points of this user; points removed."""
        ...


@runtime_checkable
class KBVectorStore(PointCollection, Protocol):
    """One knowledge base's passages; ``owner`` is a user id for a per-user KB, None for a shared one."""

    def upsert_passages(self, owner: str | None, rows: Sequence[Mapping[str, Any]],
                        vectors: Sequence[Sequence[float]]) -> int:
        """Passage points (payload rows, one vector each), all checked before any is written; points written."""
        ...
    def search_passages(self, owner: str | None, vector: Sequence[float], limit: int) -> list[tuple[float, dict]]:
        """(cosine, payload) of the nearest passages, best first."""
        ...
    def delete_docs(self, owner: str | None, doc_ids: Sequence[str]) -> int:
        """Remove these documents' passages; points removed."""
        ...
    def count_owner(self, owner: str | None) -> int: ...
    def rewrite(self) -> None:
        """Rebuild the collection's files from its live points, so deleted payloads leave the raw bytes."""
        ...


@runtime_checkable
class KBCatalogStore(Protocol):
    """The knowledge bases' records: bases, documents and their chunks (the source of truth for passages)."""

    def bases(self, user_id: str | None = None, *, everyone: bool = False) -> list[Base]:
        """Shared KBs plus ``user_id``'s own (every user's with ``everyone``)."""
        ...
    def documents(self, kb: str, owner: str) -> list[dict[str, Any]]: ...
    def committed(self, kb: str, owner: str, doc_ids: Sequence[str]) -> set[str]:
        """Which of ``doc_ids`` are recorded in this KB of this owner."""
        ...
    def document(self, kb: str, owners: Sequence[str], doc_id: str) -> dict[str, Any] | None:
        """The document if it belongs to one of ``owners`` ('' = shared) in this KB."""
        ...
    def doc_ids_starting(self, kb: str, owners: Sequence[str], start: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` of this KB's document ids of ``owners`` starting with ``start`` (as text), sorted."""
        ...
    def chunks(self, doc_id: str, first: int, last: int) -> list[tuple[int, int, int, str]]:
        """(chunk, start_char, end_char, text) of chunks ``first..last`` of the document, in order."""
        ...
    def commit_document(self, base: Base, doc: dict[str, Any], chunks: Sequence[tuple[int, int, str]],
                        embedder: str, dim: int) -> list[str]:
        """Record the KB, the document and its chunks at once, replacing an older one of the same source; ids replaced."""
        ...
    def remove_base(self, kb: str, owner: str) -> int:
        """Forget the KB's records; documents it had."""
        ...
    def owners(self, kb: str) -> list[str]:
        """Users who have a per-user KB of this name."""
        ...


@runtime_checkable
class KBCollectionStore(Protocol):
    """The knowledge bases' collections, one per KB (per user or shared)."""

    def get(self, kb: str, per_user: bool, *, create: bool = True) -> KBVectorStore | None:
        """The KB's collection, opened once; None when it does not exist and ``create`` is false."""
        ...
    def drop(self, kb: str, per_user: bool) -> bool:
        """Delete the KB's whole collection; False when there was none."""
        ...
    def close(self) -> None: ...


@runtime_checkable
class KBStore(Protocol):
    """``Stores.kb``: the KB records and collections, opened on first use."""

    catalog: KBCatalogStore
    collections: KBCollectionStore

    def close(self) -> None: ...
