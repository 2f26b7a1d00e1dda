"""One guarded DuckDB connection: open with a clear lock error, run transactions, close cleanly.

Shared by every DuckDB-backed adapter. The connection is not safe for concurrent use, and LangGraph
may run nodes in a thread pool, so every use goes through one lock.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb

from . import file_swap
from .datadir_lock import read_holder
from .errors import DataDirLocked, StoreUnavailable
from .sql_connection import apply_migrations

# DuckDB 2.0: 'IO Error: Could not set lock on file "<path>": Conflicting lock is held in <prog> (PID <n>)'
LOCK_RE = re.compile(r"Conflicting lock is held in (?P<prog>.*?) \(PID (?P<pid>\d+)\)")


# DuckDB answers a filter on an indexed column (``WHERE user_id = ?``) by an index scan when it matches up to 2,048
# rows (or 0.1 % of the table), and an index scan fetches its rows one by one, decoding the compressed column again
# for each (duckdb/duckdb PR #25054): reading one user's 1,000 segments with long texts took 2.8 s against 15 ms
# for a sequential scan of the same table. A memory store mostly reads a user's rows by the hundred, so only point
# lookups (a few ids) keep the index.
INDEX_SCAN_MAX_ROWS = 16


def connect(database: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(database)
    con.execute(f"SET index_scan_max_count = {INDEX_SCAN_MAX_ROWS}")
    con.execute("SET index_scan_percentage = 0")
    return con


class GuardedConnection:
    """``SqlConnection`` on one embedded DuckDB file, owned by one process."""

    dialect = "duckdb"
    shared = False

    def __init__(self, database: str, data_dir: str, tier: str, schema: Iterable[str]):
        self.database, self.data_dir, self.tier = database, data_dir, tier
        self.lock = threading.RLock()  # re-entrant: a tx() inside a tx() joins the outer transaction
        self._depth = 0
        # Bumped when an outermost transaction ends (committed or not): in-process indexes built from
        # this database compare it instead of re-counting rows on every read. The file is locked to one
        # connection, so no write can land here without passing through tx().
        self.generation = 0
        # The generation at which a transaction touching each key (a user id) last ended, and the keys
        # the open transaction touched. Per-user indexes compare their user's stamp, so one user's write
        # does not make every other user's next read re-check the archive.
        self.key_generation: dict[str, int] = {}
        self._touched: set[str] = set()
        if database != ":memory:":
            # A rewrite killed half-way is finished or undone before DuckDB opens the file (and its WAL).
            file_swap.recover(Path(database))
        try:
            self._con: duckdb.DuckDBPyConnection | None = connect(database)
        except duckdb.IOException as exc:
            match = LOCK_RE.search(str(exc))
            if match is None and "Could not set lock" not in str(exc):
                raise
            holder = f"pid={match['pid']} ({match['prog']})" if match else f"another process ({exc})"
            # The data-dir lock file (stores.datadir_lock) says more (command line, start time).
            described = read_holder(data_dir)
            if match and described.startswith(f"pid={match['pid']} "):
                holder = described
            raise DataDirLocked(data_dir, holder) from None
        with self.tx() as con:
            for statement in schema:
                con.execute(statement)
        if database != ":memory:" and (file_swap.rewrite_owed(Path(database)) or self._erasure_interrupted()):
            # A rewrite was killed before its switch, or an erasure was interrupted: rows it deleted may still
            # sit in freed blocks, and the erasure's redo rewrites only files it deletes from again.
            try:
                self.rewrite()
            except BaseException:
                self.close()  # do not keep the file lock of a connection the caller never got
                raise

    def _erasure_interrupted(self) -> bool:
        from .erasure import erasures_in_progress

        return bool(erasures_in_progress(self.data_dir)) if os.path.isdir(self.data_dir) else False

    @property
    def is_open(self) -> bool:
        return self._con is not None

    @property
    def in_transaction(self) -> bool:
        """Whether a tx() of the lock's holder is open: what it writes may still roll back."""
        return self._depth > 0

    def live(self) -> duckdb.DuckDBPyConnection:
        """The connection; callers hold ``lock``."""
        if self._con is None:
            raise StoreUnavailable(self.tier, f"{self.database} was closed; open the store again")
        return self._con

    @contextmanager
    def tx(self, touches: Iterable[str] = ()) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction; nested in another tx() of the same thread, part of that one (the outer
        block commits, or rolls everything back). ``touches``: the keys (user ids) whose rows it may
        write; their stamps in ``key_generation`` move when the outermost transaction ends."""
        with self.lock:
            self._touched.update(touches)
            con = self.live()
            if self._depth:
                self._depth += 1
                try:
                    yield con
                finally:
                    self._depth -= 1
                return
            con.execute("BEGIN TRANSACTION")
            self._depth = 1
            try:
                try:
                    yield con
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                finally:
                    self._depth = 0
                con.execute("COMMIT")
            finally:
                self.generation += 1
                # Committed or rolled back: either way a reader that looked inside must look again.
                for key in self._touched:
                    self.key_generation[key] = self.generation
                self._touched.clear()

    def migrate(self, component: str, steps: Sequence[Sequence[str]]) -> None:
        with self.tx() as con:
            apply_migrations(con, component, steps, time.time())

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            yield self.live()

    def checkpoint(self) -> None:
        with self.lock:
            self.live().execute("CHECKPOINT")

    def close(self) -> None:
        """Checkpoint and release the file (and DuckDB's file lock). Idempotent."""
        with self.lock:
            con, self._con = self._con, None
            if con is None:
                return
            try:
                con.execute("CHECKPOINT")
            finally:
                con.close()

    def rewrite(self) -> None:
        """Copy every table into a fresh file and swap it in (L11): DuckDB leaves deleted rows in freed
        blocks of the file, so erasure must rewrite it for the bytes to go. The copy is built complete
        beside the live file and switched in by stores.file_swap, which also drops the live file's WAL: a
        kill at any moment leaves the old file or the new one. In-memory: nothing to do."""
        with self.lock:
            con = self.live()
            if self.database == ":memory:":
                return
            live = Path(self.database)
            file_swap.owe_rewrite(live)  # until the switch: a kill before it leaves the next open to redo this
            fresh = file_swap.staging(live) / live.name
            con.execute("CHECKPOINT")
            (name,) = con.execute("SELECT current_database()").fetchone()
            con.execute("ATTACH ? AS lumina_rewrite", [str(fresh)])
            try:
                con.execute(f'COPY FROM DATABASE "{name}" TO lumina_rewrite')
            finally:
                con.execute("DETACH lumina_rewrite")
            self._con = None
            con.close()
            for path in file_swap.staging_entries(live):
                os.chmod(path, 0o600)
            try:
                file_swap.commit(live, companions=(".wal",))
            finally:
                self._con = connect(self.database)  # the new file (or the old one if the switch failed)
