"""What the archive's tables use of their database connection, whichever engine holds it.

The tables (archive, memories, knowledge, procedures, semantic, turn reads, knowledge bases, the LangGraph item
table) write their SQL once, in the subset DuckDB and PostgreSQL share: ``?`` parameters, ``VARCHAR``,
``BIGINT``, ``DOUBLE PRECISION``, ``REAL[]``, ``VARCHAR[]``, ``unnest(?::T[])``, ``= ANY(..)``, ``&&``, ``@>``,
``cardinality``, ``array_position``, ``ON CONFLICT .. DO UPDATE SET c = excluded.c``. The rare statement that
cannot be shared branches on ``dialect``. Two adapters implement this: ``duckdb_connection.GuardedConnection``
(one embedded file, one process) and ``pg_connection.PostgresConnection`` (a server any number of processes share).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol, Sequence, runtime_checkable


class Cursor(Protocol):
    def fetchall(self) -> list[tuple]: ...
    def fetchone(self) -> tuple | None: ...


class Executor(Protocol):
    """What a transaction hands its block: DuckDB's connection, or PostgreSQL's with ``?`` translated."""

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> Cursor: ...
    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> Any: ...


class KeyGenerations(Protocol):
    def get(self, key: str, default: int = 0) -> int: ...


@runtime_checkable
class SqlConnection(Protocol):
    dialect: str
    """'duckdb' or 'postgres'."""
    tier: str
    database: str
    data_dir: str
    lock: Any
    """Re-entrant lock serialising this process's uses (and guarding in-process state kept beside the rows)."""
    shared: bool
    """Whether other processes may write the same rows (PostgreSQL): in-process shortcuts that assume one
    writer must not be taken."""

    @property
    def generation(self) -> int:
        """Moves whenever a write transaction ends: indexes built from the rows compare it."""
        ...
    @property
    def key_generation(self) -> KeyGenerations:
        """Per key (a user id): moves whenever a write transaction touching that key ends."""
        ...
    @property
    def is_open(self) -> bool: ...
    @property
    def in_transaction(self) -> bool: ...
    def tx(self, touches: Iterable[str] = ()) -> AbstractContextManager[Executor]: ...
    def migrate(self, component: str, steps: Sequence[Sequence[str]]) -> None:
        """Apply ``component``'s numbered schema steps not yet applied (each once, whatever processes start)."""
        ...
    def read(self) -> AbstractContextManager[Executor]: ...
    def checkpoint(self) -> None: ...
    def rewrite(self) -> None:
        """Make deleted rows' bytes leave the storage (erasure)."""
        ...
    def close(self) -> None: ...


MIGRATIONS_TABLE = "lumina_migrations"
MIGRATIONS_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (
        component VARCHAR NOT NULL, step INTEGER NOT NULL, applied_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (component, step))""",
)


def apply_migrations(con: Executor, component: str, steps: Sequence[Sequence[str]], now: float) -> list[int]:
    """Run the steps of ``component`` that ``lumina_migrations`` does not list, in order, inside the caller's
    transaction; returns the steps applied. Step N is ``steps[N-1]``: append new steps, never edit old ones."""
    for statement in MIGRATIONS_SCHEMA:
        con.execute(statement)
    done = {row[0] for row in con.execute(
        f"SELECT step FROM {MIGRATIONS_TABLE} WHERE component = ?", [component]).fetchall()}
    applied = []
    for step, statements in enumerate(steps, start=1):
        if step in done:
            continue
        for statement in statements:
            con.execute(statement)
        con.execute(f"INSERT INTO {MIGRATIONS_TABLE} (component, step, applied_at) VALUES (?, ?, ?)",
                    [component, step, now])
        applied.append(step)
    return applied
