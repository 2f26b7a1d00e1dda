"""Agents' records (PIANO, issue 48) on the archive's connection: ``AgentTables`` for DuckDB and PostgreSQL.

One adapter for both engines (the statements are in ``agent_tables_sql``, written once; the rows' checks in
``agent_rows``). Every write names the agents it touches (``tx(touches=...)``), so their write stamps move and
another process's caches of them see the write; on PostgreSQL the stamp rows are locked until COMMIT, which makes a
read-modify-write of one agent (the working memory's merge) take turns across processes. Every read is confined to
one agent by exact equality of validated ids; shared memories are read through the visibility rule
(``visible_shared``), and a write of one moves its run's stamp as well (the run id is the key), since what every
agent of the run may see changed.

Bad input is refused as ``InvalidInput`` before anything is written: hostile or malformed ids, empty content,
text that is not valid Unicode, times that are not finite, JSON that is not JSON, a bilateral memory that is not
between exactly two agents including its author, an agent moved to another run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator

from . import agent_tables_sql as q
from .agent_records import DEFAULT_RUN, AgentEvent, LtmRecord
from .agent_records import agent_id as _agent
from .agent_accesses import PendingAccesses
from .agent_events_cache import EventsCache
from .agent_tables_shared import SharedMemoryTables
from .agent_rows import event, event_row, finite, ids_of, json_text, ltm_record, ltm_row
from .errors import InvalidInput
from .ids import validate_id
from .settings_agents import AgentParams
from .sql_connection import SqlConnection


class SqlAgentTables(SharedMemoryTables):
    """``AgentTables`` over the archive's ``SqlConnection`` (its file in the embedded mode, its server in the
    server mode); the schema is the ``agents`` component's migrations."""

    def __init__(self, db: SqlConnection):
        self.db = db
        self.dialect = db.dialect
        db.migrate("agents", [q.step1(db.dialect)])
        # One writer (an embedded file): STM reads come from this process's copy (stores.agent_events_cache;
        # its ``loads`` count the reads that went to the table). None where other processes write.
        self.events_cache = None if db.shared else EventsCache(db)
        # Retrievals' accesses of LTM records, written with the next write (stores.agent_accesses); its bounds are
        # settings.agents.access_flush_* (set by stores.agent_open).
        defaults = AgentParams()
        self.accesses = PendingAccesses(defaults.access_flush_records, defaults.access_flush_seconds)
        # DuckDB: LTM rows written since the table was last ordered by agent (cluster_ltm), and when to order it
        # again (settings.agents.ltm_cluster_*, set by stores.agent_open).
        self.ltm_written = 0
        self.cluster_min_rows, self.cluster_share = defaults.ltm_cluster_min_rows, defaults.ltm_cluster_share

    # --- agents and runs --------------------------------------------------------------------------
    def _register(self, con, agent: str, run: str) -> None:
        """Inside a write: ``agent`` belongs to ``run`` from now on (refused if it belongs to another)."""
        con.execute(q.REGISTER, [agent, run])
        (held,) = con.execute(q.RUN_OF, [agent]).fetchone()
        if held != run:
            raise InvalidInput("run_id", f"agent {agent!r} belongs to run {held!r}, not {run!r}")

    def register_agent(self, agent_id: str, run_id: str) -> None:
        agent, run = _agent(agent_id), validate_id(run_id, "run_id")
        with self._tx((agent,)) as con:
            self._register(con, agent, run)

    def run_of(self, agent_id: str) -> str | None:
        with self.db.read() as con:
            row = con.execute(q.RUN_OF, [_agent(agent_id)]).fetchone()
        return None if row is None else row[0]

    def _run(self, agent: str) -> str:
        """The agent's run; an agent never registered is of the default run."""
        return self.run_of(agent) or DEFAULT_RUN

    def agents(self, run_id: str | None = None) -> list[str]:
        with self.db.read() as con:
            if run_id is None:
                rows = con.execute(q.AGENTS_ALL).fetchall()
            else:
                rows = con.execute(q.AGENTS_OF_RUN, [validate_id(run_id, "run_id")]).fetchall()
        return [r[0] for r in rows]

    # --- working memory (P1) ----------------------------------------------------------------------
    def get_wm(self, agent_id: str) -> dict[str, Any] | None:
        with self.db.read() as con:
            row = con.execute(q.WM_GET, [_agent(agent_id)]).fetchone()
        return None if row is None else json.loads(row[0])

    def merge_wm(self, agent_id: str, patch: dict[str, Any]) -> dict[str, Any]:
        agent = _agent(agent_id)
        if not isinstance(patch, dict) or not all(isinstance(k, str) for k in patch):
            raise InvalidInput("patch", "must be a JSON object (a dict with text keys)")
        json_text(patch, "patch")
        # The agent's stamp row is written first thing in tx() and stays locked until COMMIT (PostgreSQL), so a
        # second process's merge of this agent waits here and then reads this one's document: both land.
        with self._tx((agent,)) as con:
            row = con.execute(q.WM_GET, [agent]).fetchone()
            doc = {} if row is None else json.loads(row[0])
            for key, value in patch.items():
                if value is None:
                    doc.pop(key, None)
                else:
                    doc[key] = value
            con.execute(q.WM_PUT, [agent, json_text(doc, "patch")])
        return doc

    # --- short-term events (P2) -------------------------------------------------------------------
    def add_events(self, events: Sequence[AgentEvent]) -> int:
        rows: dict[tuple[str, str], list[Any]] = {}
        for e in events:
            row = event_row(e)
            rows.setdefault((row[1], row[0]), row)  # an id twice in one batch: the first, as a retry keeps it
        if not rows:
            return 0
        agents = {agent for agent, _ in rows}
        with self._with_accesses() as (accessed, write_accesses), self._writing(agents) as committed:
            with self.db.tx(touches=agents | accessed) as con:
                written = con.execute(q.INSERT_EVENTS, q.batch_parameters(q.EVENT_COLUMNS, list(rows.values())))
                new = {(r[0], r[1]) for r in written.fetchall()}
                write_accesses(con)
            added: dict[str, list[tuple]] = {}
            for key, row in rows.items():
                if key in new:
                    added.setdefault(key[0], []).append(tuple(row))
            committed(added, {})
        return sum(len(v) for v in added.values())

    def events(self, agent_id: str, limit: int | None = None, *, newest: bool = False,
               ids: Sequence[str] | None = None) -> list[AgentEvent]:
        agent = _agent(agent_id)
        among = None if ids is None else ids_of(ids, "event_id")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidInput("limit", f"must be a whole number >= 0, got {limit!r}")
        if self.events_cache is not None:
            rows = self.events_cache.rows(agent, lambda: self._all_events(agent))
            if among is not None:
                wanted = set(among)
                rows = [r for r in rows if r[0] in wanted]
            if limit is not None:
                rows = rows[max(0, len(rows) - limit):] if newest else rows[:limit]
            return [event(r) for r in rows]
        params: list[Any] = [agent] + ([] if among is None else [among]) + [limit]
        with self.db.read() as con:
            rows = con.execute(q.select_events(among is not None, newest), params).fetchall()
        found = [event(r) for r in rows]
        return found[::-1] if newest else found

    def _all_events(self, agent: str) -> list[tuple]:
        with self.db.read() as con:
            return [tuple(r) for r in con.execute(q.select_events(False, False), [agent, None]).fetchall()]

    @contextmanager
    def _tx(self, agents: Iterable[str], *, accesses: bool = False) -> Iterator[Any]:
        """``db.tx`` over these agents for a write that changes none of their events: their STM copies kept in
        this process (stores.agent_events_cache) stay current instead of being read again. ``accesses``: the
        pending accesses are written in the same transaction, before the block's statements: a record the block
        rewrites from a read of it (which showed them) keeps them once, not twice, and those counted since that
        read (agent_tables_sql.UPSERT_LTM keeps the larger count)."""
        agents = set(agents)
        if not accesses:
            with self._writing(agents) as committed:
                with self.db.tx(touches=agents) as con:
                    yield con
                committed({}, {})
            return
        with self._with_accesses() as (accessed, write_accesses), self._writing(agents) as committed:
            with self.db.tx(touches=agents | accessed) as con:
                write_accesses(con)
                yield con
            committed({}, {})

    @contextmanager
    def _with_accesses(self) -> Iterator[tuple[set[str], Callable[[Any], int]]]:
        """Around a write: the pending accesses taken for its transaction (they are pending again if it fails);
        yields the agents they touch (their stamp rows, locked in order on PostgreSQL, keep two processes'
        writes of one agent's records from deadlocking) and the function that writes them on a connection
        (returning how many records' accesses it wrote)."""
        if not len(self.accesses):
            yield set(), lambda con: 0
            return
        with self.accesses.writing() as take:
            columns = take()

            def write(con) -> int:
                if columns[0]:
                    con.execute(q.ADD_ACCESSES, list(columns))
                return len(columns[0])

            yield (set(columns[0]) if self.db.shared else set()), write

    def _writing(self, agents: Iterable[str]):
        """``EventsCache.writing`` where the cache is kept; elsewhere a block whose report does nothing."""
        if self.events_cache is None:
            return nullcontext(lambda added, deleted: None)
        return self.events_cache.writing(agents)

    def count_events(self, agent_id: str) -> int:
        if self.events_cache is not None:
            agent = _agent(agent_id)
            return len(self.events_cache.rows(agent, lambda: self._all_events(agent)))
        with self.db.read() as con:
            (n,) = con.execute(q.COUNT_EVENTS, [_agent(agent_id)]).fetchone()
        return int(n)

    def count_events_many(self, agent_ids: Iterable[str]) -> dict[str, int]:
        """Events held per agent (0 for an agent with none), in one statement for the agents not kept in this
        process's copy."""
        agents = list(dict.fromkeys(_agent(a) for a in agent_ids))
        counts: dict[str, int] = {}
        if self.events_cache is not None:
            for agent in agents:
                held = self.events_cache.current(agent)
                if held is not None:
                    counts[agent] = len(held)
        rest = [a for a in agents if a not in counts]
        if rest:
            with self.db.read() as con:
                found = dict(con.execute(q.COUNT_EVENTS_MANY, [rest]).fetchall())
            counts.update({a: int(found.get(a, 0)) for a in rest})
        return {a: counts[a] for a in agents}

    def delete_events(self, agent_id: str, event_ids: Sequence[str]) -> int:
        agent, gone = _agent(agent_id), ids_of(event_ids, "event_id")
        if not gone:
            return 0
        with self._writing((agent,)) as committed:
            with self.db.tx(touches=(agent,)) as con:
                deleted = [r[0] for r in con.execute(q.DELETE_EVENTS, [agent, gone]).fetchall()]
            committed({}, {agent: deleted})
        return len(deleted)

    # --- long-term records (P4, P5) ---------------------------------------------------------------
    def _upsert_ltm(self, con, rows: Sequence[list[Any]]) -> int:
        return len(con.execute(q.UPSERT_LTM, q.batch_parameters(q.LTM_COLUMNS, rows)).fetchall()) if rows else 0

    @staticmethod
    def _ltm_rows(records: Sequence[LtmRecord]) -> dict[tuple[str, str], list[Any]]:
        rows: dict[tuple[str, str], list[Any]] = {}
        for r in records:
            row = ltm_row(r)
            rows[(row[1], row[0])] = row  # an id twice in one batch: the last replaces, as two calls would
        return rows

    def add_ltm(self, records: Sequence[LtmRecord]) -> int:
        rows = self._ltm_rows(records)
        if not rows:
            return 0
        with self._tx({agent for agent, _ in rows}, accesses=True) as con:
            written = self._upsert_ltm(con, list(rows.values()))
        self._wrote_ltm(written)
        return written

    def _wrote_ltm(self, rows: int) -> None:
        """After a write of LTM rows: on DuckDB, the table is ordered by agent again once enough were written."""
        if self.dialect != "duckdb":
            return
        with self.db.lock:  # one writer's threads: one of them orders the table, once
            self.ltm_written += rows
            if self.ltm_written < self.cluster_min_rows:
                return
            with self.db.read() as con:
                (total,) = con.execute(q.COUNT_LTM_ALL).fetchone()
            if self.ltm_written >= self.cluster_share * total:
                self.cluster_ltm()

    def cluster_ltm(self) -> int:
        """Rewrite the LTM table in (agent, time) order, in one transaction (DuckDB; PostgreSQL's index on
        agent_id serves its reads, so nothing is done there); returns the rows rewritten."""
        if self.dialect != "duckdb":
            return 0
        with self.db.tx() as con:
            (total,) = con.execute(q.COUNT_LTM_ALL).fetchone()
            for statement in q.CLUSTER_LTM:
                con.execute(statement)
        self.ltm_written = 0
        return int(total)

    def ltm(self, agent_id: str, ids: Sequence[str] | None = None) -> list[LtmRecord]:
        """The agent's records (oldest first), their access counts including this process's pending accesses."""
        agent = _agent(agent_id)
        params: list[Any] = [agent]
        if ids is not None:
            params.append(ids_of(ids, "memory_id"))

        def load() -> list[Any]:
            with self.db.read() as con:
                return con.execute(q.select_ltm(ids is not None), params).fetchall()

        rows, pending = self.accesses.read(agent, load)
        records = [ltm_record(r) for r in rows]
        if not pending:
            return records
        out = []
        for r in records:
            if r.memory_id in pending:
                n, last = pending[r.memory_id]
                r = r.model_copy(update={"access_count": r.access_count + n,
                                         "last_accessed": max(last, r.last_accessed if r.last_accessed is not None
                                                              else last)})
            out.append(r)
        return out

    def count_ltm(self, agent_id: str) -> int:
        with self.db.read() as con:
            (n,) = con.execute(q.COUNT_LTM, [_agent(agent_id)]).fetchone()
        return int(n)

    def touch_ltm(self, agent_id: str, memory_ids: Sequence[str], at: float) -> None:
        """One access each (an id listed twice counts once); ``last_accessed`` never moves back in time. Counted
        in memory (this process's reads include it) and written with the next write or ``flush_accesses``."""
        agent, touched, when = _agent(agent_id), sorted(set(ids_of(memory_ids, "memory_id"))), finite(at, "at")
        if touched and self.accesses.add(agent, touched, when):
            self.flush_accesses()

    def flush_accesses(self) -> int:
        """Write the pending accesses (of every agent) now, in one statement; returns how many records' worth."""
        if not len(self.accesses):
            return 0
        with self._with_accesses() as (accessed, write_accesses), self._tx(accessed) as con:
            return write_accesses(con)

    def delete_ltm(self, agent_id: str, memory_ids: Sequence[str]) -> int:
        agent, gone = _agent(agent_id), ids_of(memory_ids, "memory_id")
        if not gone:
            return 0
        with self._tx((agent,)) as con:
            return len(con.execute(q.DELETE_LTM, [agent, gone]).fetchall())

    def consolidated(self, agent_id: str, records: Sequence[LtmRecord], event_ids: Sequence[str]) -> int:
        agent = _agent(agent_id)
        rows = self._ltm_rows(records)
        if any(owner != agent for owner, _ in rows):
            raise InvalidInput("agent_id", f"every record of a consolidation of {agent!r} is that agent's")
        gone = ids_of(event_ids, "event_id")
        with self._writing((agent,)) as committed:
            with self.db.tx(touches=(agent,)) as con:
                written = self._upsert_ltm(con, list(rows.values()))
                deleted = [r[0] for r in con.execute(q.DELETE_EVENTS, [agent, gone]).fetchall()] if gone else []
            committed({}, {agent: deleted})
        self._wrote_ltm(written)
        return len(deleted)

    # --- registry (erasure, backup, audit) --------------------------------------------------------
    def count_agent(self, agent_id: str) -> int:
        """Rows held for this agent: its registration, WM, events, LTM records, the shared memories it authored,
        its memberships, and the tellings naming it or of its memories (what ``erase_agent`` removes)."""
        agent = _agent(agent_id)
        with self.db.read() as con:
            (n,) = con.execute(q.COUNT_AGENT, [agent] * q.COUNT_AGENT_PARAMS).fetchone()
        return int(n)

    def erase_agent(self, agent_id: str) -> int:
        """Remove the rows ``count_agent`` counts, in one transaction, and take the agent's id out of other
        agents' rows that name it (events' participants, bilateral memories' visible_to); returns rows removed."""
        return self.erase_agents([agent_id])

    def erase_agents(self, agent_ids: Sequence[str]) -> int:
        """``erase_agent`` of every one of them in one transaction and one statement per table (a run's
        erasure); returns the rows removed."""
        agents = sorted(set(_agent(a) for a in agent_ids))
        if not agents:
            return 0
        removed = 0
        for agent in agents:
            self.accesses.forget(agent)
        with self.db.read() as con:
            registered = dict(con.execute(q.RUNS_OF, [agents]).fetchall())
        runs = {registered.get(agent, DEFAULT_RUN) for agent in agents}  # an agent never registered: the default
        with self.db.tx(touches={*agents, *runs}) as con:
            for statement in q.ERASE_AGENTS:
                removed += len(con.execute(statement, [agents] * statement.count("?")).fetchall())
            others = {r[0] for statement in q.STRIP_AGENTS for r in con.execute(statement, [agents, agents]).fetchall()}
            with self.db.tx(touches=others):  # their rows changed: their stamps move with this commit too
                pass
        if self.events_cache is not None:
            for agent in agents:
                self.events_cache.forget(agent)
        return removed

    def cached_for(self, agent_id: str) -> int:
        """Event rows of this agent kept in this process (the registry's in-process place; erasure leaves 0)."""
        return 0 if self.events_cache is None else self.events_cache.count(_agent(agent_id))

    def close(self) -> None:
        """The pending accesses are written; the connection is the archive's, closed with it."""
        if self.db.is_open:
            self.flush_accesses()
