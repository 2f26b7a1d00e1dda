"""Shared memories (P7): stored by an author for a scope, retrieved only by agents that may see them, told onward.

Scopes (``AgentTables.visible_shared`` decides, at every read): ``global`` (every agent of the author's run),
``group`` (the members of ``group_id`` at the time of the read: joining or leaving applies at once; the author
must be a member when it shares), ``bilateral`` (exactly the author and one other agent). A shared memory's
vector lives in the run's tenant of the "shared" layer; a search is restricted to the ids the agent may see
(``vectors.search(among=...)``), never filtered after a top-k.

Telling (``tell``): an agent that can see a memory tells it to another agent of its run. The hop is recorded
(``TellHop``, under the memory's *root*: the memory first stored). When the receiver cannot see the memory yet
(a bilateral one between others, a group it is not in) it receives a bilateral memory between the teller and
itself: a new memory with the root's content, importance, tags and ``source_events`` (provenance kept), the
teller as its author and the tag ``told_from:<root id>``; the root's audience is never widened, so leaving a
group still hides the group's memory itself. ``trace`` returns every hop of the root, in time order.
"""

from __future__ import annotations

import uuid
from typing import Any, Mapping

from lumina_memory.stores.agent_records import Retrieved, SharedMemory, TellHop, agent_id as check_agent
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import NAMESPACE

from . import scoring
from .events_in import check_query, shared_of

TOLD_FROM = "told_from:"


class NotVisible(InvalidInput):
    """An agent asked to tell (or trace) a shared memory it cannot see: refused, and nothing is revealed."""

    def __init__(self, agent: str, memory_id: str):
        super().__init__("memory_id", f"{memory_id[:40]!r} is not a shared memory {agent!r} can see")


def root_of(memory: SharedMemory) -> str:
    for tag in memory.tags:
        if tag.startswith(TOLD_FROM):
            return tag[len(TOLD_FROM):]
    return memory.memory_id


class SharedOps:
    """Mixed into AgentMemory (which provides params, clock, agents, embed, run_of, _register)."""

    def store_shared(self, memory: SharedMemory | Mapping[str, Any] | str, scope: str = "global",
                     visible_to: list[str] | None = None, group_id: str | None = None, *,
                     author: str | None = None) -> str:
        """Store a memory shared in the author's run; returns its id. ``memory``: a text, a dict (content,
        memory_id, importance, tags, source_events) or a SharedMemory (its author, scope and audience apply)."""
        given_author = memory.author if isinstance(memory, SharedMemory) else author
        if given_author is None:
            raise InvalidInput("author", "a shared memory needs its author (an agent id)")
        writer = check_agent(given_author, "author")
        run = self._register(writer, None)
        made = shared_of(memory, author=writer, scope=scope, run_id=run, visible_to=visible_to, group_id=group_id,
                         now=float(self.clock()), kinds=self.kinds)
        if made.run_id != run:
            raise InvalidInput("run_id", f"{writer!r} belongs to run {run!r}, not {made.run_id!r}")
        tables = self.agents.tables
        if made.scope == "group" and made.group_id not in tables.groups_of(writer):
            raise InvalidInput("group_id", f"{writer!r} is not a member of group {made.group_id!r}")
        for other in made.visible_to:
            other_run = tables.run_of(other)
            if other_run is not None and other_run != run:
                raise InvalidInput("visible_to", f"{other!r} belongs to another run")
        vector = self.embed([made.content])
        tables.add_shared(made)
        self.agents.vectors.upsert("shared", run, [made.memory_id], vector)
        return made.memory_id

    def retrieve_shared(self, agent_id: str, query: str, scope: str | None = None, top_k: int = 5,
                        module: str = "default") -> list[Retrieved]:
        """The shared memories ``agent_id`` may see now, nearest to ``query`` and scored with ``module``'s
        weights (layer "shared", with author and source events)."""
        agent = check_agent(agent_id)
        query = check_query(query, self.kinds)
        k = scoring.top_k_for(module, self.params, top_k)
        if scope is not None and scope not in ("global", "group", "bilateral"):
            raise InvalidInput("scope", f"choose global, group or bilateral, got {str(scope)[:40]!r}")
        tables = self.agents.tables
        visible = {m.memory_id: m for m in tables.visible_shared(agent, scope)}
        if not visible:
            return []
        run = self.run_of(agent)
        qvec = self.embed([query])[0]
        limit = max(self.params.candidates_per_layer, k)
        hits = self.agents.vectors.search("shared", run, qvec, limit, among=sorted(visible))
        found = [(visible[i], cos) for i, cos in hits if i in visible]
        scored = scoring.score_candidates("shared", [m for m, _ in found], [c for _, c in found],
                                          float(self.clock()), scoring.weights_for(module, self.params),
                                          self.params.decay_lambda)
        return scored[:k]

    def _visible(self, agent: str, memory_id: str) -> SharedMemory:
        check_agent(memory_id, "memory_id")
        seen = self.agents.tables.visible_shared(agent, ids=[memory_id])
        if not seen:
            raise NotVisible(agent, memory_id)
        return seen[0]

    def tell(self, memory_id: str, from_agent: str, to_agent: str, event_id: str | None = None) -> str:
        """``from_agent`` tells ``to_agent`` a shared memory it can see; returns the id ``to_agent`` sees it by
        (the memory's own when it already could, else its bilateral copy). The hop is recorded either way."""
        teller, hearer = check_agent(from_agent, "from_agent"), check_agent(to_agent, "to_agent")
        if teller == hearer:
            raise InvalidInput("to_agent", "an agent does not tell itself")
        if event_id is not None:
            check_agent(event_id, "event_id")
        memory = self._visible(teller, memory_id)
        tables = self.agents.tables
        run = self.run_of(teller)
        hearer_run = tables.run_of(hearer)
        if hearer_run is not None and hearer_run != run:
            raise InvalidInput("to_agent", f"{hearer!r} belongs to another run")
        root = root_of(memory)
        now = float(self.clock())
        seen_by_hearer = tables.visible_shared(self._registered(hearer, run), ids=[memory.memory_id])
        received = memory.memory_id
        if not seen_by_hearer:
            received = "told-" + uuid.uuid5(NAMESPACE, f"agent-told|{root}|{teller}|{hearer}").hex
            copy = SharedMemory(memory_id=received, run_id=run, author=teller, scope="bilateral",
                                visible_to=[teller, hearer], created_at=now, content=memory.content,
                                importance=memory.importance,
                                tags=[*(t for t in memory.tags if not t.startswith(TOLD_FROM)), TOLD_FROM + root],
                                source_events=list(memory.source_events))
            if not tables.visible_shared(hearer, ids=[received]):
                tables.add_shared(copy)
                self.agents.vectors.upsert("shared", run, [received], self.embed([copy.content]))
        tables.add_hop(TellHop(memory_id=root, from_agent=teller, to_agent=hearer, time=now, event_id=event_id))
        return received

    def _registered(self, agent: str, run: str) -> str:
        self._register(agent, run)
        return agent

    def trace(self, memory_id: str, agent_id: str | None = None) -> list[TellHop]:
        """Every telling of the memory, in time order, from its author on. ``agent_id``: read the memory as that
        agent sees it, so a told copy's id traces its root (a copy's id without the agent traces nothing)."""
        check_agent(memory_id, "memory_id")
        root = memory_id
        if agent_id is not None:
            root = root_of(self._visible(check_agent(agent_id), memory_id))
        return self.agents.tables.hops(root)

    def join_group(self, agent_id: str, group_id: str) -> None:
        agent = check_agent(agent_id)
        self.agents.tables.join_group(self._register(agent, None), check_agent(group_id, "group_id"), agent)

    def leave_group(self, agent_id: str, group_id: str) -> None:
        agent = check_agent(agent_id)
        self.agents.tables.leave_group(self.run_of(agent), check_agent(group_id, "group_id"), agent)
