"""Agents' stores of an open ``Stores``: the agent tables (on the archive's connection) and the agent vectors.

Opened on first use (a chat-only memory never touches them) and kept on ``Stores.agents``, which ``Stores.close``
closes. The tables follow the archive (DuckDB embedded, PostgreSQL in server mode); the vectors follow the other
collections (qdrant-edge by default, Qdrant with QDRANT_URL, pgvector in server mode).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .protocols_agents import AgentTables, AgentVectors

_opening = threading.Lock()


@dataclass
class AgentStores:
    tables: AgentTables
    vectors: AgentVectors

    def close(self) -> None:
        try:
            self.tables.close()  # its pending accesses written; the connection is the archive's, closed with it
        finally:
            self.vectors.close()


def agent_stores(stores, settings, embedder_name: str, dim: int) -> AgentStores:
    """``stores.agents``, opened now if it was not yet."""
    with _opening:
        if stores.agents is None:
            from .agent_vectors import open_agent_vectors

            tables = stores.archive.agent_tables()
            accesses = getattr(tables, "accesses", None)
            if accesses is not None:  # the SQL adapter's pending accesses (stores.agent_accesses), bounded here
                accesses.max_pending = settings.agents.access_flush_records
                accesses.max_age_seconds = settings.agents.access_flush_seconds
                tables.cluster_min_rows = settings.agents.ltm_cluster_min_rows
                tables.cluster_share = settings.agents.ltm_cluster_share
            stores.agents = AgentStores(
                tables, open_agent_vectors(settings, embedder_name, dim, pg_pool=stores.pg_pool))
        return stores.agents
