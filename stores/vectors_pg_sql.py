"""The pgvector adapter's SQL: the collection catalog and table schema, the pool, the WHERE clauses its neutral
conditions become, and the payload checks PostgreSQL's JSONB needs (stores.vectors_pg uses them).

Everything a caller gives goes in as a parameter; only names this module derives (the table name, a hash of the
collection) are written into statements.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from .errors import InvalidInput, StoreUnavailable
from .pg_connection import describe, idle_check
from .pg_watchdog import bounded_connection, grace
from .vector_filters import HNSW_EF_CONSTRUCT, TENANT_FIELD, TIER, AtMost, Condition, Match

CATALOG = "lumina_vector_collections"
CATALOG_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {CATALOG} (
        collection VARCHAR PRIMARY KEY, table_name VARCHAR NOT NULL, lumina_embedder VARCHAR NOT NULL,
        lumina_dim INTEGER NOT NULL, lumina_distance VARCHAR NOT NULL, created_at DOUBLE PRECISION NOT NULL)""",
)
HNSW_GRAPH_M = 16  # pgvector has no per-tenant graph (Qdrant's payload_m): one graph over all users' points
EF_SEARCH = 100  # candidates per HNSW scan step; raised to the limit for larger searches (pgvector's cap: 1000)
_EF_SEARCH_MAX = 1000


def table_name(collection: str) -> str:
    """The collection's table: readable, within PostgreSQL's 63 bytes, unique by a hash of the full name."""
    readable = re.sub(r"[^a-z0-9_]", "_", collection.lower())[:36]
    return f"lumina_v_{readable}_{hashlib.sha256(collection.encode()).hexdigest()[:16]}"


def table_steps(table: str, dim: int) -> list[list[str]]:
    """The numbered schema steps of one collection's table: append new steps, never edit one."""
    return [[
        f"CREATE TABLE IF NOT EXISTS {table} (id UUID PRIMARY KEY, user_id VARCHAR, "
        f"embedding vector({int(dim)}) NOT NULL, payload JSONB NOT NULL)",
        # A 512-d vector (2 KB) would be moved out of line by TOAST: each distance then reads a second table, and
        # the planner, seeing a small main table, prefers a full scan to the HNSW index. Kept in the row.
        f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE PLAIN",
        f"CREATE INDEX IF NOT EXISTS {table}_user ON {table} (user_id)",
        f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {HNSW_GRAPH_M}, ef_construction = {HNSW_EF_CONSTRUCT})",
    ], [
        # PostgreSQL cuts names at 63 bytes: for a long collection name "<table>_user" and "<table>_hnsw" cut to
        # the same name, and step 1 skipped the HNSW index. Made here under a short name where none exists.
        f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_indexes WHERE tablename = '{table}' AND indexdef ~ 'USING hnsw') "
        f"THEN CREATE INDEX {_short_index_name(table)} ON {table} USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {HNSW_GRAPH_M}, ef_construction = {HNSW_EF_CONSTRUCT}); END IF; END $$",
    ]]


def _short_index_name(table: str) -> str:
    return f"lumina_hnsw_{hashlib.sha256(table.encode()).hexdigest()[:24]}"


def open_pool(uri: str, *, timeout: float = 10.0, max_size: int = 4, name: str = "lumina-vectors") -> ConnectionPool:
    """A pool of autocommit connections knowing pgvector's type, each statement bounded by ``timeout``, each
    HNSW scan iterative (so a filtered search keeps walking the graph until it has its rows)."""
    where = describe(uri)
    statement_ms = max(1, int(timeout * 1000))
    options = (f"-c statement_timeout={statement_ms} -c hnsw.iterative_scan=relaxed_order "
               f"-c hnsw.ef_search={EF_SEARCH}")
    kwargs = {"connect_timeout": max(1, int(timeout)), "options": options, "autocommit": True}
    try:
        _ensure_extension(uri, kwargs)
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(TIER, f"PostgreSQL at {where}: {_first_line(exc)}") from None
    # Every call on a pooled connection is bounded on the client too (stores.pg_watchdog): a paused server
    # never fires its own statement_timeout.
    pool = ConnectionPool(uri, min_size=1, max_size=max(1, max_size), timeout=timeout, open=False, name=name,
                          connection_class=bounded_connection(grace(timeout)),
                          kwargs=kwargs, configure=register_vector, reconnect_timeout=timeout,
                          check=idle_check(grace(timeout)))  # a server restarted: idle connections are dead
    try:
        pool.open(wait=True, timeout=timeout)
    except (PoolTimeout, psycopg.Error) as exc:
        pool.close()
        raise StoreUnavailable(TIER, f"PostgreSQL at {where}: {_first_line(exc)}") from None
    return pool


def _ensure_extension(uri: str, kwargs: dict[str, Any]) -> None:
    """pgvector in this database: created when missing (as LangGraph's PostgresStore does), under an advisory
    lock so processes starting together do not race; a role that may not create it gets a clear error."""
    with bounded_connection(grace(kwargs["connect_timeout"])).connect(uri, **kwargs) as con:
        if con.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            return
        try:
            with con.transaction():
                con.execute("SELECT pg_advisory_xact_lock(hashtext('lumina pgvector extension'))")
                con.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreUnavailable(TIER, f"PostgreSQL at {describe(uri)} has no pgvector extension and this role may "
                                         f"not create it ({_first_line(exc)}): run CREATE EXTENSION vector as its owner") from None
        except psycopg.errors.FeatureNotSupported as exc:
            raise StoreUnavailable(TIER, f"PostgreSQL at {describe(uri)} has no pgvector installed: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_payload(payload: object, where: str) -> str:
    """The payload as JSON text PostgreSQL's JSONB accepts, or InvalidInput naming ``where``."""
    if not isinstance(payload, dict):
        raise InvalidInput(where, f"must be a dict, got {type(payload).__name__}")
    try:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(where, f"is not valid Unicode (lone surrogate at position {exc.start})") from None
    except (TypeError, ValueError) as exc:
        raise InvalidInput(where, f"must be JSON without NaN or infinity ({exc})") from None
    if _has_nul(payload):
        raise InvalidInput(where, "contains a NUL character, which PostgreSQL cannot store")
    return text


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_nul(v) for v in value)
    return False


class _Params:
    """Named parameters collected while a statement is written, in psycopg's ``%(pN)s`` form."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def __call__(self, value: Any) -> str:
        name = f"p{len(self.values)}"
        self.values[name] = value
        return f"%({name})s"


def _where(conditions: Sequence[Condition], p: _Params) -> str:
    """The conditions as SQL (``TRUE`` for none). The tenant is the indexed column; other keys are payload
    fields: a Match holds when the field equals one of the values or, for an array, contains one."""
    parts = []
    for c in conditions:
        if isinstance(c, Match) and c.key == TENANT_FIELD:
            parts.append(f"user_id = {p(c.values[0])}" if len(c.values) == 1 else f"user_id = ANY({p(list(c.values))})")
        elif isinstance(c, Match):
            field = p(c.key)
            # JSONB's ? and ?| match a string equal to the value, or an array with it as an element.
            parts.append(f"(payload -> {field}) ? {p(c.values[0])}" if len(c.values) == 1
                         else f"(payload -> {field}) ?| {p(list(c.values))}::text[]")
        elif isinstance(c, AtMost):
            field, missing = p(c.key), p(c.missing_passes)
            # As the qdrant filters: a number compares; a missing key, null or [] counts as missing.
            parts.append(
                f"(CASE WHEN payload -> {field} IS NULL OR payload -> {field} IN ('null'::jsonb, '[]'::jsonb) "
                f"THEN {missing} WHEN jsonb_typeof(payload -> {field}) = 'number' "
                f"THEN (payload ->> {field})::double precision <= {p(float(c.limit))} ELSE FALSE END)")
        else:
            raise InvalidInput("conditions", f"must be Match or AtMost, got {type(c).__name__}")
    return " AND ".join(parts) or "TRUE"


def _payload_sql(fields: Sequence[str] | None, p: _Params) -> str:
    """The payload, or only the keys in ``fields`` that it has (as the qdrant engines return a selection)."""
    if fields is None:
        return "payload"
    return (f"(SELECT coalesce(jsonb_object_agg(key, value), '{{}}'::jsonb) FROM jsonb_each(payload) "
            f"WHERE key = ANY({p(list(fields))}::text[]))")


def _uuids(point_ids: Sequence[str]) -> list[str]:
    """Point ids as UUID text; an id that is not a UUID cannot name a point here, so it is dropped."""
    out = []
    for pid in point_ids:
        try:
            out.append(str(uuid.UUID(str(pid))))
        except ValueError:
            continue
    return out


def collection_names(pool: ConnectionPool) -> list[str]:
    """Every collection recorded in this database (any embedder)."""
    try:
        with pool.connection() as con:
            if con.execute("SELECT to_regclass(%s)", [CATALOG]).fetchone()[0] is None:
                return []
            return [r[0] for r in con.execute(f"SELECT collection FROM {CATALOG} ORDER BY collection").fetchall()]
    except (PoolTimeout, psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise StoreUnavailable(TIER, f"list collections: PostgreSQL at {describe(pool.conninfo)}: {_first_line(exc)}") from None
