"""The store contract of agents' memory (PIANO, issue 48): what nodes/agents and graphs/ use, nothing more.

``AgentTables`` keeps the records (one SQL adapter over ``SqlConnection``: DuckDB embedded, PostgreSQL in server
mode); ``AgentVectors`` their vectors (the vector tier's engines: qdrant-edge, Qdrant, pgvector), one tenant per
agent. Every read is confined to one agent (or, for shared memories, to what the reading agent may see).
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

from .protocols_collections import PointCollection
from .agent_records import AgentEvent, LtmRecord, SharedMemory, TellHop


@runtime_checkable
class AgentTables(Protocol):
    dialect: str

    # --- agents and runs --------------------------------------------------------------------------
    def register_agent(self, agent_id: str, run_id: str) -> None:
        """Record that ``agent_id`` belongs to ``run_id`` (idempotent; an agent never changes run: InvalidInput)."""
        ...
    def run_of(self, agent_id: str) -> str | None: ...
    def agents(self, run_id: str | None = None) -> list[str]:
        """Agents of one run (every agent when None), sorted."""
        ...

    # --- working memory (P1) ----------------------------------------------------------------------
    def get_wm(self, agent_id: str) -> dict[str, Any] | None: ...
    def merge_wm(self, agent_id: str, patch: dict[str, Any]) -> dict[str, Any]:
        """Merge ``patch`` into the document's top-level keys (a None value removes the key) in one transaction,
        so two processes' partial updates both land; returns the document after the merge."""
        ...

    # --- short-term events (P2) -------------------------------------------------------------------
    def add_events(self, events: Sequence[AgentEvent]) -> int:
        """Events written (an event_id already stored is left as it is: a retried store adds nothing)."""
        ...
    def events(self, agent_id: str, limit: int | None = None, *, newest: bool = False,
               ids: Sequence[str] | None = None) -> list[AgentEvent]:
        """This agent's events in time order (the newest ``limit`` when ``newest``, else the oldest)."""
        ...
    def count_events(self, agent_id: str) -> int: ...
    def count_events_many(self, agent_ids: Iterable[str]) -> dict[str, int]:
        """Events held per agent (0 for one with none), read together (a store checks every agent of a tick)."""
        ...
    def delete_events(self, agent_id: str, event_ids: Sequence[str]) -> int: ...

    # --- long-term records (P4, P5) ---------------------------------------------------------------
    def add_ltm(self, records: Sequence[LtmRecord]) -> int:
        """Records written or replaced (by memory_id); a replaced record keeps the larger access count and the
        later last access (accesses counted since it was read are not lost)."""
        ...
    def ltm(self, agent_id: str, ids: Sequence[str] | None = None) -> list[LtmRecord]:
        """The agent's records, oldest first; their access counts include this process's pending accesses."""
        ...
    def count_ltm(self, agent_id: str) -> int: ...
    def touch_ltm(self, agent_id: str, memory_ids: Sequence[str], at: float) -> None:
        """One access each: access_count + 1, last_accessed = at (atomic across processes). Counted in memory and
        written with the next write of these tables, ``flush_accesses`` or ``close`` (stores.agent_accesses)."""
        ...
    def cluster_ltm(self) -> int:
        """Lay the LTM rows out by agent where the engine needs it for reads by agent (DuckDB: rows rewritten; a
        write of enough rows does it too); returns the rows rewritten."""
        ...
    def flush_accesses(self) -> int:
        """Write the pending accesses now; returns how many records' accesses were written."""
        ...
    def delete_ltm(self, agent_id: str, memory_ids: Sequence[str]) -> int: ...
    def consolidated(self, agent_id: str, records: Sequence[LtmRecord], event_ids: Sequence[str]) -> int:
        """In one transaction: add ``records`` and delete the STM ``event_ids`` they came from (P4), so a
        crash leaves either the events or the records, never both nor neither; events deleted."""
        ...

    # --- shared memories (P7) ---------------------------------------------------------------------
    def add_shared(self, memory: SharedMemory) -> None: ...
    def join_group(self, run_id: str, group_id: str, agent_id: str) -> None: ...
    def leave_group(self, run_id: str, group_id: str, agent_id: str) -> None: ...
    def groups_of(self, agent_id: str) -> list[str]: ...
    def visible_shared(self, agent_id: str, scope: str | None = None,
                       ids: Sequence[str] | None = None) -> list[SharedMemory]:
        """Shared memories of the agent's run it may see now (global; group while a member; bilateral when one
        of the two), optionally one scope or these ids."""
        ...
    def add_hop(self, hop: TellHop) -> None: ...
    def hops(self, memory_id: str) -> list[TellHop]:
        """Every telling of this memory, in time order (its trace from the author)."""
        ...

    # --- registry (erasure, backup, audit) --------------------------------------------------------
    def count_agent(self, agent_id: str) -> int:
        """Rows held for this agent (its WM, events, LTM records, shared memories it authored, memberships)."""
        ...
    def erase_agent(self, agent_id: str) -> int:
        """Remove every row of this agent (shared memories it authored included; hops naming it are removed)."""
        ...
    def erase_agents(self, agent_ids: Sequence[str]) -> int:
        """``erase_agent`` of each, in one transaction and one pass per table (a run's erasure)."""
        ...
    def close(self) -> None:
        """Writes the pending accesses."""
        ...


@runtime_checkable
class AgentVectors(Protocol):
    """Vectors of agents' events, LTM records and shared memories: ``layer`` is "stm", "ltm" or "shared"; the
    tenant is the agent (for "shared": the run)."""

    backend: str
    dim: int

    def upsert(self, layer: str, tenant: str, ids: Sequence[str], vectors: np.ndarray) -> int: ...
    def search(self, layer: str, tenant: str, vector: Sequence[float], limit: int,
               among: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """The tenant's nearest ids as (id, cosine), best first; only ``among`` when given."""
        ...
    def vectors_of(self, layer: str, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...
    def delete(self, layer: str, tenant: str, ids: Sequence[str]) -> int: ...
    def delete_tenant(self, layer: str, tenant: str) -> int: ...
    def count(self, layer: str, tenant: str | None = None) -> int: ...
    def collections(self) -> list[PointCollection]:
        """The layers' collections (backups, erasure's rewrite, maintenance's index builds)."""
        ...
    def points(self, layer: str) -> Iterable[tuple[str, list[float], dict[str, Any]]]:
        """Every point of the layer as (id, vector, payload): what a backup copies."""
        ...
    def close(self) -> None: ...
