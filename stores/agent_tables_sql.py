"""The agent tables' schema and statements (PIANO, issue 48), written once for DuckDB and PostgreSQL.

Every statement is in the subset both engines share (``?`` parameters, ``VARCHAR[]``, ``unnest``, ``= ANY``,
``ON CONFLICT``, ``RETURNING``). A batch is one statement whatever its size: its scalar columns travel as one
array each, zipped by ``unnest``. A list column (participants, tags, ...) cannot travel as an array of arrays
(PostgreSQL's must be rectangular and ``unnest`` flattens them), so it travels flattened as three arrays (the
row's index, the value, its position in the row's list) and is put back together with ``array_agg(.. ORDER BY
..)``: no separator that a value could hold, and no per-row round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

AGENTS, WM, EVENTS, LTM, SHARED, GROUPS, HOPS = (
    "agent_agents", "agent_wm", "agent_events", "agent_ltm", "agent_shared", "agent_groups", "agent_hops")
TABLES = (AGENTS, WM, EVENTS, LTM, SHARED, GROUPS, HOPS)

_F8 = "DOUBLE PRECISION"
_LIST = "VARCHAR[]"
# (column, type); NOT NULL unless listed in the table's nullable set. Row order of every statement below.
EVENT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("event_id", "VARCHAR"), ("agent_id", "VARCHAR"), ("time", _F8), ("type", "VARCHAR"), ("content", "VARCHAR"),
    ("participants", _LIST), ("location", "VARCHAR"), ("importance", _F8), ("metadata", "VARCHAR"),
)
LTM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("memory_id", "VARCHAR"), ("agent_id", "VARCHAR"), ("created_at", _F8), ("last_accessed", _F8),
    ("access_count", "BIGINT"), ("type", "VARCHAR"), ("content", "VARCHAR"), ("summary", "VARCHAR"),
    ("importance", _F8), ("tags", _LIST), ("source_events", _LIST), ("decay_factor", _F8),
)
SHARED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("memory_id", "VARCHAR"), ("run_id", "VARCHAR"), ("author", "VARCHAR"), ("scope", "VARCHAR"),
    ("group_id", "VARCHAR"), ("visible_to", _LIST), ("created_at", _F8), ("content", "VARCHAR"),
    ("importance", _F8), ("tags", _LIST), ("source_events", _LIST),
)
HOP_COLUMNS: tuple[tuple[str, str], ...] = (
    ("memory_id", "VARCHAR"), ("from_agent", "VARCHAR"), ("to_agent", "VARCHAR"), ("time", _F8),
    ("event_id", "VARCHAR"),
)


# Every table's columns and key: what a restore writes back (stores.places.agent_place), one batch per statement.
TABLE_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    AGENTS: (("agent_id", "VARCHAR"), ("run_id", "VARCHAR")), WM: (("agent_id", "VARCHAR"), ("doc", "VARCHAR")),
    EVENTS: EVENT_COLUMNS, LTM: LTM_COLUMNS, SHARED: SHARED_COLUMNS,
    GROUPS: (("run_id", "VARCHAR"), ("group_id", "VARCHAR"), ("agent_id", "VARCHAR")), HOPS: HOP_COLUMNS,
}
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    AGENTS: ("agent_id",), WM: ("agent_id",), EVENTS: ("agent_id", "event_id"), LTM: ("agent_id", "memory_id"),
    SHARED: ("memory_id",), GROUPS: ("run_id", "group_id", "agent_id"),
    HOPS: ("memory_id", "from_agent", "to_agent", "time"),
}


def names(columns: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    return tuple(c for c, _ in columns)


def _create(table: str, columns: Sequence[tuple[str, str]], key: str, nullable: Sequence[str] = ()) -> str:
    body = ", ".join(f"{c} {t}{'' if c in nullable else ' NOT NULL'}" for c, t in columns)
    return f"CREATE TABLE IF NOT EXISTS {table} ({body}, PRIMARY KEY ({key}))"


_TABLES_STEP1 = (
    _create(AGENTS, (("agent_id", "VARCHAR"), ("run_id", "VARCHAR")), "agent_id"),
    _create(WM, (("agent_id", "VARCHAR"), ("doc", "VARCHAR")), "agent_id"),
    _create(EVENTS, EVENT_COLUMNS, "agent_id, event_id", ("location",)),
    _create(LTM, LTM_COLUMNS, "agent_id, memory_id", ("last_accessed",)),
    _create(SHARED, SHARED_COLUMNS, "memory_id", ("group_id",)),
    _create(GROUPS, (("run_id", "VARCHAR"), ("group_id", "VARCHAR"), ("agent_id", "VARCHAR")),
            "run_id, group_id, agent_id"),
    _create(HOPS, HOP_COLUMNS, "memory_id, from_agent, to_agent, time", ("event_id",)),
)
# The hot reads' indexes: one agent's events by time, its LTM records, a run's shared memories, an agent's groups.
_INDEXES_STEP1 = (
    f"CREATE INDEX IF NOT EXISTS {EVENTS}_time_idx ON {EVENTS} (agent_id, time)",
    f"CREATE INDEX IF NOT EXISTS {LTM}_agent_idx ON {LTM} (agent_id)",
    f"CREATE INDEX IF NOT EXISTS {SHARED}_run_idx ON {SHARED} (run_id)",
    f"CREATE INDEX IF NOT EXISTS {GROUPS}_agent_idx ON {GROUPS} (agent_id)",
)


def step1(dialect: str) -> tuple[str, ...]:
    """Step 1 of the ``agents`` component (``SqlConnection.migrate``): later schema changes are appended steps.
    DuckDB gets no secondary index: its connection uses an index only for lookups of a few rows
    (duckdb_connection.INDEX_SCAN_MAX_ROWS), which no read here is, so one would cost every insert (and memory:
    DuckDB keeps an ART index in memory) and serve nothing; the primary keys' indexes enforce the keys."""
    return _TABLES_STEP1 + (_INDEXES_STEP1 if dialect == "postgres" else ())


# --- batched inserts ---------------------------------------------------------------------------------
def batch_insert(table: str, columns: Sequence[tuple[str, str]], conflict: str, returning: str) -> str:
    """One INSERT of a whole batch; parameters from ``batch_parameters`` (same ``columns``). ``conflict`` is the
    ON CONFLICT clause; ``returning`` the key columns of the rows written."""
    scalars = [(c, t) for c, t in columns if t != _LIST]
    lists = [c for c, t in columns if t == _LIST]
    rows = "SELECT unnest(?::BIGINT[]) AS i, " + ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in scalars)
    joins = "".join(
        f" LEFT JOIN (SELECT i, array_agg(v ORDER BY k) AS v FROM (SELECT unnest(?::BIGINT[]) AS i, "
        f"unnest(?::VARCHAR[]) AS v, unnest(?::BIGINT[]) AS k) AS f{n} GROUP BY i) AS l{n} ON l{n}.i = r.i"
        for n in range(len(lists)))
    picked = [f"coalesce(l{lists.index(c)}.v, ARRAY[]::VARCHAR[])" if t == _LIST else f"r.{c}" for c, t in columns]
    return (f"INSERT INTO {table} ({', '.join(names(columns))}) SELECT {', '.join(picked)} FROM ({rows}) AS r{joins} "
            f"{conflict} RETURNING {returning}")


def batch_parameters(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The parameters of ``batch_insert(.., columns, ..)`` for ``rows`` (each in the columns' order)."""
    scalars = [n for n, (_, t) in enumerate(columns) if t != _LIST]
    lists = [n for n, (_, t) in enumerate(columns) if t == _LIST]
    params: list[list[Any]] = [list(range(len(rows)))]
    params += [[row[n] for row in rows] for n in scalars]
    for n in lists:
        owner, values, position = [], [], []
        for i, row in enumerate(rows):
            for k, value in enumerate(row[n]):
                owner.append(i)
                values.append(value)
                position.append(k)
        params += [owner, values, position]
    return params


def _updates(columns: Sequence[tuple[str, str]], keys: Sequence[str]) -> str:
    return ", ".join(f"{c} = excluded.{c}" for c, _ in columns if c not in keys)


INSERT_EVENTS = batch_insert(EVENTS, EVENT_COLUMNS, "ON CONFLICT (agent_id, event_id) DO NOTHING",
                             "agent_id, event_id")
# A record written again keeps the accesses the table counted since it was read (another process's, or this
# one's written meanwhile): accesses only ever add up, so the larger count and the later access are the truth.
_ACCESS_KEPT = (f"access_count = greatest({LTM}.access_count, excluded.access_count), "
                f"last_accessed = greatest({LTM}.last_accessed, excluded.last_accessed)")
UPSERT_LTM = batch_insert(LTM, LTM_COLUMNS, "ON CONFLICT (agent_id, memory_id) DO UPDATE SET "
                          + _updates(LTM_COLUMNS, ("agent_id", "memory_id", "access_count", "last_accessed"))
                          + ", " + _ACCESS_KEPT, "agent_id, memory_id")
# A shared memory is replaced only by its own author in its own run (checked before, and kept by the WHERE
# against a row another process wrote meanwhile).
UPSERT_SHARED = batch_insert(SHARED, SHARED_COLUMNS, "ON CONFLICT (memory_id) DO UPDATE SET "
                             + _updates(SHARED_COLUMNS, ("memory_id", "run_id", "author"))
                             + f" WHERE {SHARED}.author = excluded.author AND {SHARED}.run_id = excluded.run_id",
                             "memory_id")
INSERT_HOP = (f"INSERT INTO {HOPS} ({', '.join(names(HOP_COLUMNS))}) VALUES (?, ?, ?, ?, ?) "
              "ON CONFLICT (memory_id, from_agent, to_agent, time) DO NOTHING")



def restore_rows(table: str) -> str:
    """One batch of a backup's rows of ``table`` written back (``batch_parameters(TABLE_COLUMNS[table], rows)``):
    a row whose key is taken replaces that row's values, as a restore over live data does."""
    columns, keys = TABLE_COLUMNS[table], TABLE_KEYS[table]
    others = _updates(columns, keys)
    conflict = f"ON CONFLICT ({', '.join(keys)}) DO " + (f"UPDATE SET {others}" if others else "NOTHING")
    return batch_insert(table, columns, conflict, ", ".join(keys))


# --- agents and groups ---------------------------------------------------------------------------------
REGISTER = f"INSERT INTO {AGENTS} (agent_id, run_id) VALUES (?, ?) ON CONFLICT (agent_id) DO NOTHING"
RUN_OF = f"SELECT run_id FROM {AGENTS} WHERE agent_id = ?"
AGENTS_ALL = f"SELECT agent_id FROM {AGENTS} ORDER BY agent_id"
AGENTS_OF_RUN = f"SELECT agent_id FROM {AGENTS} WHERE run_id = ? ORDER BY agent_id"
RUNS_OF = f"SELECT agent_id, run_id FROM {AGENTS} WHERE agent_id IN (SELECT unnest(?::VARCHAR[]))"
JOIN = f"INSERT INTO {GROUPS} (run_id, group_id, agent_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
LEAVE = f"DELETE FROM {GROUPS} WHERE run_id = ? AND group_id = ? AND agent_id = ?"
GROUPS_OF = f"SELECT DISTINCT group_id FROM {GROUPS} WHERE agent_id = ? AND run_id = ? ORDER BY group_id"

# --- working memory ------------------------------------------------------------------------------------
WM_GET = f"SELECT doc FROM {WM} WHERE agent_id = ?"
WM_PUT = f"INSERT INTO {WM} (agent_id, doc) VALUES (?, ?) ON CONFLICT (agent_id) DO UPDATE SET doc = excluded.doc"

# --- events --------------------------------------------------------------------------------------------
_EVENT_NAMES = ", ".join(names(EVENT_COLUMNS))
_ONE_EVENTS = f"SELECT {_EVENT_NAMES} FROM {EVENTS} WHERE agent_id = ?"
_AMONG = " AND {column} IN (SELECT unnest(?::VARCHAR[]))"


def select_events(among: bool, newest: bool) -> str:
    """One agent's events, optionally among ids, oldest first (``newest``: newest first, for the newest N);
    parameters: agent, [ids], limit (None: all)."""
    order = "DESC" if newest else "ASC"
    return (_ONE_EVENTS + (_AMONG.format(column="event_id") if among else "")
            + f" ORDER BY time {order}, event_id {order} LIMIT ?")


COUNT_EVENTS = f"SELECT count(*) FROM {EVENTS} WHERE agent_id = ?"
# Several agents' counts in one statement (a store of a tick's events checks each agent's capacity).
COUNT_EVENTS_MANY = (f"SELECT agent_id, count(*) FROM {EVENTS} WHERE agent_id IN (SELECT unnest(?::VARCHAR[])) "
                     "GROUP BY agent_id")
DELETE_EVENTS = (f"DELETE FROM {EVENTS} WHERE agent_id = ?" + _AMONG.format(column="event_id")
                 + " RETURNING event_id")

# --- long-term records ---------------------------------------------------------------------------------
_LTM_NAMES = ", ".join(names(LTM_COLUMNS))


def select_ltm(among: bool) -> str:
    return (f"SELECT {_LTM_NAMES} FROM {LTM} WHERE agent_id = ?" + (_AMONG.format(column="memory_id") if among else "")
            + " ORDER BY created_at, memory_id")


COUNT_LTM = f"SELECT count(*) FROM {LTM} WHERE agent_id = ?"
# Pending accesses of any agents in one statement (stores.agent_accesses): each row's count moves under its row
# lock, so two processes' accesses both count. Parameters: agents, record ids, accesses, last accesses.
ADD_ACCESSES = (f"UPDATE {LTM} SET access_count = access_count + v.n, "
                "last_accessed = greatest(coalesce(last_accessed, v.last), v.last) "
                "FROM (SELECT unnest(?::VARCHAR[]) AS a, unnest(?::VARCHAR[]) AS m, unnest(?::BIGINT[]) AS n, "
                f"unnest(?::{_F8}[]) AS last) AS v WHERE {LTM}.agent_id = v.a AND {LTM}.memory_id = v.m")
# DuckDB keeps rows in insertion order and skips a vector of rows only by its min/max: consolidations of every
# agent interleave, so a read of one agent's records scans the whole table. Rewritten in (agent, time) order in one
# transaction, one agent's rows lie together and the scan skips the rest (no index serves these reads: STACK.md).
CLUSTER_LTM = (
    f"CREATE OR REPLACE TEMP TABLE {LTM}_clustered AS SELECT {_LTM_NAMES} FROM {LTM} ORDER BY agent_id, created_at, memory_id",
    f"DELETE FROM {LTM}",
    f"INSERT INTO {LTM} ({_LTM_NAMES}) SELECT {_LTM_NAMES} FROM {LTM}_clustered",
    f"DROP TABLE {LTM}_clustered",
)
COUNT_LTM_ALL = f"SELECT count(*) FROM {LTM}"
DELETE_LTM = (f"DELETE FROM {LTM} WHERE agent_id = ?" + _AMONG.format(column="memory_id")
              + " RETURNING memory_id")

# --- shared memories -----------------------------------------------------------------------------------
_SHARED_NAMES = ", ".join(f"s.{c}" for c in names(SHARED_COLUMNS))
SHARED_OWNERS = (f"SELECT memory_id, run_id, author FROM {SHARED} WHERE memory_id IN "
                 "(SELECT unnest(?::VARCHAR[]))")
# What an agent (of run ?) may see now: every global memory of its run, a group memory while it is a member of
# that group (membership read at the same time, so a join or a leave applies at once), a bilateral memory when
# it is one of the two. Exact equality on ids everywhere: no prefix nor pattern matching.
_VISIBLE = (
    f"SELECT {_SHARED_NAMES} FROM {SHARED} s WHERE s.run_id = ? AND (s.scope = 'global' "
    f"OR (s.scope = 'group' AND EXISTS (SELECT 1 FROM {GROUPS} g WHERE g.run_id = s.run_id "
    "AND g.group_id = s.group_id AND g.agent_id = ?)) "
    "OR (s.scope = 'bilateral' AND ? = ANY(s.visible_to)))"
)


def select_visible(scope: bool, among: bool) -> str:
    """Parameters: run, agent, agent, [scope], [ids]."""
    return (_VISIBLE + (" AND s.scope = ?" if scope else "") + (_AMONG.format(column="s.memory_id") if among else "")
            + " ORDER BY s.created_at, s.memory_id")


HOPS_OF = (f"SELECT {', '.join(names(HOP_COLUMNS))} FROM {HOPS} WHERE memory_id = ? "
           "ORDER BY time, from_agent, to_agent")

# --- registry: what one agent holds, and its erasure ---------------------------------------------------
# Rows held for the agent, per table; parameters: the agent id once per '?'. The hops counted are those naming
# the agent and those of shared memories it authored (which go with it).
_AUTHORED = f"SELECT memory_id FROM {SHARED} WHERE author = ?"
_HOPS_OF_AGENT = f"(from_agent = ? OR to_agent = ? OR memory_id IN ({_AUTHORED}))"
COUNT_AGENT = (
    f"SELECT (SELECT count(*) FROM {AGENTS} WHERE agent_id = ?) + (SELECT count(*) FROM {WM} WHERE agent_id = ?) "
    f"+ (SELECT count(*) FROM {EVENTS} WHERE agent_id = ?) + (SELECT count(*) FROM {LTM} WHERE agent_id = ?) "
    f"+ (SELECT count(*) FROM {SHARED} WHERE author = ?) + (SELECT count(*) FROM {GROUPS} WHERE agent_id = ?) "
    f"+ (SELECT count(*) FROM {HOPS} WHERE {_HOPS_OF_AGENT})"
)
COUNT_AGENT_PARAMS = 9
# Erasing agents, every one in one pass per table: each statement takes the list of ids once per '?' and returns
# one row per row removed; in this order (hops before the shared memories whose ids they name).
_IN_ERASED = "IN (SELECT unnest(?::VARCHAR[]))"
ERASE_AGENTS = (
    f"DELETE FROM {HOPS} WHERE from_agent {_IN_ERASED} OR to_agent {_IN_ERASED} "
    f"OR memory_id IN (SELECT memory_id FROM {SHARED} WHERE author {_IN_ERASED}) RETURNING memory_id",
    f"DELETE FROM {SHARED} WHERE author {_IN_ERASED} RETURNING memory_id",
    f"DELETE FROM {GROUPS} WHERE agent_id {_IN_ERASED} RETURNING agent_id",
    f"DELETE FROM {LTM} WHERE agent_id {_IN_ERASED} RETURNING agent_id",
    f"DELETE FROM {EVENTS} WHERE agent_id {_IN_ERASED} RETURNING agent_id",
    f"DELETE FROM {WM} WHERE agent_id {_IN_ERASED} RETURNING agent_id",
    f"DELETE FROM {AGENTS} WHERE agent_id {_IN_ERASED} RETURNING agent_id",
)
# The erased ids are also taken out of other agents' rows that name them (an event's participants, a bilateral
# memory's visible_to); returns the agents whose rows changed. Parameters: the list of ids, twice.
STRIP_AGENTS = tuple(
    f"UPDATE {table} SET {column} = array(SELECT p FROM unnest({column}) AS u(p) WHERE p NOT {_IN_ERASED}) "
    f"WHERE EXISTS (SELECT 1 FROM unnest({column}) AS n(p) WHERE p {_IN_ERASED}) RETURNING {owner}"
    for table, column, owner in ((EVENTS, "participants", "agent_id"), (SHARED, "visible_to", "author"))
)
