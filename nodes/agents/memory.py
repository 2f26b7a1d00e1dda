"""Agents' memory, the API (P7): ``AgentMemory`` (sync) and ``AsyncAgentMemory`` (asyncio), on one Services.

    memory = AgentMemory(services, clock=lambda: sim.now)
    memory.store("agent_042", {"type": "conversation", "content": "Lila asked me to help at the farm"})
    memory.retrieve("agent_042", "who asked for help?", module="social")
    memory.update_wm("agent_042", {"current_action": None})      # the finished action becomes an STM event

Records go to ``stores.agents.tables`` (the archive's database: DuckDB embedded, PostgreSQL in server mode) and
their vectors to ``stores.agents.vectors``, tables first: a vector without its row is never returned (hits are
read back from the tables), so a crash in between loses nothing a retried store does not restore (a store with
the same event id adds nothing). The rules are nodes.agents' pure functions (importance, capacity, scoring,
consolidation, decay, prompt); shared memories are nodes.agents.shared's. ``clock()`` is the run's time in
epoch seconds (a simulation may run faster than the wall clock); every recency and decay is measured on it.

Consolidation is never run inside ``store``: an agent whose STM reaches capacity, or whose cycle
(``consolidation_interval_seconds`` of the run's clock) has passed, is queued on the memory's
ConsolidationPool; ``consolidate`` runs it now (one consolidation per agent at a time, across processes too).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time as _time
from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from lumina_memory.stores.agent_open import AgentStores, agent_stores
from lumina_memory.stores.agent_records import DEFAULT_RUN, AgentEvent, Retrieved, agent_id as check_agent
from lumina_memory.stores.errors import InvalidInput

from ..services import Services
from ..validate import redaction_kinds
from . import capacity, scoring
from .consolidation_pool import ConsolidationPool
from .events_in import check_query, event_of, wm_patch
from .importance import rule_importance
from .shared import SharedOps
from .upkeep import Upkeep
from .wm_rule import ended_events

log = logging.getLogger("lumina.agents")


class AgentMemory(SharedOps, Upkeep):
    """The P7 operations over one Services. Thread-safe: the simulation's threads and the pool's share it."""

    def __init__(self, services: Services, clock: Callable[[], float] | None = None, *, model: object | None = None):
        self.services = services
        self.params = services.settings.agents
        self.clock = clock or _time.time
        self.model = model if model is not None else services.chat_model
        """The chat model summarising clusters (None: offline, extractive summaries)."""
        self.kinds = redaction_kinds(services.settings)
        """PII kinds redacted from agents' texts before they are embedded or stored (the chat's setting)."""
        self.pool = ConsolidationPool(self._consolidate_queued, self.params.consolidation_workers)
        self._last_cycle: dict[str, float] = {}

    # --- stores ---------------------------------------------------------------------------------
    @property
    def agents(self) -> AgentStores:
        s = self.services
        return agent_stores(s.stores, s.settings, s.embedder.name, s.embedder.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.services.embedder.embed(list(texts))

    def run_of(self, agent: str) -> str:
        return self.agents.tables.run_of(check_agent(agent)) or DEFAULT_RUN

    def _register(self, agent: str, run_id: str | None) -> str:
        """The agent's run (``run_id``, or the one it has, or the default), recorded."""
        tables = self.agents.tables
        run = check_agent(run_id, "run_id") if run_id is not None else (tables.run_of(agent) or DEFAULT_RUN)
        tables.register_agent(agent, run)
        return run

    def _register_many(self, agents: Sequence[str], run_id: str | None) -> None:
        """``_register`` for a batch: one read of the agents already registered (of ``run_id``, or of any run),
        then a write for each new one only (an agent of another run is refused by ``register_agent``)."""
        tables = self.agents.tables
        run = check_agent(run_id, "run_id") if run_id is not None else DEFAULT_RUN
        known = set(tables.agents(run_id and run))
        for agent in agents:
            if agent not in known:
                tables.register_agent(agent, run)

    # --- P2 store -------------------------------------------------------------------------------
    def store(self, agent_id: str, event: AgentEvent | Mapping[str, Any], run_id: str | None = None) -> str:
        """Store one event in the agent's STM; returns its id. ``run_id``: the run the agent belongs to (an agent
        stays in its first run; None keeps the one it has, ``default`` for a new agent)."""
        return self.store_many([(agent_id, event)], run_id=run_id)[0]

    def store_many(self, events: Sequence[tuple[str, AgentEvent | Mapping[str, Any]] | AgentEvent | Mapping[str, Any]],
                   run_id: str | None = None) -> list[str]:
        """Store a batch (the simulation's path: one embedding call, one insert per agent): items are
        (agent_id, event) pairs, or events carrying their ``agent_id``. Every item is checked before anything is
        written; returns the event ids in the given order."""
        now = float(self.clock())
        made: list[AgentEvent] = []
        for item in events:
            agent, raw = item if isinstance(item, tuple) else (_agent_of(item), item)
            made.append(event_of(agent, raw, now, lambda e: rule_importance(e, self.params), self.kinds))
        if not made:
            return []
        self._write_events(made, run_id)
        return [e.event_id for e in made]

    def _write_events(self, events: Sequence[AgentEvent], run_id: str | None) -> None:
        by_agent: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(events):
            by_agent[e.agent_id].append(i)
        self._register_many(list(by_agent), run_id)
        vectors = self.embed([e.content for e in events])
        st = self.agents
        st.tables.add_events(events)
        for agent, rows in by_agent.items():
            st.vectors.upsert("stm", agent, [events[i].event_id for i in rows], vectors[rows])
        now = float(self.clock())
        cap = capacity.stm_capacity(self.params)
        counts = st.tables.count_events_many(by_agent)
        for agent in by_agent:
            if counts[agent] >= cap:
                self.pool.request(agent, "capacity")
            elif self._cycle_due(agent, now):
                self.pool.request(agent, "cycle")

    def _cycle_due(self, agent: str, now: float) -> bool:
        last = self._last_cycle.setdefault(agent, now)
        return now - last >= capacity.consolidation_interval_seconds(self.params)

    # --- P6 retrieve ----------------------------------------------------------------------------
    def retrieve(self, agent_id: str, query: str, module: str = "default", top_k: int | None = None,
                 layers: Sequence[str] | None = None, *, weights: tuple[float, float, float] | None = None
                 ) -> list[Retrieved]:
        """The agent's memories for ``query`` ranked with ``module``'s weights (or ``weights``), from the module's
        layers (or ``layers``), merged and deduplicated by source events; LTM hits returned count as accesses."""
        agent = check_agent(agent_id)
        query = check_query(query, self.kinds)
        k = scoring.top_k_for(module, self.params, top_k)
        chosen = scoring.layers_for(module, self.params, layers)
        w = weights if weights is not None else scoring.weights_for(module, self.params)
        now = float(self.clock())
        qvec = self.embed([query])[0]
        found: dict[str, list[Retrieved]] = {}
        st = self.agents
        limit = max(self.params.candidates_per_layer, k)
        if "wm" in chosen:
            found["wm"] = self._wm_candidates(agent, qvec, now, w)
        if "stm" in chosen:
            hits = dict(st.vectors.search("stm", agent, qvec, limit))
            events = st.tables.events(agent, ids=list(hits)) if hits else []
            found["stm"] = scoring.score_candidates("stm", events, [hits[e.event_id] for e in events], now, w,
                                                    self.params.decay_lambda)
        if "ltm" in chosen:
            hits = dict(st.vectors.search("ltm", agent, qvec, limit))
            records = st.tables.ltm(agent, ids=list(hits)) if hits else []
            found["ltm"] = scoring.score_candidates("ltm", records, [hits[r.memory_id] for r in records], now, w,
                                                    self.params.decay_lambda)
        results = scoring.merge(found, k)
        touched = [r.id for r in results if r.layer == "ltm"]
        if touched:
            st.tables.touch_ltm(agent, touched, now)
        return results

    def _wm_candidates(self, agent: str, qvec: np.ndarray, now: float, w: tuple[float, float, float]
                       ) -> list[Retrieved]:
        """The WM's fields as results: relevance is the cosine of ``key: value`` with the query, recency 1 (the WM
        is the present), importance 0.5 (neutral: the WM is not scored by P3)."""
        doc = self.agents.tables.get_wm(agent) or {}
        fields = [(k, v) for k, v in doc.items() if v not in (None, "", [], {})]
        if not fields:
            return []
        texts = [f"{k}: {_flat(v)}" for k, v in fields]
        rel = self.embed(texts) @ np.asarray(qvec, dtype=np.float32)
        alpha, beta, gamma = w
        out = [Retrieved(layer="wm", id=f"wm:{k}", content=t, score=round(alpha * float(r) + beta + gamma * 0.5, 6),
                         relevance=round(float(r), 6), recency=1.0, importance=0.5, time=now, type="wm")
               for (k, _), t, r in zip(fields, texts, rel)]
        return sorted(out, key=lambda r: -r.score)

    # --- P1 working memory ----------------------------------------------------------------------
    def get_wm(self, agent_id: str) -> dict[str, Any]:
        return self.agents.tables.get_wm(check_agent(agent_id)) or {}

    def update_wm(self, agent_id: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``patch`` into the WM (a None value removes a key); a finished ``current_action`` or an ended
        ``current_conversation`` becomes an STM event when its importance reaches ``wm_to_stm_min_importance``
        (nodes.agents.wm_rule). Returns the WM after the merge."""
        agent = check_agent(agent_id)
        patch = wm_patch(patch, self.kinds)
        tables = self.agents.tables
        before = tables.get_wm(agent) or {}
        now = float(self.clock())
        ended = [event_of(agent, raw, now, lambda e: rule_importance(e, self.params), self.kinds)
                 for raw in ended_events(agent, before, patch, now)]
        if tables.run_of(agent) is None:
            self._register(agent, None)
        doc = tables.merge_wm(agent, patch)
        keep = [e for e in ended if e.importance >= self.params.wm_to_stm_min_importance]
        if keep:
            self._write_events(keep, None)
        return doc

    # --- the prompt (P1) --------------------------------------------------------------------------
    def assemble_prompt(self, agent_id: str, query: str, module: str = "default", *,
                        sections: Mapping[str, Any] | None = None, adjust: Mapping[str, float] | None = None,
                        system: str = "", alerts: Sequence[str] = (), top_k: int | None = None,
                        memories: Sequence[Retrieved] | None = None):
        """G's assembler (nodes.agents.prompt) fed with the agent's WM, goals (``active_goals``), social
        situation (``nearby_agents``), memories (``retrieve`` + the shared ones it may see, or ``memories``
        when the caller retrieved them already) and alerts; ``sections`` replaces any of them, ``adjust``
        shifts the budget split for this call."""
        from .prompt import assemble_prompt

        agent = check_agent(agent_id)
        wm = self.get_wm(agent)
        if memories is None:
            memories = [*self.retrieve(agent, query, module, top_k=top_k), *self.retrieve_shared(agent, query)]
        given = {
            "system": system,
            "working_memory": {k: v for k, v in wm.items() if k not in ("active_goals", "nearby_agents", "alerts")},
            "goals": [str(g) for g in wm.get("active_goals", [])],
            "social": [_flat(a) for a in wm.get("nearby_agents", [])],
            "memories": [r.content for r in sorted(memories, key=lambda r: -r.score)],
            "alerts": [*map(str, wm.get("alerts", [])), *alerts],
        }
        given.update(dict(sections or {}))
        return assemble_prompt(given, adjust=adjust, params=self.params)

    def close(self) -> None:
        self.pool.close()


def _agent_of(event: AgentEvent | Mapping[str, Any]) -> str:
    agent = event.agent_id if isinstance(event, AgentEvent) else event.get("agent_id") if isinstance(event, Mapping) else None
    if agent is None:
        raise InvalidInput("agent_id", "an event of a batch without (agent_id, event) pairs must name its agent")
    return agent


def _flat(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_flat(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_flat(v) for v in value)
    return str(value)


class AsyncAgentMemory:
    """The same operations for asyncio: each runs ``AgentMemory``'s in a worker thread (``asyncio.to_thread``),
    so the event loop never waits on an embedding or a store."""

    OPERATIONS = ("store", "store_many", "retrieve", "update_wm", "get_wm", "consolidate", "maintenance",
                  "store_shared", "retrieve_shared", "tell", "trace", "join_group", "leave_group", "assemble_prompt")

    def __init__(self, services: Services, clock: Callable[[], float] | None = None, *, model: object | None = None):
        self.sync = AgentMemory(services, clock, model=model)

    def __getattr__(self, name: str):
        if name not in self.OPERATIONS:
            raise AttributeError(name)
        method = getattr(self.sync, name)

        @functools.wraps(method)
        async def call(*args, **kwargs):
            return await asyncio.to_thread(method, *args, **kwargs)

        return call

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)
