"""What each write and each recall cost (issue 49), in the archive's database: one row per operation with its kind
(``op``: write, flush, recall, prime, reply, maintain), the path it ran (offline or llm), each stage's milliseconds, the
model calls and tokens it made (per model, and per stage or part that made them), and the error that ended it, if any.

The rows name no user and hold no text (``user_id`` absent on purpose): they describe the memory's work, not anyone's
memory, so erasure, backups and restores have nothing to reach here (stores.places.archive lists only tables with a
user column). Rows are kept in memory and written in batches (``add``: every ``batch_rows`` rows or
``batch_seconds``; ``flush`` and the archive's close write the rest): one transaction per recall would cost an fsync
each on the embedded file. Retention by age (``expire_before``) bounds the table.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from .sql_connection import SqlConnection

OP_COSTS = "op_costs"
COLUMNS: tuple[tuple[str, str], ...] = (
    ("ts", "DOUBLE PRECISION"), ("op", "VARCHAR"), ("path", "VARCHAR"), ("ms", "DOUBLE PRECISION"),
    ("stages", "VARCHAR"), ("error", "VARCHAR"), ("calls", "INTEGER"), ("input_tokens", "BIGINT"),
    ("output_tokens", "BIGINT"), ("models", "VARCHAR"), ("stage_calls", "VARCHAR"),
)
NAMES = tuple(c for c, _ in COLUMNS)
_JSON = {"stages", "models", "stage_calls"}
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {OP_COSTS} ({', '.join(f'{c} {t} NOT NULL' for c, t in COLUMNS[:-1])})",
    f"CREATE INDEX IF NOT EXISTS {OP_COSTS}_ts_idx ON {OP_COSTS} (ts)",
)
# The model calls per stage or part that made them: {stage: {calls, input_tokens, output_tokens}}.
STAGE_CALLS = (f"ALTER TABLE {OP_COSTS} ADD COLUMN IF NOT EXISTS stage_calls VARCHAR DEFAULT '{{}}'",)
# One statement per batch, its columns as arrays (row by row, executemany took ~70 ms for 50 rows on DuckDB).
_INSERT = (f"INSERT INTO {OP_COSTS} ({', '.join(NAMES)}) SELECT "
           + ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in COLUMNS))


class CostTable:
    """The operations' cost records on the archive's connection, written in batches."""

    def __init__(self, db: SqlConnection):
        self.db = db
        db.migrate("op_costs", [SCHEMA, STAGE_CALLS])
        self._lock = threading.Lock()
        self._pending: list[list[Any]] = []
        self._oldest = 0.0  # perf_counter of the first row waiting

    def add(self, record: Mapping[str, Any], batch_rows: int = 1, batch_seconds: float = 0.0,
            keep_days: float | None = None) -> int:
        """Keep one record; write the waiting ones once ``batch_rows`` wait or the first waited ``batch_seconds``,
        removing in the same transaction the records older than ``keep_days``. The rows written (0 while they
        wait)."""
        row = [json.dumps(record.get(c) or {}, ensure_ascii=False) if c in _JSON else record.get(c) for c in NAMES]
        row = [v if v is not None else ("" if t == "VARCHAR" else 0) for v, (_, t) in zip(row, COLUMNS)]
        with self._lock:
            if not self._pending:
                self._oldest = time.perf_counter()
            self._pending.append(row)
            due = len(self._pending) >= batch_rows or time.perf_counter() - self._oldest >= batch_seconds
        return self.flush(keep_days) if due else 0

    def flush(self, keep_days: float | None = None) -> int:
        """Write every waiting record in one transaction (and remove those older than ``keep_days``); how many."""
        with self._lock:
            if not self.db.is_open:  # closed (its close wrote what waited): nothing more can be written
                return 0
            rows, self._pending = self._pending, []
        if rows:
            with self.db.tx() as con:
                con.execute(_INSERT, [list(column) for column in zip(*rows)])
                if keep_days is not None:
                    con.execute(f"DELETE FROM {OP_COSTS} WHERE ts < ?", [time.time() - keep_days * 86_400])
            return len(rows)
        return 0

    def since(self, ts: float, op: str | None = None) -> list[dict[str, Any]]:
        """The records from ``ts`` (wall-clock epoch) on, of ``op`` when given, oldest first (waiting ones written
        first)."""
        self.flush()
        where, params = ["ts >= ?"], [float(ts)]
        if op is not None:
            where.append("op = ?")
            params.append(op)
        with self.db.read() as con:
            rows = con.execute(f"SELECT {', '.join(NAMES)} FROM {OP_COSTS} WHERE {' AND '.join(where)} ORDER BY ts",
                               params).fetchall()
        return [_record(r) for r in rows]

    def expire_before(self, cutoff: float) -> int:
        """Retention: records older than ``cutoff`` (epoch seconds) go; how many."""
        with self.db.tx() as con:
            return len(con.execute(f"DELETE FROM {OP_COSTS} WHERE ts < ? RETURNING op", [float(cutoff)]).fetchall())


def _record(values: tuple) -> dict[str, Any]:
    record = dict(zip(NAMES, values))
    for column in _JSON:
        record[column] = json.loads(record[column] or "{}")
    return record
