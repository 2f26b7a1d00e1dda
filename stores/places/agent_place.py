"""Agents' memory as one UserDataPlace (``agents``): an agent id is erased, backed up and restored like a user id.

The place holds an agent's rows in the agent tables (stores.agent_tables, on the archive's database: its WM,
events, LTM records, the shared memories it authored, its memberships, the tellings naming it) and its vectors
(stores.agent_vectors: its STM and LTM tenants, and the points of the shared memories it authored in its run's
tenant). Erasing an agent also takes its id out of other agents' rows that name it (participants, a bilateral
memory's audience): ``AgentTables.erase_agent``. What another agent was told by it stays that agent's memory
(a told copy is authored by the teller); a copy the erased agent told goes with it.

Backups: each agent table as an uncompressed Parquet file (stores.places.parquet_rows, one format for both
engines) and each vector layer as tagged JSONL (stores.places.jsonl; a shared point is tagged with its author).
Restore and ``forget_in_export`` read the Parquet files with a local DuckDB that leaves out every row naming an
erased agent and strips it from the list columns, as ``erase_agent`` does in the tables.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np

from .. import agent_tables_sql as q
from ..agent_open import AgentStores
from ..agent_vectors import LAYERS
from ..ids import validate_id
from ..vector_filters import TENANT_FIELD
from . import jsonl
from .archive import FileRewriter
from .parquet_rows import PARQUET, export_table, literal

NAME = "agents"
ITEM = "item_id"
UPSERT_BATCH = 512
RESTORE_BATCH = 5_000  # rows per INSERT of a restore: a few MB of parameters
# The columns naming an agent, per table, and the list columns an agent's id is taken out of.
AGENT_COLUMNS = {q.AGENTS: ("agent_id",), q.WM: ("agent_id",), q.EVENTS: ("agent_id",), q.LTM: ("agent_id",),
                 q.SHARED: ("author",), q.GROUPS: ("agent_id",), q.HOPS: ("from_agent", "to_agent")}
LIST_COLUMNS = {q.EVENTS: ("participants",), q.SHARED: ("visible_to",)}
# A local DuckDB reading a backup's Parquet file (never the archive): ids travel as one list parameter.
_AUTHORS = f"SELECT memory_id, author FROM {q.SHARED}"
_AUTHORED = f"SELECT memory_id FROM {q.SHARED} WHERE author = ?"


def _kept_select(folder: Path, table: str) -> str:
    """The rows of ``table``'s Parquet file in ``folder`` that name none of the ids of parameter 1 (a list),
    with those ids taken out of its list columns; a hop of a memory an erased agent authored goes too."""
    path = literal(folder / f"{table}.parquet")
    named = " OR ".join(f"list_contains(e.ids, t.{c})" for c in AGENT_COLUMNS[table])
    lists = LIST_COLUMNS.get(table, ())
    replace = (" REPLACE (" + ", ".join(f"list_filter(t.{c}, lambda v: NOT list_contains(e.ids, v)) AS {c}"
                                         for c in lists) + ")") if lists else ""
    where = f"NOT ({named})"
    shared = folder / f"{q.SHARED}.parquet"
    if table == q.HOPS and shared.exists():
        where += (f" AND t.memory_id NOT IN (SELECT s.memory_id FROM read_parquet('{literal(shared)}') s "
                  "WHERE list_contains(e.ids, s.author))")
    return (f"WITH e AS (SELECT ?::VARCHAR[] AS ids) SELECT t.*{replace} FROM read_parquet('{path}') t, e "
            f"WHERE {where}")


def _named_ids(folder: Path, table: str) -> set[str]:
    path = literal(folder / f"{table}.parquet")
    cols = " UNION ".join(f"SELECT {c} FROM read_parquet('{path}')" for c in AGENT_COLUMNS[table])
    con = duckdb.connect()
    try:
        return {r[0] for r in con.execute(cols).fetchall() if r[0] is not None}
    finally:
        con.close()


class AgentPlace:
    name = NAME

    def __init__(self, agents: AgentStores):
        self.tables, self.vectors = agents.tables, agents.vectors
        self.db = self.tables.db
        self.rewriter = FileRewriter(self.db)
        self._dirty: set[str] = set()

    def _authored(self, agent: str) -> list[str]:
        with self.db.read() as con:
            return [r[0] for r in con.execute(_AUTHORED, [agent]).fetchall()]

    def _shared_points(self, agent: str, run: str | None) -> list[str]:
        authored = self._authored(agent)
        if run is None or not authored:
            return []
        return list(self.vectors.vectors_of("shared", run, authored))

    def count(self, user_id: str) -> int:
        agent = validate_id(user_id, "user_id")
        run = self.tables.run_of(agent)
        return (self.tables.count_agent(agent) + self.vectors.count("stm", agent) + self.vectors.count("ltm", agent)
                + len(self._shared_points(agent, run)))

    def erase(self, user_id: str) -> int:
        return self.erase_many([user_id])

    def erase_many(self, user_ids: list[str]) -> int:
        """Erase these agents together: their rows in one transaction and one statement per table
        (``AgentTables.erase_agents``), their points layer by layer; the files are rewritten by ``scrub``."""
        agents = sorted({validate_id(u, "user_id") for u in user_ids})
        shared: dict[str, list[str]] = defaultdict(list)  # run -> points of memories the agents authored
        for agent in agents:
            run = self.tables.run_of(agent)
            if run is not None:
                shared[run] += self._shared_points(agent, run)
        removed = self.tables.erase_agents(agents)
        for table in q.TABLES:  # a DuckDB file is copied whole; on PostgreSQL these tables are rewritten
            for agent in agents:
                self.rewriter.mark(table, agent)
        for layer in ("stm", "ltm"):
            for agent in agents:
                n = self.vectors.delete_tenant(layer, agent)
                removed += n
                if n:
                    self._dirty.add(layer)
        for run, points in shared.items():
            if points:
                removed += self.vectors.delete("shared", run, points)
                self._dirty.add("shared")
        return removed

    def _layers(self) -> dict[str, object]:
        return dict(zip(LAYERS, self.vectors.collections()))

    def scrub(self) -> None:
        self.rewriter.scrub()
        layers = self._layers()
        for layer in sorted(self._dirty):
            layers[layer].rewrite()  # type: ignore[attr-defined]
        self._dirty.clear()

    def raw_paths(self) -> list[Path]:
        paths = [p for store in self.vectors.collections() for p in store.raw_paths()]
        if self.db.dialect == "duckdb" and self.db.database != ":memory:":
            paths += [Path(self.db.database), Path(self.db.database + ".wal")]
        return paths

    # --- backups ------------------------------------------------------------------------------------
    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        n = sum(export_table(self.db, table, dest / f"{table}.parquet") for table in q.TABLES)
        with self.db.read() as con:
            authors = dict(con.execute(_AUTHORS).fetchall())
        for layer in LAYERS:
            def tag(payload: dict, layer=layer) -> str | None:
                return authors.get(payload.get(ITEM)) if layer == "shared" else payload.get(TENANT_FIELD)

            rows = ((tag(p), {"id": pid, "vector": list(map(float, v)), "payload": p})
                    for pid, v, p in self.vectors.points(layer))
            n += jsonl.write_rows(dest / f"{layer}.jsonl", rows)
        return n

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        n = 0
        for table in q.TABLES:
            if not (src / f"{table}.parquet").exists():
                continue
            named = _named_ids(src, table)
            erased = sorted(a for a in named if is_erased(a))
            columns = q.TABLE_COLUMNS[table]
            con = duckdb.connect()
            try:
                rows = con.execute(f"SELECT {', '.join(q.names(columns))} FROM ({_kept_select(src, table)}) AS k",
                                   [erased]).fetchall()
            finally:
                con.close()
            if rows:
                # In batches of one statement each (agent_tables_sql.restore_rows), not a statement per row.
                statement = q.restore_rows(table)
                with self.db.tx(touches=sorted(named - set(erased))) as tx:
                    for start in range(0, len(rows), RESTORE_BATCH):
                        chunk = rows[start:start + RESTORE_BATCH]
                        n += len(tx.execute(statement, q.batch_parameters(columns, chunk)).fetchall())
        for layer in LAYERS:
            batches: dict[str, list[tuple[str, list[float]]]] = defaultdict(list)
            for record in jsonl.kept_rows(src / f"{layer}.jsonl", is_erased):
                payload = record["payload"]
                batches[payload[TENANT_FIELD]].append((payload[ITEM], record["vector"]))
            for tenant, items in batches.items():
                for start in range(0, len(items), UPSERT_BATCH):
                    chunk = items[start:start + UPSERT_BATCH]
                    n += self.vectors.upsert(layer, tenant, [i for i, _ in chunk],
                                             np.asarray([v for _, v in chunk], dtype=np.float32))
        return n

    def forget_in_export(self, src: Path, user_id: str) -> int:
        removed = 0
        # Hops first: their filter reads the shared memories' authors, which the shared file's rewrite drops.
        for table in sorted(q.TABLES, key=lambda t: t != q.HOPS):
            path = src / f"{table}.parquet"
            if not path.exists():
                continue
            con = duckdb.connect()
            try:
                (before,) = con.execute(f"SELECT count(*) FROM read_parquet('{literal(path)}')").fetchone()
                tmp = path.with_name(path.name + ".tmp")
                con.execute(f"COPY ({_kept_select(src, table)}) TO '{literal(tmp)}' {PARQUET}", [[user_id]])
                (after,) = con.execute(f"SELECT count(*) FROM read_parquet('{literal(tmp)}')").fetchone()
            finally:
                con.close()
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
            removed += int(before) - int(after)
        return removed + sum(jsonl.forget(src / f"{layer}.jsonl", user_id) for layer in LAYERS)


def agent_place(agents: AgentStores) -> AgentPlace:
    return AgentPlace(agents)
