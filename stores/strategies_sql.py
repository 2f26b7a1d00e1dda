"""S5 strategy learning in the archive database: how the agent decomposed its own tasks (subtasks, parallel or
sequential) with how often each decomposition succeeded, and the failure patterns it met (indicator words, a
mitigation, a severity). One row per decomposition or pattern, on the archive's connection (same file, same
transactions); the ``user_id`` column puts the table in the archive's catalogue, so erasure, backups and the
residue scan find it (stores.places.archive). Rows go in and out as plain dicts; what they mean is
``lumina_memory.nodes.strategies``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InvalidInput
from .ids import validate_id
from .sql_connection import SqlConnection
from .texts import check_texts

STRATEGIES = "strategies"
KINDS = ("decomposition", "failure")
COLUMNS: tuple[tuple[str, str], ...] = (
    ("strategy_id", "VARCHAR"), ("user_id", "VARCHAR"), ("kind", "VARCHAR"), ("task", "VARCHAR"),
    ("category", "VARCHAR"), ("subtasks", "VARCHAR[]"), ("strategy", "VARCHAR"), ("pattern", "VARCHAR"), ("indicators", "VARCHAR[]"),
    ("mitigation", "VARCHAR"), ("severity", "INTEGER"), ("success_count", "INTEGER"), ("failure_count", "INTEGER"),
    ("embedding", "REAL[]"), ("created_at", "DOUBLE PRECISION"), ("updated_at", "DOUBLE PRECISION"),
)
NAMES = tuple(c for c, _ in COLUMNS)
_LISTS = {"subtasks", "indicators", "embedding"}
SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {STRATEGIES} ({', '.join(
        f"{c} {t} NOT NULL{' PRIMARY KEY' if c == 'strategy_id' else ''}" for c, t in COLUMNS)})""",
    f"CREATE INDEX IF NOT EXISTS {STRATEGIES}_user_idx ON {STRATEGIES} (user_id)",
)


class StrategyTable:
    """The strategies on the archive's connection."""

    def __init__(self, db: SqlConnection):
        self.db = db
        db.migrate("strategies", [SCHEMA])

    def get(self, user_id: str, strategy_id: str) -> dict[str, Any] | None:
        with self.db.read() as con:
            row = con.execute(f"SELECT {', '.join(NAMES)} FROM {STRATEGIES} WHERE user_id = ? AND strategy_id = ?",
                              [validate_id(user_id, "user_id"), validate_id(strategy_id, "strategy_id")]).fetchone()
        return _row(row) if row else None

    def of_user(self, user_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The user's rows (of ``kind``), oldest first."""
        where, params = ["user_id = ?"], [validate_id(user_id, "user_id")]
        if kind is not None:
            where.append("kind = ?")
            params.append(_kind(kind))
        with self.db.read() as con:
            rows = con.execute(f"SELECT {', '.join(NAMES)} FROM {STRATEGIES} WHERE {' AND '.join(where)} "
                               "ORDER BY created_at, strategy_id", params).fetchall()
        return [_row(r) for r in rows]

    def put(self, row: Mapping[str, Any]) -> None:
        """Insert or replace one row by ``strategy_id``; a row of another user's id is refused."""
        validate_id(row["user_id"], "user_id")
        validate_id(row["strategy_id"], "strategy_id")
        _kind(row["kind"])
        check_texts(row, NAMES)
        updates = ", ".join(f"{c} = excluded.{c}" for c in NAMES if c not in ("strategy_id", "user_id"))
        with self.db.tx(touches=(row["user_id"],)) as con:
            owner = con.execute(f"SELECT user_id FROM {STRATEGIES} WHERE strategy_id = ?", [row["strategy_id"]]).fetchone()
            if owner and owner[0] != row["user_id"]:
                raise InvalidInput("strategy_id", f"{row['strategy_id']!r} belongs to another user")
            con.execute(f"INSERT INTO {STRATEGIES} ({', '.join(NAMES)}) VALUES ({', '.join('?' for _ in NAMES)}) "
                        f"ON CONFLICT (strategy_id) DO UPDATE SET {updates}",
                        [list(row[c] or ()) if c in _LISTS else row[c] for c in NAMES])


    def expire_before(self, cutoff: float) -> dict[str, int]:
        """Retention: every row last updated (learnt, or its outcome counted) before ``cutoff`` goes; rows removed
        per user."""
        with self.db.read() as con:
            users = [r[0] for r in con.execute(
                f"SELECT DISTINCT user_id FROM {STRATEGIES} WHERE updated_at < ?", [float(cutoff)]).fetchall()]
        if not users:
            return {}
        with self.db.tx(touches=users) as con:
            gone = con.execute(f"DELETE FROM {STRATEGIES} WHERE updated_at < ? RETURNING user_id",
                               [float(cutoff)]).fetchall()
        out: dict[str, int] = {}
        for (user_id,) in gone:
            out[user_id] = out.get(user_id, 0) + 1
        return out


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise InvalidInput("kind", f"must be one of {KINDS}, got {kind!r}")
    return kind


def _row(values: Sequence[Any]) -> dict[str, Any]:
    row = dict(zip(NAMES, values))
    for column in _LISTS:
        row[column] = list(row[column] or ())
    return row
