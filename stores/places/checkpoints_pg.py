"""The CLI's LangGraph checkpoints in server mode: langgraph-checkpoint-postgres's PostgresSaver on the memory's
PostgreSQL, so a thread written by one process (a CLI import, a notebook) is read and flushed by any other.

The saver's tables live in a schema of their own (``lumina_checkpoints``), reached through the connection's
``search_path``: a LangGraph Platform deployment keeps its own threads' ``checkpoints`` tables (and their
migration numbers) in the same database, and the two must not meet. ``setup`` runs the saver's migrations under
an advisory lock: the saver's own ``setup`` is not safe when two processes start at once (both insert the same
migration number). Connections are autocommit, as the saver needs (its migrations create indexes
CONCURRENTLY) and as VACUUM needs. The stored states are kept uncompressed (``STORAGE EXTERNAL``: large ones
still move to TOAST): PostgreSQL's pglz would otherwise hide a thread's text in its pages from the raw scan
that checks an erasure left nothing, and splice a kept user's id into false matches of an erased one's.

``CheckpointsPgPlace`` is the same UserDataPlace as the data dir's SQLite file (stores.places.checkpoints_place),
under the same name: a user's threads by the same rule; erasing deletes them and VACUUM FULL rewrites the
tables, their TOAST and the planner's sampled statistics (stores.pg_statistics); a backup exports the threads
into a SQLite checkpoint file of the embedded format, so a snapshot restores into either mode.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.rows import dict_row, tuple_row

from ..errors import StoreUnavailable
from ..pg_statistics import resample_statistics
from ..pg_watchdog import bounded_connection, grace, longer
from .checkpoints_place import FILE, copy_threads, forget_in_file, sqlite_threads, thread_owners

TIER = "checkpoints"
SCHEMA = "lumina_checkpoints"
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
UNCOMPRESSED = (("checkpoints", "checkpoint"), ("checkpoints", "metadata"), ("checkpoint_blobs", "blob"),
                ("checkpoint_writes", "blob"))
_SETUP_LOCK = 0x6C756D63706B  # pg_advisory_lock key held while the schema and the saver's tables are made


def connect(uri: str, timeout: float = 10.0, *, rows=dict_row) -> psycopg.Connection:
    """An autocommit connection whose unqualified table names are the checkpoint schema's, each statement bounded
    by ``timeout`` on the server (statement_timeout) and on the client (stores.pg_watchdog: a paused server never
    fires its own timeout); StoreUnavailable when the server cannot be reached within ``timeout``."""
    from ..pg_connection import describe

    statement_ms = max(1, int(timeout * 1000))
    try:
        con = bounded_connection(grace(timeout)).connect(
            uri, autocommit=True, prepare_threshold=0, row_factory=rows, connect_timeout=max(1, int(timeout)),
            options=f"-c statement_timeout={statement_ms}", application_name="lumina-checkpoints")
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(TIER, f"PostgreSQL at {describe(uri)}: {_first_line(exc)}") from None
    with unavailable(uri, con):
        con.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(SCHEMA)))
    return con


@contextmanager
def unavailable(uri: str, con: psycopg.Connection) -> Iterator[None]:
    """A lost or timed-out server inside the block raised as StoreUnavailable, ``con`` closed (its session is
    gone or stuck: the next use connects anew)."""
    from ..pg_connection import describe

    try:
        yield
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        con.close()
        raise StoreUnavailable(TIER, f"PostgreSQL at {describe(uri)}: {_first_line(exc)}") from None


@contextmanager
def session(uri: str, timeout: float = 10.0, *, rows=dict_row) -> Iterator[psycopg.Connection]:
    """``connect`` for one block, closed after it; a server lost inside it raised as StoreUnavailable."""
    con = connect(uri, timeout, rows=rows)
    try:
        with unavailable(uri, con):
            yield con
    finally:
        con.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def setup(con: psycopg.Connection, timeout: float = 10.0) -> None:
    """Create the schema and apply the saver's migrations, once across processes starting together.
    StoreUnavailable when another process holds the setup longer than its statements' bounds allow (a process
    stopped while holding it)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    # Polled, not waited for: a process blocked in pg_advisory_lock holds a snapshot that the holder's CREATE INDEX
    # CONCURRENTLY waits for, and PostgreSQL ends that cycle as a deadlock (three processes starting on a fresh
    # database hit it). Each try is a statement of its own that ends at once, so the index build never waits on it.
    # The holder runs at most one bounded statement per migration and column: waiting past that means it is stuck.
    deadline = time.monotonic() + (len(PostgresSaver.MIGRATIONS) + len(UNCOMPRESSED) + 2) * grace(timeout)
    try_lock = con.cursor(row_factory=tuple_row)
    while not try_lock.execute("SELECT pg_try_advisory_lock(%s)", [_SETUP_LOCK]).fetchone()[0]:
        if time.monotonic() > deadline:
            raise StoreUnavailable(TIER, "another process has held the checkpoint tables' setup lock too long "
                                         "(stopped while creating them?); try again")
        time.sleep(0.1)
    try:
        con.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(SCHEMA)))
        PostgresSaver(con).setup()
        for table, column in UNCOMPRESSED:  # altered once: ALTER TABLE locks the table against every reader
            row = con.execute("SELECT attstorage FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = %s",
                              [f"{SCHEMA}.{table}", column]).fetchone()
            if row is not None and (row["attstorage"] if isinstance(row, dict) else row[0]) != "e":
                con.execute(sql.SQL("ALTER TABLE {} ALTER COLUMN {} SET STORAGE EXTERNAL").format(
                    sql.Identifier(table), sql.Identifier(column)))
    finally:
        con.execute("SELECT pg_advisory_unlock(%s)", [_SETUP_LOCK])


def has_tables(con: psycopg.Connection) -> bool:
    row = con.execute("SELECT to_regclass(%s) IS NOT NULL AS ok", [f"{SCHEMA}.checkpoints"]).fetchone()
    return bool(row["ok"] if isinstance(row, dict) else row[0])


def pg_threads(con: psycopg.Connection) -> list[str]:
    """Every thread id with a checkpoint ([] before anything was ever checkpointed)."""
    if not has_tables(con):
        return []
    return [r["thread_id"] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]


def bounded_saver(uri: str, timeout: float = 10.0):
    """A PostgresSaver on a bounded connection (``connect``) whose every call fails as StoreUnavailable when the
    server is lost, stalled or too slow, and connects anew on the next call once the server answers again."""
    from langgraph.checkpoint.postgres import PostgresSaver

    class BoundedSaver(PostgresSaver):
        def __init__(self) -> None:
            super().__init__(connect(uri, timeout))
            self._reconnect = threading.Lock()

        def live(self) -> psycopg.Connection:
            """The saver's connection, a new one when the last call lost it."""
            with self._reconnect:
                if self.conn.closed:
                    self.conn = connect(uri, timeout)
                return self.conn

        @contextmanager
        def _cursor(self, *, pipeline: bool = False):
            con = self.live()
            with unavailable(uri, con), super()._cursor(pipeline=pipeline) as cur:
                yield cur

    return BoundedSaver()


class PgCheckpoints:
    """An open PostgresSaver on the memory's database, for a graph (the CLI) or a sweep (idle segments)."""

    def __init__(self, uri: str, timeout: float = 10.0):
        self.uri = uri
        self.saver = bounded_saver(uri, timeout)
        try:
            with unavailable(uri, self.saver.conn):
                setup(self.saver.conn, timeout)
        except BaseException:
            self.saver.conn.close()
            raise

    def threads(self) -> list[str]:
        with self.saver.lock:
            con = self.saver.live()
            with unavailable(self.uri, con):
                return pg_threads(con)

    def close(self) -> None:
        self.saver.conn.close()


class CheckpointsPgPlace:
    """The checkpoint tables of the server mode's database as a UserDataPlace (see the module docstring)."""

    name = "checkpoints"

    def __init__(self, uri: str, timeout: float = 10.0):
        self.uri, self.timeout = uri, timeout
        self._dirty = False

    def _owners(self, con: psycopg.Connection) -> dict[str, str | None]:
        from langgraph.checkpoint.postgres import PostgresSaver

        return thread_owners(pg_threads(con), PostgresSaver(con))

    def threads_of(self, user_id: str) -> list[str]:
        with session(self.uri, self.timeout) as con:
            return sorted(t for t, u in self._owners(con).items() if u == user_id)

    def count(self, user_id: str) -> int:
        return len(self.threads_of(user_id))

    def erase(self, user_id: str) -> int:
        from langgraph.checkpoint.postgres import PostgresSaver

        with session(self.uri, self.timeout) as con:
            threads = sorted(t for t, u in self._owners(con).items() if u == user_id)
            saver = PostgresSaver(con)
            for thread in threads:
                saver.delete_thread(thread)
        self._dirty = self._dirty or bool(threads)
        return len(threads)

    def scrub(self) -> None:
        """VACUUM FULL of the three tables (and their TOAST), then their statistics sampled anew: a deleted
        thread's text leaves the table files and pg_statistic. WAL segments and replicas age out on the server's
        own schedule (see PostgresConnection.rewrite)."""
        if not self._dirty:
            return
        from ..vectors_pg import REWRITE_SECONDS

        with session(self.uri, self.timeout, rows=tuple_row) as con:
            if has_tables(con):
                # The rewrite's own bounds, as the vector collections' (PgVectorStore.rewrite): it gives up at once
                # when it cannot take a table within the usual timeout, and may copy for up to REWRITE_SECONDS.
                con.execute("SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)",
                            [f"{max(1, int(self.timeout * 1000))}ms", f"{REWRITE_SECONDS}s"])
                with longer(con, grace(REWRITE_SECONDS)):
                    for table in TABLES:
                        con.execute(sql.SQL("VACUUM (FULL) {}").format(sql.Identifier(table)))
                    resample_statistics(con, list(TABLES))
        self._dirty = False

    def raw_paths(self) -> list[Path]:
        return []  # the server's files: the residue tests read them through the server's data directory

    def export(self, dest: Path) -> int:
        from langgraph.checkpoint.postgres import PostgresSaver
        from langgraph.checkpoint.sqlite import SqliteSaver

        dest.mkdir(parents=True, exist_ok=True)
        with session(self.uri, self.timeout) as con:
            threads = pg_threads(con)
            if not threads:
                return 0
            (dest / FILE).unlink(missing_ok=True)  # a retried export starts from an empty file
            target = sqlite3.connect(dest / FILE, check_same_thread=False)
            try:
                copy_threads(PostgresSaver(con), SqliteSaver(target), threads)
                target.commit()
            finally:
                target.close()
        (dest / FILE).chmod(0o600)
        return len(threads)

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        """Every thread of the snapshot's file but those of erased users; a thread already here is replaced
        whole (a resumed restore writes it once)."""
        from langgraph.checkpoint.postgres import PostgresSaver
        from langgraph.checkpoint.sqlite import SqliteSaver

        backup = src / FILE
        if not backup.exists():
            return 0
        source = sqlite3.connect(backup, check_same_thread=False)
        try:
            owners = thread_owners(sqlite_threads(source), SqliteSaver(source))
            kept = sorted(t for t, u in owners.items() if u is None or not is_erased(u))
            with session(self.uri, self.timeout) as con:
                setup(con, self.timeout)
                target = PostgresSaver(con)
                for thread in owners:
                    target.delete_thread(thread)
                copy_threads(SqliteSaver(source), target, kept)
        finally:
            source.close()
        self._dirty = True
        return len(kept)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return forget_in_file(src / FILE, user_id)
