"""The Protocols of the stores beside the tiers: the activity log, the cold turns of storage policy B, the reply
journal, the audit log, and the LangGraph store's item table.

Like the tiers' Protocols (stores.protocols), they are the contract a new backend implements: every member
nodes/ and graphs/ use is declared (tests/test_store_contract.py), and callers get them from stores.factory.
The per-user file places are UserDataPlaces too: erasure, backups and restore reach them through that part.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

from .models import Turn
from .user_data import UserDataPlace

if TYPE_CHECKING:
    from .kv_duckdb import NewRow, Row


@runtime_checkable
class ActivityLogStore(UserDataPlace, Protocol):
    """Per user, an append-only log of what happened (replies, recalls, erasures), rotated by size."""

    def append(self, user_id: str, event: str, *, at: float | None = None, **fields: Any) -> dict[str, Any]:
        """Record one event (``at``: epoch seconds, default now) with its fields; the event as written."""
        ...
    def events(self, user_id: str) -> list[dict[str, Any]]:
        """Every event of the user still kept, oldest first."""
        ...
    def recent(self, user_id: str, limit: int = 20, events: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """The user's last ``limit`` events (of the kinds ``events``, default all), oldest first."""
        ...
    def prune(self, older_than: float) -> int:
        """Drop every event older than ``older_than`` (epoch seconds); events dropped."""
        ...


@runtime_checkable
class ColdTurnStore(UserDataPlace, Protocol):
    """Raw turns that storage policy B moved out of the archive, readable by deliberate recall."""

    def write(self, user_id: str, turns: Sequence[Turn]) -> str | None:
        """One file with ``turns`` (all of ``user_id``); its name, None when there are none."""
        ...
    def read(self, user_id: str, contains: str | None = None, limit: int = 100) -> list[Turn]:
        """The user's cold turns in conversation order, only those whose text contains ``contains`` if given."""
        ...
    def search(self, user_id: str, terms: Sequence[str], limit: int) -> list[tuple[Turn, int]]:
        """The user's cold turns containing the most of ``terms``, each with how many, best first."""
        ...


@runtime_checkable
class ReplyJournalEntry(Protocol):
    """One reply being journalled: ``write`` its text as it streams, ``finish`` when complete."""

    path: Path

    def write(self, text: str) -> None: ...
    def flush(self) -> None:
        """What was written so far is on disk (fsync)."""
        ...
    def finish(self) -> None:
        """The reply is complete (and handed on): its journal goes."""
        ...


@runtime_checkable
class ReplyJournal(UserDataPlace, Protocol):
    """Replies being generated, kept so a process killed mid-reply leaves what it had said."""

    def open(self, user_id: str, reply_id: str, redact: Callable[[str], str] | None = None,
             **meta: Any) -> ReplyJournalEntry:
        """Start journalling a reply: its start is on disk before the first chunk."""
        ...
    def read(self, path: Path | str) -> dict[str, Any] | None:
        """What an entry holds (``path``: its file, or its row's id in server mode): its start's fields, the text
        so far and how many chunks."""
        ...
    def orphans(self) -> list[Path]:
        """Files of replies whose writing process is gone (a zombie is gone too)."""
        ...
    def recover_orphans(self) -> list[dict[str, Any]]:
        """The interrupted replies (user, reply_id, character, text so far, chunks, at), their files removed."""
        ...


@runtime_checkable
class AuditReader(Protocol):
    """The tamper-evident log of operations on user data, read: its rows and whether their chain holds."""

    def rows(self) -> list[dict[str, Any]]: ...
    def verify(self) -> dict[str, Any]:
        """Reads only: {'ok', 'rows', 'broken_at', 'problem', 'notice'}."""
        ...


@runtime_checkable
class AuditTrail(AuditReader, Protocol):
    """The audit log written: erasures, backups, restores, forgotten memories (ids and counts, no content)."""

    def append(self, event: str, actor: str, user_id: str | None = None, detail: str = "") -> dict[str, Any]:
        """Record an event; ``detail`` carries no content (counts, names of places, locations)."""
        ...
    def ref(self, user_id: str) -> str:
        """The user as the log names them (a keyed hash, never the id)."""
        ...


@runtime_checkable
class ItemTable(Protocol):
    """The LangGraph store's items (namespace, key, JSON value, terms, TTL), the source of truth its vectors mirror."""

    backend: str

    def write(self, puts: Sequence[NewRow], deletes: Sequence[str], now: float | None = None) -> None:
        """Upsert ``puts`` (created_at kept on update; TTL counted from ``now``) and delete ``deletes``, at once."""
        ...
    def writing(self, item_ids: Sequence[str]) -> AbstractContextManager[None]:
        """Hold ``item_ids`` against other processes' writes for a ``with`` block (whose ``write`` joins it)."""
        ...
    def refresh(self, item_ids: Sequence[str], now: float, alive_at: float | None = None) -> None:
        """Restart the TTL of ``item_ids`` (those that have one) at ``now``."""
        ...
    def expired(self, now: float, limit: int) -> list[Row]:
        """Up to ``limit`` items whose TTL ran out at or before ``now``, the longest expired first."""
        ...
    def get(self, item_ids: Sequence[str], alive_at: float | None = None) -> dict[str, Row]: ...
    def under(self, prefix: Sequence[str], limit: int | None = None, offset: int = 0,
              alive_at: float | None = None) -> list[Row]:
        """Items in ``prefix`` or below it, most recently updated first (ties: namespace, key)."""
        ...
    def keyword(self, prefix: Sequence[str], terms: Sequence[str], limit: int,
                alive_at: float | None = None) -> tuple[list[tuple[Row, list[str]]], dict[str, int], int]:
        """Items under ``prefix`` sharing a term with ``terms`` (most shared first), each with the terms shared;
        the document frequency of each term and the number of items under ``prefix``."""
        ...
    def unstamped(self, stamp: str, limit: int) -> list[Row]:
        """Up to ``limit`` indexed items whose tokens lack ``stamp`` (tokenised by an earlier version)."""
        ...
    def set_tokens(self, tokens: dict[str, list[str]]) -> None:
        """Replace the tokens of items (item id -> tokens); nothing else changes."""
        ...
    def namespaces(self, alive_at: float | None = None) -> list[tuple[str, ...]]: ...
    def count(self) -> int: ...
    def with_label(self, label: str) -> list[tuple[tuple[str, ...], str]]:
        """(namespace, key) of every item whose namespace has ``label`` as one of its labels."""
        ...
    def containing(self, text: str) -> list[Row]:
        """Every item whose namespace path (labels joined by '.') or key contains ``text``."""
        ...
    def dump_rows(self) -> list[dict[str, Any]]:
        """Every row with all its columns (a backup's records)."""
        ...
    def load_rows(self, rows: Sequence[dict[str, Any]]) -> int:
        """Write rows of ``dump_rows`` back as they were; rows written."""
        ...
    def rewrite(self) -> None:
        """Copy the table into a fresh file (deleted items linger in the engine's freed blocks)."""
        ...
    def raw_paths(self) -> list[Path]: ...
    def close(self) -> None: ...
