"""Erasing agents (issue 48): one agent, or every agent of a run, through the registry like a user.

An agent id is erased by ``graphs.erase.erase_user`` (every place, the ``agents`` place included: its rows, its
vectors, its shared memories and tellings, its id in other agents' rows, backups, the erasure ledgers and the
audit log). A run is the agents registered in it, erased together (``graphs.erase.erase_decided``: every place
erases them all, then rewrites its files once); the run's shared memories go with their authors, so nothing of
the run is left.
"""

from __future__ import annotations

from typing import Any

from lumina_memory.nodes.services import Services
from lumina_memory.stores.agent_open import agent_stores
from lumina_memory.stores.agent_records import agent_id as check_agent

from .erase import erase_decided, erase_plan, erase_user


def run_agents(services: Services, run_id: str) -> list[str]:
    """The agents registered in ``run_id``, sorted."""
    run = check_agent(run_id, "run_id")
    s = services
    return agent_stores(s.stores, s.settings, s.embedder.name, s.embedder.dim).tables.agents(run)


def erase_agent(services: Services, agent_id: str, *, actor: str = "api") -> dict[str, Any]:
    """Erase one agent everywhere (the plan's token is taken and spent at once: the caller has decided)."""
    agent = check_agent(agent_id)
    return erase_user(services, agent, erase_plan(services, agent)["token"], actor=actor)


def erase_run(services: Services, run_id: str, *, actor: str = "api") -> dict[str, Any]:
    """Erase every agent of the run in one pass (each place erases them all, then rewrites its files once:
    one copy of the archive's file, one rewrite per vector layer); returns the agents and the records removed
    per place (summed). Each agent still gets its ledger entries, backups rewritten and audit entry."""
    agents = run_agents(services, run_id)
    removed = erase_decided(services, agents, actor=actor)["removed"] if agents else {}
    return {"run_id": run_id, "agents": agents, "removed": removed}
