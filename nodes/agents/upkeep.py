"""Consolidation (P4) and forgetting (P5) of one agent, the ``AgentMemory`` operations that rewrite its layers.

``consolidate`` moves STM events into LTM records (nodes.agents.consolidation): the oldest events beyond half of
the STM's capacity (all of them when forced), so the newest half stays searchable as events. The order of the
writes makes a crash harmless: the records' vectors first (a vector without its row is never returned), then
the records and the deletion of their events in one transaction (``AgentTables.consolidated``), then the events'
vectors. One consolidation per agent at a time: a lock per agent in this process and a lease across processes
(``agents.consolidate:<agent>``); a second caller waits for the first, then finds nothing left to do.

``maintenance`` first embeds again any row whose vector a crash left unwritten, then applies the forgetting plan (nodes.agents.decay.forgetting_plan): never-used faded records are
deleted; when the agent holds ``compress_at`` of ``ltm_cap`` records, the compression candidates are merged,
cluster by cluster (their vectors at ``cluster_cosine``, nodes.agents.consolidation.cluster), into one record
each that keeps every member's content, source events and accesses; every record's decay factor is stored.
Under ``memory_model="lifecycle"`` the chat's emotion-weighted lifecycle replaces that plan
(nodes.agents.lifecycle_model): compressed records are rewritten and embedded again, archived ones deleted.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from lumina_memory.stores.agent_records import LtmRecord, agent_id as check_agent
from lumina_memory.stores.leases import LeaseBusy, leases_of

from . import capacity
from .consolidation import cluster, consolidate_events, ltm_id
from .decay import forgetting_plan
from .lifecycle_model import COMPRESSION_PATH, EMOTION_PATH, lifecycle_plan

log = logging.getLogger("lumina.agents")

CONSOLIDATE_WAIT = 600.0
"""Seconds a consolidation waits for another process's consolidation of the same agent."""
TYPE_RANK = {"episodic": 0, "semantic": 1, "procedural": 2}


class Upkeep:
    """Mixed into AgentMemory (which provides services, params, clock, model, agents, embed, pool)."""

    def consolidate(self, agent_id: str, force: bool = False, *, wait: float = CONSOLIDATE_WAIT) -> int:
        """Consolidate the agent's STM now; returns the LTM records made (0 when STM holds less than half its
        capacity and ``force`` is False). Another process consolidating the agent is waited for at most ``wait``
        seconds (then LeaseBusy)."""
        agent = check_agent(agent_id)
        with self.pool.locks.hold(agent):
            lease = f"agents.consolidate:{agent}"
            with leases_of(self.services).hold(lease, wait=wait) as got:
                if not got:
                    raise LeaseBusy(lease, wait, f"consolidating {agent}")
                return self._consolidate(agent, force)

    def _consolidate_queued(self, agent: str) -> int:
        """The pool's job: consolidate when due (capacity, cycle), never forced; when another process holds the
        agent's lease it is consolidating it already, and the job is skipped (LeaseBusy, counted by the pool)."""
        self._last_cycle[agent] = float(self.clock())
        return self.consolidate(agent, force=False, wait=0)

    def _consolidate(self, agent: str, force: bool) -> int:
        st = self.agents
        keep = 0 if force else capacity.stm_capacity(self.params) // 2
        total = st.tables.count_events(agent)
        if total <= keep or total == 0:
            return 0
        events = st.tables.events(agent, total - keep)  # the oldest
        stored = st.vectors.vectors_of("stm", agent, [e.event_id for e in events])
        missing = [e for e in events if e.event_id not in stored]
        if missing:  # a crash between an event's row and its vector: embedded again
            fresh = self.embed([e.content for e in missing])
            stored.update({e.event_id: v for e, v in zip(missing, fresh)})
        matrix = np.vstack([stored[e.event_id] for e in events])
        records, consumed = consolidate_events(agent, events, matrix, float(self.clock()), self.params, self.model)
        if records:
            st.vectors.upsert("ltm", agent, [r.memory_id for r in records], self.embed([r.content for r in records]))
        st.tables.consolidated(agent, records, consumed)
        st.vectors.delete("stm", agent, consumed)
        log.info("agent %s: %d events consolidated into %d records", agent, len(consumed), len(records))
        return len(records)

    def maintenance(self, agent_id: str) -> dict[str, Any]:
        """Apply the forgetting plan to the agent's LTM; returns what was done (counts and the model in force)."""
        agent = check_agent(agent_id)
        st = self.agents
        model = self.params.memory_model
        report: dict[str, Any] = {"agent_id": agent, "memory_model": model, "deleted": 0, "compressed": 0,
                                  "merged_into": 0}
        with self.pool.locks.hold(agent):
            report["vectors_restored"] = self._restore_vectors(agent)
            if model == "lifecycle":
                report.update(self._lifecycle(agent))
                return report
            records = st.tables.ltm(agent)
            plan = forgetting_plan(records, float(self.clock()), self.params)
            if plan.delete:
                report["deleted"] = st.tables.delete_ltm(agent, plan.delete)
                st.vectors.delete("ltm", agent, plan.delete)
            gone = set(plan.delete)
            merged, replaced = self._compress(agent, [r for r in records if r.memory_id in set(plan.compress)])
            kept = [r.model_copy(update={"decay_factor": plan.decay.get(r.memory_id, r.decay_factor)})
                    for r in records if r.memory_id not in gone and r.memory_id not in replaced]
            if merged:
                st.vectors.upsert("ltm", agent, [r.memory_id for r in merged], self.embed([r.content for r in merged]))
            st.tables.add_ltm([*kept, *merged])
            if replaced:
                st.tables.delete_ltm(agent, sorted(replaced))
                st.vectors.delete("ltm", agent, sorted(replaced))
            report.update(compressed=len(replaced), merged_into=len(merged), ltm_count=st.tables.count_ltm(agent))
        return report

    def _lifecycle(self, agent: str) -> dict[str, Any]:
        """The chat's lifecycle on the agent's records (nodes.agents.lifecycle_model): archived ones deleted,
        compressed ones rewritten and embedded again from their new text, every record's retention / 100 stored
        as its decay factor."""
        st = self.agents
        records = st.tables.ltm(agent)
        plan = lifecycle_plan(records, float(self.clock()), self.params, self.services.settings.lifecycle)
        if plan.delete:
            st.tables.delete_ltm(agent, plan.delete)
            st.vectors.delete("ltm", agent, plan.delete)
        rewritten = {r.memory_id: r for r in plan.rewrite}
        if plan.rewrite:  # vectors first: a crash leaves the old text with the new vector, repaired by the next run
            st.vectors.upsert("ltm", agent, list(rewritten), self.embed([r.content for r in plan.rewrite]))
        gone = set(plan.delete)
        kept = [rewritten.get(r.memory_id, r).model_copy(
                    update={"decay_factor": round(plan.retention[r.memory_id] / 100.0, 6)})
                for r in records if r.memory_id not in gone]
        st.tables.add_ltm(kept)
        levels = [plan.level[r.memory_id] for r in records]
        return {"deleted": len(plan.delete), "compressed": len(plan.rewrite), "ltm_count": st.tables.count_ltm(agent),
                "levels": {str(v): levels.count(v) for v in sorted(set(levels))},
                "emotion_path": EMOTION_PATH, "compression_path": COMPRESSION_PATH}

    def _restore_vectors(self, agent: str) -> int:
        """Crash recovery: rows whose vector a crash left unwritten (a store dies between its two writes) are
        embedded again, so retrieval finds them; returns how many."""
        st = self.agents
        rows = {"stm": {e.event_id: e.content for e in st.tables.events(agent)},
                "ltm": {r.memory_id: r.content for r in st.tables.ltm(agent)}}
        restored = 0
        for layer, texts in rows.items():
            have = st.vectors.vectors_of(layer, agent, list(texts)) if texts else {}
            missing = [i for i in texts if i not in have]
            if missing:
                st.vectors.upsert(layer, agent, missing, self.embed([texts[i] for i in missing]))
                restored += len(missing)
        return restored

    def _compress(self, agent: str, candidates: list[LtmRecord]) -> tuple[list[LtmRecord], set[str]]:
        """Candidates merged by cluster: the merged records and the ids they replace (singletons stay)."""
        if len(candidates) < 2:
            return [], set()
        vectors = self.agents.vectors.vectors_of("ltm", agent, [r.memory_id for r in candidates])
        candidates = [r for r in candidates if r.memory_id in vectors]
        if len(candidates) < 2:
            return [], set()
        matrix = np.vstack([vectors[r.memory_id] for r in candidates])
        merged, replaced = [], set()
        for members in cluster(matrix, self.params.cluster_cosine):
            if len(members) < 2:
                continue
            group = [candidates[i] for i in members]
            merged.append(_merged(agent, group))
            replaced |= {r.memory_id for r in group}
        return merged, replaced


def _merged(agent: str, group: list[LtmRecord]) -> LtmRecord:
    """One record standing for ``group``: every content kept (joined), sources, tags and accesses summed."""
    sources = list(dict.fromkeys(s for r in group for s in (r.source_events or [r.memory_id])))
    accessed = [r.last_accessed for r in group if r.last_accessed is not None]
    return LtmRecord(
        memory_id=ltm_id(agent, sources), agent_id=agent, created_at=min(r.created_at for r in group),
        last_accessed=max(accessed) if accessed else None, access_count=sum(r.access_count for r in group),
        type=max((r.type for r in group), key=TYPE_RANK.__getitem__),
        content="\n".join(r.content for r in group), summary=group[0].summary,
        importance=max(r.importance for r in group), tags=list(dict.fromkeys(t for r in group for t in r.tags)),
        source_events=sources)
