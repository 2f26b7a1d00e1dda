"""Shared memories, groups and tellings of ``SqlAgentTables`` (P7): every write names the agents it touches and
registers them in the memory's run; reads go through the visibility rule (``agent_tables_sql.select_visible``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import agent_tables_sql as q
from .agent_records import SCOPES, SharedMemory, TellHop
from .agent_records import agent_id as _agent
from .agent_rows import finite, ids_of, shared_memory, shared_row
from .errors import InvalidInput
from .ids import validate_id


class SharedMemoryTables:
    """Mixed into SqlAgentTables, which gives ``db``, ``_tx``, ``_register`` and ``_run``."""

    def add_shared(self, memory: SharedMemory) -> None:
        """Store (or replace, by its author) a shared memory; its author (and a bilateral memory's other agent)
        belong to its run from now on: an agent of another run is refused."""
        row = shared_row(memory)
        memory_id, run, author = row[0], row[1], row[2]
        # The run's stamp moves too: what every agent of the run may see changed. Its row, locked until COMMIT on
        # PostgreSQL, also makes two processes storing one id in a run take turns, so the check below sees the other.
        with self._tx({author, run, *row[5]}) as con:
            held = con.execute(q.SHARED_OWNERS, [[memory_id]]).fetchone()
            if held is not None and (held[1], held[2]) != (run, author):
                raise InvalidInput("memory_id", f"{memory_id!r} is another author's or another run's memory")
            for agent in (author, *row[5]):
                self._register(con, agent, run)
            con.execute(q.UPSERT_SHARED, q.batch_parameters(q.SHARED_COLUMNS, [row])).fetchall()

    def join_group(self, run_id: str, group_id: str, agent_id: str) -> None:
        """``agent_id`` is a member of the run's group from now on (and of the run, if it was of none)."""
        run, group, agent = validate_id(run_id, "run_id"), validate_id(group_id, "group_id"), _agent(agent_id)
        with self._tx((agent,)) as con:
            self._register(con, agent, run)
            con.execute(q.JOIN, [run, group, agent])

    def leave_group(self, run_id: str, group_id: str, agent_id: str) -> None:
        run, group, agent = validate_id(run_id, "run_id"), validate_id(group_id, "group_id"), _agent(agent_id)
        with self._tx((agent,)) as con:
            con.execute(q.LEAVE, [run, group, agent])

    def groups_of(self, agent_id: str) -> list[str]:
        agent = _agent(agent_id)
        with self.db.read() as con:
            return [r[0] for r in con.execute(q.GROUPS_OF, [agent, self._run(agent)]).fetchall()]

    def visible_shared(self, agent_id: str, scope: str | None = None,
                       ids: Sequence[str] | None = None) -> list[SharedMemory]:
        """What the agent may see now, oldest first (an agent never registered is of the default run)."""
        agent = _agent(agent_id)
        if scope is not None and scope not in SCOPES:
            raise InvalidInput("scope", f"must be one of {SCOPES}, got {scope!r}")
        params: list[Any] = [self._run(agent), agent, agent]
        if scope is not None:
            params.append(scope)
        if ids is not None:
            params.append(ids_of(ids, "memory_id"))
        with self.db.read() as con:
            rows = con.execute(q.select_visible(scope is not None, ids is not None), params).fetchall()
        return [shared_memory(r) for r in rows]

    def add_hop(self, hop: TellHop) -> None:
        """Record one telling (the same telling again adds nothing)."""
        row = [validate_id(hop.memory_id, "memory_id"), _agent(hop.from_agent, "from_agent"),
               _agent(hop.to_agent, "to_agent"), finite(hop.time, "time"),
               None if hop.event_id is None else validate_id(hop.event_id, "event_id")]
        with self._tx((row[1], row[2])) as con:
            con.execute(q.INSERT_HOP, row)

    def hops(self, memory_id: str) -> list[TellHop]:
        with self.db.read() as con:
            rows = con.execute(q.HOPS_OF, [validate_id(memory_id, "memory_id")]).fetchall()
        return [TellHop(**dict(zip(q.names(q.HOP_COLUMNS), r))) for r in rows]
