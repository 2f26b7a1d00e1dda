"""GraphStore on PostgreSQL tables: the associative graph of the server mode when no Neo4j is configured.

Every protocol method's meaning (validation, owner checks, spreading activation's scores and order, result
shapes) is CypherGraph's, shared with ladybug and Neo4j; this adapter runs each Cypher statement CypherGraph
sends as its SQL form (stores.graph_pg_sql, stores.graph_pg_knowledge) on a ``PostgresConnection``. Any number
of processes share the tables: a unit of work is one transaction, and every write is an upsert on the tables'
keys, so two processes writing the same new segment make its nodes and edges once.

Deadlocks: a unit of work touches a user's rows over several statements (a batch restating segments in its
caller's order), so two units restating the same segments in different orders would each wait for the other.
Each unit that writes first takes a transaction-level advisory lock per user it writes, in key order: one user's
graph writes take turns across processes, and the rows they share lie within one user (links and relations join
one user's segments). What users share (the character nodes, inserted on first use) is written by each
statement in key order; a deadlock PostgreSQL still detects there rolls the unit back, and it runs once more.
"""

from __future__ import annotations

import functools
import hashlib
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import psycopg
from tenacity import Retrying, retry_if_exception, stop_after_attempt

from .errors import InvalidInput
from .graph_base import CypherGraph, Rows, Step
from .graph_knowledge import GraphKnowledge
from .graph_memories import GraphMemoryChanges
from .graph_repair import GraphRepair
from .graph_pg_knowledge import BACKUP_READS, BACKUP_WRITES, KNOWLEDGE_READS, KNOWLEDGE_WRITES
from .graph_pg_repair import REPAIR_READS, REPAIR_WRITES
from .graph_pg_sql import READS, RELATIONS_OF_SEGMENTS, SCHEMA, TABLES, WRITES, Handler, Statements
from .pg_connection import PostgresConnection
from .settings import LuminaSettings

TIER = "graph"
_WRITES: dict[str, Handler] = {**WRITES, **KNOWLEDGE_WRITES, **BACKUP_WRITES, **REPAIR_WRITES}
_READS: dict[str, Handler] = {**READS, **KNOWLEDGE_READS, **BACKUP_READS, **REPAIR_READS}


# pg_advisory_xact_lock(class, key): the two-integer form, whose keys never meet the one-bigint locks of the
# leases, the journal's owners and the migrations.
_USER_LOCK_CLASS = 0x6C67  # "lg"
_LOCK_USERS = ("SELECT count(pg_advisory_xact_lock(?::INTEGER, k)) FROM (SELECT unnest(?::INTEGER[]) AS k ORDER BY k) "
               "AS keys")
F = TypeVar("F", bound=Callable[..., Any])


def user_lock_key(user_id: str) -> int:
    """The advisory key of a user's graph writes: 32 bits of blake2b of the id, signed (two users sharing one
    only take turns)."""
    digest = hashlib.blake2b(user_id.encode("utf-8", "surrogatepass"), digest_size=4, person=b"lumina-graph").digest()
    return int.from_bytes(digest, "big", signed=True)


def _users_of(steps: Sequence[Step]) -> list[int]:
    """The sorted lock keys of the users a unit's steps write."""
    return sorted({user_lock_key(p["user_id"]) for _q, p in steps if isinstance(p.get("user_id"), str)})


def _deadlocked(exc: BaseException) -> bool:
    """Whether ``exc`` is (or was raised from) PostgreSQL's deadlock_detected."""
    while exc is not None:
        if isinstance(exc, psycopg.errors.DeadlockDetected):
            return True
        exc = exc.__cause__
    return False


def _once_more_on_deadlock(method: F) -> F:
    """``method`` run once more when PostgreSQL broke a deadlock by rolling its unit back; only for a unit of
    its own (inside a caller's transaction the whole transaction is gone, so the error goes up)."""

    @functools.wraps(method)
    def retried(self: "PostgresGraph", *args: Any, **kwargs: Any) -> Any:
        if self._db.in_transaction:
            return method(self, *args, **kwargs)
        for attempt in Retrying(retry=retry_if_exception(_deadlocked), stop=stop_after_attempt(2), reraise=True):
            with attempt:
                return method(self, *args, **kwargs)

    return retried  # type: ignore[return-value]


def _handler(table: Mapping[str, Handler], query: str) -> Handler:
    try:
        return table[query]
    except KeyError:
        raise NotImplementedError(f"PostgresGraph has no SQL form of this statement: {query.strip()[:80]!r}") from None


@contextmanager
def _named_errors() -> Iterator[None]:
    """Text PostgreSQL cannot store is the caller's bad input, named, and nothing of the unit is written."""
    try:
        yield
    except UnicodeEncodeError as exc:
        raise InvalidInput("text", f"is not valid Unicode (lone surrogate at position {exc.start})") from None
    except psycopg.DataError as exc:
        if "NUL" not in str(exc):
            raise
        raise InvalidInput("text", "contains a NUL character, which PostgreSQL cannot store") from None


def _run(con: Any, statements: Statements) -> Rows:
    """Run the statements in order; the rows of the last one that returns any, as dicts keyed by column."""
    rows: Rows = []
    for sql, args in statements:
        cur = con.execute(sql, args)
        if cur.description is not None:
            names = [c.name for c in cur.description]
            rows = [dict(zip(names, row)) for row in cur.fetchall()]
    return rows


class PostgresGraph(CypherGraph):
    """The associative graph in PostgreSQL tables (graph_* in the server-mode database)."""

    backend = "postgres"
    # Every NEW_* form is an upsert on the keys here (stores.graph_pg_sql), so the batched statements for new
    # segments are safe even while another process writes the same segment: its edges are made once.
    create_new_edges = True

    def __init__(self, uri: str, *, timeout: float = 10.0, pool_size: int = 4):
        self._db = PostgresConnection(uri, TIER, timeout=timeout, pool_size=pool_size)
        try:
            self._db.migrate(TIER, SCHEMA)
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def from_settings(cls, settings: LuminaSettings) -> "PostgresGraph":
        if not settings.database_url:
            raise InvalidInput("database_url", "the PostgreSQL graph needs DATABASE_URI or LUMINA_DATABASE_URL")
        return cls(settings.database_url, timeout=settings.database_timeout_seconds,
                   pool_size=settings.database_pool_size)

    def _exclusive(self) -> Any:
        """A read-check-write (or several reads) as one transaction: under READ COMMITTED each statement sees
        what other processes committed before it, and the keys keep concurrent writes from doubling anything."""
        return self._db.tx()

    def _read(self, query: str, params: Mapping[str, Any]) -> Rows:
        statements = _handler(_READS, query)(params)
        with _named_errors(), self._db.read() as con:
            return _run(con, statements)

    @_once_more_on_deadlock
    def _write(self, steps: Sequence[Step]) -> list[Rows]:
        planned = [_handler(_WRITES if query in _WRITES else _READS, query)(params) for query, params in steps]
        users = _users_of(steps)
        with _named_errors(), self._db.tx() as con:
            if users:  # re-entrant: a unit's later writes hold them already
                con.execute(_LOCK_USERS, [_USER_LOCK_CLASS, users])
            return [_run(con, statements) for statements in planned]

    def _relation_rows(self, seeds: list[str]) -> Rows:
        """Every relation touching the seeds, all kinds in one read (CypherGraph reads ten statements)."""
        with self._db.read() as con:
            return _run(con, [(RELATIONS_OF_SEGMENTS, [seeds, seeds])])

    def select(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        """Rows of one SQL read with ``?`` parameters, as dicts (inspection and tests)."""
        with _named_errors(), self._db.read() as con:
            return _run(con, [(sql, list(args))])

    def rewrite(self) -> None:
        """VACUUM FULL of the graph's tables: deleted rows' tuples leave the table and index files. It does not
        reach the WAL segments the server still keeps, nor backups and replicas; those age out on the server's
        own schedule (checkpoints, WAL recycling, backup retention)."""
        self._db.rewrite(TABLES)

    def close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"PostgresGraph({self._db.data_dir!r})"


# The writes that run as one unit around their reads (``_exclusive``): run once more whole on a deadlock.
for _name, _owner in (("upsert_segment", CypherGraph), ("upsert_linked_segment", CypherGraph),
                      ("upsert_linked_segments", CypherGraph), ("upsert_knowledge", GraphKnowledge),
                      ("delete_knowledge", GraphKnowledge), ("delete_segments", GraphMemoryChanges),
                      ("cross_user_edges", GraphRepair),
                      ("set_relations", GraphMemoryChanges)):
    setattr(PostgresGraph, _name, _once_more_on_deadlock(getattr(_owner, _name)))
