"""The archive's connection on a PostgreSQL server (``SqlConnection``): many processes share one memory.

What differs from the embedded DuckDB file, and why:
- Write stamps are rows (``lumina_versions``), set inside the writing transaction to values of one sequence, so
  another process sees a user's new stamp exactly when it sees the rows, and a rolled-back transaction's values
  are never handed out again (its keys are stamped anew after the rollback). A write stamps its users' rows first
  (sorted, so two writers never deadlock), which also locks them until COMMIT: writers of one user across
  processes take turns (ProcedureTable's read-modify-write relies on it). The tier's own row is stamped last.
- Schemas are numbered migrations (``sql_connection.apply_migrations``) applied under an advisory lock, so
  processes that start together apply each step once.
- Every wait is bounded: taking a connection (``timeout``) and each statement (``statement_timeout``); a server
  that is down or slow fails the call as ``StoreUnavailable`` naming the tier and the URI's host, never a raw
  driver error.
"""

from __future__ import annotations

import re
import select
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from .errors import StoreUnavailable
from .pg_watchdog import WATCHDOG, bounded_connection, grace
from .pg_stamps import stamps_of
from .pg_statistics import resample_statistics
from .sql_connection import MIGRATIONS_TABLE, apply_migrations

VERSIONS_TABLE = "lumina_versions"
# The row of a tier's own generation: a control character no validated user id holds, so it never meets a
# user's stamp, and one row per tier, so the graph's writes neither move the archive's generation nor queue on
# its row.
GLOBAL_PREFIX = "\x1f"
_MIGRATION_LOCK = 0x6C756D696E61  # pg_advisory_xact_lock key held while a schema is migrated
_VERSIONS_SCHEMA = f"CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} (key VARCHAR PRIMARY KEY, version BIGINT NOT NULL)"
# Stamp values come from a sequence, which a rollback does not take back: a value a cache read inside a transaction
# that rolled back is never handed out again, so that cache cannot match a later committed stamp.
_VERSIONS_SEQUENCE = f"CREATE SEQUENCE IF NOT EXISTS {VERSIONS_TABLE}_seq"
# A '?' outside quotes is a parameter. psycopg reads every '%' as its own placeholder syntax, inside quoted
# literals too, so each is doubled, and parameters always travel as a sequence (an empty one included): with
# None, psycopg would send the doubled '%%' to the server verbatim.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|%")


@lru_cache(maxsize=4096)
def to_pyformat(sql: str) -> str:
    """``sql`` with DuckDB's ``?`` parameters written as psycopg's ``%s``."""

    def swap(match: re.Match[str]) -> str:
        token = match.group(0)
        return "%s" if token == "?" else "%%" if token == "%" else token.replace("%", "%%")

    return _TOKENS.sub(swap, sql)


class PgExecutor:
    """A psycopg connection that takes the shared SQL (``?`` parameters); ``bound``: seconds after which a call
    still waiting breaks the connection (stores.pg_watchdog), for a server too stalled to enforce its own
    statement_timeout."""

    def __init__(self, con: psycopg.Connection, where: str, tier: str, bound: float | None = None):
        self._con, self._where, self._tier, self._bound = con, where, tier, bound

    def _watched(self):
        return WATCHDOG.watching(self._con, self._bound) if self._bound else nullcontext()

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> psycopg.Cursor:
        try:
            with self._watched():
                return self._con.execute(to_pyformat(sql), list(parameters) if parameters is not None else [])
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise _unavailable(self._tier, self._where, exc) from exc

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> None:
        try:
            with self._watched(), self._con.cursor() as cur:
                cur.executemany(to_pyformat(sql), list(parameters))
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise _unavailable(self._tier, self._where, exc) from exc


def _unavailable(tier: str, where: str, exc: BaseException) -> StoreUnavailable:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreUnavailable(tier, f"PostgreSQL at {where}: {detail}")


def idle_check(bound: float):
    """A pool's check of an idle connection before lending it, without a round trip when the connection is
    quiet: an idle connection has nothing to read unless its server ended it (a restart or a terminated backend
    sends an error and closes the socket), so a socket with nothing to read is lent as it is. Anything else is
    checked by a query, bounded by ``bound`` seconds (stores.pg_watchdog), and the pool replaces a connection
    that fails it."""

    def check(con: psycopg.Connection) -> None:
        pgconn = con.pgconn
        if (pgconn.status == psycopg.pq.ConnStatus.OK
                and pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE and not con.closed):
            try:
                if not select.select([pgconn.socket], [], [], 0)[0]:
                    return
            except (OSError, ValueError, psycopg.OperationalError):
                pass  # no usable socket: the query below fails and the pool replaces the connection
        with WATCHDOG.watching(con, bound):
            ConnectionPool.check_connection(con)

    return check


def describe(uri: str) -> str:
    """Where ``uri`` points, without its password (for messages)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(uri)
    except psycopg.ProgrammingError:
        return "an unparsable DATABASE_URI"
    host = info.get("host") or "localhost"
    return f"{host}/{info.get('dbname') or info.get('user') or ''}"


class _Versions:
    """Stamps by key: inside a transaction its own (uncommitted) rows; otherwise the process's shared stamps of
    the database (stores.pg_stamps: reused for a short validity, dropped by this process's writes)."""

    def __init__(self, owner: PostgresConnection):
        self._owner = owner

    def get(self, key: str, default: int = 0) -> int:
        if self._owner.in_transaction:
            stamp = self._read(key)
            return default if stamp is None else stamp
        return self._owner.stamps.get(key, default, self._read)

    def _read(self, key: str) -> int | None:
        with self._owner.read() as con:
            row = con.execute(f"SELECT version FROM {VERSIONS_TABLE} WHERE key = ?", [key]).fetchone()
        return int(row[0]) if row else None


class PostgresConnection:
    """``SqlConnection`` on a PostgreSQL server, for one component (``tier``) and its schema migrations."""

    dialect = "postgres"
    shared = True

    def __init__(self, uri: str, tier: str, *, timeout: float = 10.0, pool_size: int = 4):
        self.database, self.tier = uri, tier
        self._global_key = GLOBAL_PREFIX + tier
        self.data_dir = describe(uri)
        self.stamps = stamps_of(uri)
        self.lock = threading.RLock()
        self._local = threading.local()
        self._bound = grace(timeout)
        statement_ms = max(1, int(timeout * 1000))
        self._pool: ConnectionPool | None = ConnectionPool(
            uri, min_size=1, max_size=max(1, pool_size), timeout=timeout, open=False, name=f"lumina-{tier}",
            kwargs={"connect_timeout": max(1, int(timeout)), "options": f"-c statement_timeout={statement_ms}",
                    "autocommit": True},
            reconnect_timeout=timeout,
            connection_class=bounded_connection(self._bound),  # BEGIN and COMMIT bounded too, not only statements
            check=idle_check(self._bound),  # after a server restart the idle connections are dead
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except (PoolTimeout, psycopg.OperationalError) as exc:
            self._pool.close()
            self._pool = None
            raise _unavailable(tier, self.data_dir, exc) from None
        self.migrate("connection", ())  # the stamps' and migrations' own tables

    # --- transactions -------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._pool is not None

    @property
    def in_transaction(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        if self._pool is None:
            raise StoreUnavailable(self.tier, f"{self.data_dir} was closed; open the store again")
        try:
            with self._pool.connection() as con:
                yield con
        except PoolTimeout as exc:
            raise _unavailable(self.tier, self.data_dir, exc) from None

    @contextmanager
    def tx(self, touches: Iterable[str] = ()) -> Iterator[PgExecutor]:
        """One transaction (nested: part of the outer one). ``touches``: keys whose stamps this write moves."""
        keys = sorted(set(touches))
        with self.lock:
            outer = getattr(self._local, "executor", None)
            if outer is not None:
                self._local.depth += 1
                self._local.touched.update(keys)
                try:
                    self._bump(outer, keys)
                    yield outer
                finally:
                    self._local.depth -= 1
                return
            with self._connection() as con:
                try:
                    with con.transaction():
                        executor = PgExecutor(con, self.data_dir, self.tier, self._bound)
                        self._local.executor, self._local.depth, self._local.touched = executor, 1, set(keys)
                        try:
                            self._bump(executor, keys)
                            yield executor
                            self._bump(executor, [self._global_key])
                        finally:
                            self._local.executor, self._local.depth = None, 0
                except psycopg.OperationalError as exc:
                    raise _unavailable(self.tier, self.data_dir, exc) from exc
                except BaseException:
                    self._bump_after_rollback(con)
                    raise
                finally:
                    self._stamps_moved()

    def _stamps_moved(self) -> None:
        """After a write ends, committed or not: the stamps it moved are read anew by this process. A write
        naming no user may have changed stamp rows directly (an erasure deletes its user's), so it drops all."""
        touched = getattr(self._local, "touched", set())
        self.stamps.moved([*touched, self._global_key] if touched else None)

    def _bump_after_rollback(self, con: psycopg.Connection) -> None:
        """Move the rolled-back transaction's stamps (its keys and the tier's), as DuckDB's move: a reader that
        looked inside it must look again."""
        keys = sorted(getattr(self._local, "touched", set()) | {self._global_key})
        try:
            with con.transaction():
                self._bump(PgExecutor(con, self.data_dir, self.tier, self._bound), keys)
        except psycopg.Error:
            pass  # the connection itself failed: the caller sees the original error

    @staticmethod
    def _bump(executor: PgExecutor, keys: Sequence[str]) -> None:
        if keys:
            executor.execute(
                f"INSERT INTO {VERSIONS_TABLE} (key, version) SELECT k, nextval('{VERSIONS_TABLE}_seq') "
                "FROM unnest(?::VARCHAR[]) AS k ORDER BY k ON CONFLICT (key) DO UPDATE SET version = excluded.version",
                [list(keys)],
            )

    @contextmanager
    def read(self) -> Iterator[PgExecutor]:
        with self.lock:
            outer = getattr(self._local, "executor", None)
            if outer is not None:
                yield outer
                return
            with self._connection() as con:
                yield PgExecutor(con, self.data_dir, self.tier, self._bound)

    @property
    def generation(self) -> int:
        return self.key_generation.get(self._global_key, 0)

    @property
    def key_generation(self) -> _Versions:
        return _Versions(self)

    # --- schema -------------------------------------------------------------------------------
    def migrate(self, component: str, steps: Sequence[Sequence[str]]) -> None:
        with self.tx() as con:
            con.execute("SELECT pg_advisory_xact_lock(?)", [_MIGRATION_LOCK])
            con.execute(_VERSIONS_SCHEMA)
            con.execute(_VERSIONS_SEQUENCE)
            apply_migrations(con, component, steps, time.time())

    def applied_steps(self, component: str) -> list[int]:
        with self.read() as con:
            rows = con.execute(f"SELECT step FROM {MIGRATIONS_TABLE} WHERE component = ? ORDER BY step",
                               [component]).fetchall()
        return [int(r[0]) for r in rows]

    # --- storage ------------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Nothing to fold: PostgreSQL makes a commit durable in its WAL, and checkpoints on its own."""

    def rewrite(self, tables: Sequence[str] = ()) -> None:
        """VACUUM FULL: rewrite ``tables`` so deleted rows' tuples leave the table files. It does not reach the
        WAL segments still kept, or copies in backups and replicas; those age out on the server's own schedule."""
        with self.lock, self._connection() as con:
            for table in tables:
                con.execute(f'VACUUM (FULL) "{table}"')
            resample_statistics(con, tables)  # pg_statistic keeps sampled values of the deleted rows

    def close(self) -> None:
        with self.lock:
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.close()
