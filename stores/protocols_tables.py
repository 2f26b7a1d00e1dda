"""The archive's tables (``ArchiveStore.memories``, ``.knowledge``, ``.procedures``, ``.semantic``, ``.turn_reads``).

They share the archive's database and its transactions; rows go in and out as plain dicts, so a backend
holds them however it likes. Every member nodes/ and graphs/ use is declared (tests/test_store_contract.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from .records import OUTBOX_ACTIONS, RecentMemory


@runtime_checkable
class RecallCache(Protocol):
    """What a store keeps of a user in this process between recalls (erasure and warm-up drop it)."""

    def cached_for(self, user_id: str) -> int:
        """Entries held for the user."""
        ...
    def forget_cached(self, user_id: str) -> None: ...


@runtime_checkable
class KnowledgeItemStore(RecallCache, Protocol):
    """Knowledge items with their whole history (superseded and merged rows stay), per user."""

    def upsert(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert or replace items by ``item_id`` (and owe them to the derived tiers); rows written."""
        ...
    def items(self, user_id: str, *, history: bool = False, subject: str | None = None,
              attribute: str | None = None, item_ids: Sequence[str] | None = None,
              remembered: bool = False) -> list[dict[str, Any]]:
        """The user's current items (``history``: every one), oldest first, optionally of a subject/attribute/ids."""
        ...
    def of_episodes(self, user_id: str, episode_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The user's items (any status) learned from any of these episodes, oldest first."""
        ...
    def recall_items(self, user_id: str) -> list[dict[str, Any]]:
        """``items(user_id, history=True, remembered=True)``, cached until the user's data changes."""
        ...
    def mark_accessed(self, user_id: str, ids: Sequence[str], now: float) -> int:
        """Recall showed these items: one use more each (written in batches); items counted."""
        ...
    def forget_episodes(self, user_id: str, episode_ids: Sequence[str]) -> int:
        """Remove items only these episodes support (others keep their other sources); items removed."""
        ...
    def mark_low_activity(self, now: float, idle_days: float, min_accesses: int,
                          protected_subjects: Sequence[str], user_id: str | None = None) -> int:
        """Unprotected items idle ``idle_days`` and accessed under ``min_accesses`` times become of low activity."""
        ...
    def low_activity_ids(self, user_id: str) -> set[str]:
        """The user's remembered items marked of low activity."""
        ...
    def users_with_low_activity(self) -> list[str]:
        """Users holding a remembered item of low activity, sorted."""
        ...
    def forget_idle(self, now: float, after_days: float, protected_subjects: Sequence[str],
                    user_id: str | None = None) -> list[tuple[str, str]]:
        """Forget (row kept, tiers owed) items of low activity for ``after_days`` and unused since; (user, item_id)."""
        ...
    def expire_said_before(self, cutoff: float, now: float) -> dict[str, list[str]]:
        """Mark items last said before ``cutoff`` forgotten as of ``now`` and owed to the tiers; item ids per user."""
        ...
    def delete_items(self, user_id: str, item_ids: Sequence[str]) -> int:
        """Remove these items' rows, history included; rows removed."""
        ...
    def unsynced(self, user_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Items the derived tiers do not mirror yet (one user's or everyone's), by user, oldest first."""
        ...
    def unsynced_count(self, user_id: str | None = None) -> int: ...
    def mark_synced(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Mark rows (as ``unsynced`` returned them) mirrored, each only if unchanged since; rows marked."""
        ...
    def mark_unsynced(self, user_id: str) -> int:
        """Owe every item of the user to the derived tiers again; items marked."""
        ...


@runtime_checkable
class ProcedureStore(RecallCache, Protocol):
    """Procedures (how-to steps learned from episodes), every version kept, per user."""

    def transaction(self, user_id: str) -> AbstractContextManager[None]:
        """One read-modify-write of one user's procedures as a transaction (joins the archive's when open)."""
        ...
    def upsert(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert or replace versions by ``procedure_id``; rows written."""
        ...
    def procedures(self, user_id: str, *, history: bool = False,
                   procedure_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The user's current procedures oldest first (``history``: superseded too), or exactly ``procedure_ids``."""
        ...
    def current(self, user_id: str) -> list[dict[str, Any]]:
        """``procedures(user_id)``, cached until the user's data changes."""
        ...
    def mark_accessed(self, user_id: str, ids: Sequence[str], now: float) -> int:
        """Recall showed these procedures: one use more each (written in batches); procedures counted."""
        ...
    def forget_episodes(self, user_id: str, episode_ids: Sequence[str]) -> int:
        """Remove versions only these episodes taught (a predecessor becomes current again); versions removed."""
        ...
    def forget_unreliable(self, user_id: str, below: float, min_outcomes: int, now: float | None = None) -> list[str]:
        """Forget procedures whose tried current version's confidence is below ``below`` (undoable: kept in
        the undo log); lineages removed."""
        ...
    def forget_unused(self, user_id: str, now: float, idle_days: float, min_uses: int,
                      mature_version: int, undoable: bool = True) -> list[str]:
        """Forget immature, unprotected procedures idle ``idle_days`` and used under ``min_uses``; lineages removed.
        ``undoable``: kept in the undo log; False (retention) drops their entries too."""
        ...
    def restore_lineages(self, user_id: str, entries: Sequence[Mapping[str, Any]], now: float) -> list[str]:
        """Undo: the forgotten lineages of these undo entries inserted again, as used at ``now``; the entries used up."""
        ...
    def prune_versions(self, user_id: str, lineage_ids: Sequence[str], keep: int) -> list[str]:
        """Only the newest ``keep`` versions of each lineage stay ([IMPORTANT] ones too); returns the ids that went."""
        ...


@runtime_checkable
class StrategyStore(Protocol):
    """S5: the agent's task decompositions and failure patterns, one row per strategy id, per user."""

    def get(self, user_id: str, strategy_id: str) -> dict[str, Any] | None: ...
    def of_user(self, user_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The user's rows (of ``kind``), oldest first."""
        ...
    def put(self, row: Mapping[str, Any]) -> None:
        """Insert or replace one row by ``strategy_id``; another user's id is refused."""
        ...
    def expire_before(self, cutoff: float) -> dict[str, int]:
        """Retention: rows last updated before ``cutoff`` go; rows removed per user."""
        ...


@runtime_checkable
class MemoryUndoStore(Protocol):
    """Issue 49: what each forgetting step changed (a memory's row, a fact's activity), kept for the undo window."""

    def record_facts(self, user_items: Sequence[tuple[str, str]], day: int, now: float) -> int:
        """Facts (user, item_id) just forgotten: keep their state before it (inside the forgetting's transaction)."""
        ...
    def entries(self, user_id: str, target_id: str | None = None, step: str | None = None,
                since_day: int | None = None) -> list[dict[str, Any]]:
        """The user's entries, oldest first: undo_id, target_id, step, day, ts, prior (a dict)."""
        ...
    def count(self, user_id: str | None = None) -> int: ...
    def purge(self, before_ts: float) -> int:
        """Entries applied before ``before_ts`` go; how many."""
        ...
    def restore_memories(self, user_id: str, priors: Sequence[Mapping[str, Any]], consumed: Sequence[str],
                         overrides: Mapping[str, Any]) -> list[str]:
        """Memories put back as ``priors`` hold them (``overrides`` on top), ``consumed`` entries dropped, in one
        transaction; the ids restored."""
        ...
    def restore_facts(self, user_id: str, item_ids: Sequence[str], consumed: Sequence[str], now: float) -> int:
        """Forgotten facts remembered again (as if used at ``now``), ``consumed`` entries dropped; how many."""
        ...
    def forget(self, user_id: str, target_ids: Sequence[str]) -> None:
        """Every entry of these memories (or procedure lineages) dropped: retention removed what they hold."""
        ...


@runtime_checkable
class CostLogStore(Protocol):
    """Issue 49: what each operation (write, flush, recall, prime, reply) cost, one record per operation; no user id
    and no text (stores.costs_sql)."""

    def add(self, record: Mapping[str, Any], batch_rows: int = 1, batch_seconds: float = 0.0,
            keep_days: float | None = None) -> int:
        """Keep one record; the waiting ones are written once ``batch_rows`` wait or ``batch_seconds`` passed, and
        those older than ``keep_days`` removed with them. Rows written."""
        ...
    def flush(self, keep_days: float | None = None) -> int:
        """Write every waiting record (removing those older than ``keep_days``); how many."""
        ...
    def since(self, ts: float, op: str | None = None) -> list[dict[str, Any]]:
        """The records from ``ts`` (epoch seconds) on, of ``op`` when given, oldest first."""
        ...
    def expire_before(self, cutoff: float) -> int:
        """Retention: records older than ``cutoff`` go; how many."""
        ...


@runtime_checkable
class MemoryLifecycleStore(RecallCache, Protocol):
    """The memory lifecycle's state: one row per memory, relations between memories, owed derived writes."""

    undo: MemoryUndoStore
    def insert_new(self, rows: Sequence[Mapping[str, Any]]) -> list[str]:
        """Add memories not held yet; the ids of those that were new, in the rows' order."""
        ...
    def protected_count(self, user_id: str) -> int: ...
    def recent_with_segments(self, user_id: str, until: float, limit: int,
                             include: Sequence[str] = ()) -> list[RecentMemory]:
        """The user's ``limit`` newest memories created by ``until`` (and ``include``), newest first, with segment fields."""
        ...
    def add_relations(self, user_id: str, relations: Sequence[tuple[str, str, str, float]], day: int) -> int:
        """Add (src, dst, kind, score) relations not held either way round, owing the graph; relations added."""
        ...
    def forgotten(self, user_id: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of ``memory_ids`` the lifecycle forgot."""
        ...
    def recall_view(self, user_id: str) -> tuple[dict[str, dict[str, Any]], frozenset[str]]:
        """memory id -> the fields recall shows, and the forgotten ids; cached until the user's data changes."""
        ...
    def due_users(self, day: int, users: Sequence[str] | None = None) -> dict[str, int | None]:
        """user -> last completed day (None: never) of users with memories whose last day is before ``day``."""
        ...
    def load(self, users: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """(core columns as arrays, memory ids, seqs) of the users' memories, by user then seq."""
        ...
    def relation_rows(self, users: Sequence[str]) -> list[tuple[str, str, str, str, float]]:
        """(user, src, dst, kind, score) of the users' relations."""
        ...
    def rows_tags(self, memory_ids: Sequence[str]) -> list[tuple[str, list[str]]]:
        """(memory_id, tags) of these memories."""
        ...
    def write_day(self, users: Sequence[str], day: int, seq: np.ndarray, values: Mapping[str, np.ndarray],
                  texts: Mapping[int, str], relations: Sequence[tuple[str, str, str, str, float]] | None,
                  outbox: Sequence[tuple[str, str, str]], delete_seq: Sequence[int], now: float,
                  undo: Mapping[int, str] | None = None, *,
                  sides: Mapping[int, tuple[str | None, str | None]] | None = None) -> None:
        """One lifecycle day of ``users`` in one transaction with its completion mark (``undo``: seq -> forgetting
        step of the rows whose state before the day the undo log keeps; ``sides``: seq -> trigger and content at
        the new level)."""
        ...
    def queue(self, user_id: str, memory_id: str, action: str, day: int = 0) -> None:
        """Owe one derived write (an ``OUTBOX_ACTIONS`` action) outside a batch."""
        ...
    def owed(self, limit: int = 10_000, actions: Sequence[str] = OUTBOX_ACTIONS) -> list[tuple[str, str, str]]:
        """(user, memory_id, action) owed, distinct, of these actions."""
        ...
    def owed_count(self, actions: Sequence[str] = OUTBOX_ACTIONS) -> int: ...
    def settle(self, done: Sequence[tuple[str, str, str]]) -> None:
        """These owed (user, memory_id, action) writes are done."""
        ...
    def mark_recalled(self, user_id: str, memory_ids: Sequence[str], now: float, deliberate: bool) -> int:
        """Flag these memories recalled (the next batch reinforces them); memories flagged."""
        ...
    def set_protected(self, user_id: str, memory_id: str, protected: bool, cap: int) -> dict[str, Any]:
        """Protect or unprotect one memory; InvalidInput naming ``cap`` when the user is at the cap."""
        ...
    def delete(self, user_id: str, memory_id: str) -> int:
        """Remove one memory's lifecycle rows and relations; rows removed."""
        ...
    def last_days(self) -> dict[str, int]:
        """user -> the last day the daily batch completed for them (users it has run for)."""
        ...
    def merge_into(self, user_id: str, survivor: str, absorbed: Mapping[str, float], values: Mapping[str, Any],
                   day: int, now: float | None = None) -> None:
        """A9: fold ``absorbed`` (id -> similarity) into ``survivor``, which takes ``values``; one transaction,
        the undo log's ``merge`` entries (applied at ``now``) included."""
        ...
    def rows(self, user_id: str, memory_ids: Sequence[str] | None = None,
             level: int | None = None) -> list[dict[str, Any]]:
        """The user's memories as dicts (optionally these ids or this level), oldest first."""
        ...
    def relations(self, user_id: str, memory_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The user's relations (touching ``memory_ids`` when given)."""
        ...
    def level_counts(self, user_id: str | None = None) -> dict[int, int]: ...


@runtime_checkable
class SemanticStore(Protocol):
    """Semantic memories: clusters of episodes consolidated into one statement, per user."""

    def upsert(self, rows: Sequence[Mapping[str, Any]]) -> int: ...
    def items(self, user_id: str) -> list[dict[str, Any]]: ...
    def delete(self, user_id: str, semantic_ids: Sequence[str]) -> int: ...
    def forget_episodes(self, user_id: str, episode_ids: Sequence[str]) -> int:
        """Drop these episodes from their clusters; a cluster left with fewer than two goes. Clusters changed."""
        ...


@runtime_checkable
class TurnReadStore(Protocol):
    """What the recall index read of each turn, kept so a cold build does not read every text again."""

    def stored(self, user_id: str, reader: str, turn_ids: Sequence[str] | None = None) -> dict[str, str]:
        """turn_id -> read kept by ``reader`` from the turn's current text (those of ``turn_ids`` when given)."""
        ...
    def put(self, user_id: str, reader: str, rows: Sequence[tuple[str, str, str]]) -> int:
        """Keep (turn_id, text_md5, read) rows; rows of gone or changed turns are dropped. Rows kept."""
        ...
