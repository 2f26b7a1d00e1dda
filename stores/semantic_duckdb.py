"""Semantic memories (P4): what many episodes on different days have in common, kept with its sources.

One row per cluster of similar episodes (segments) spanning at least two days. The episodes themselves are
never deleted by consolidation (the lifecycle compresses them); a semantic memory grows when a new episode
joins its cluster. The table has a ``user_id`` column, so erasure, backups and the residue scan cover it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .ids import validate_id
from .memories_schema import rows_changed, stored_text
from .sql_connection import SqlConnection

SEMANTIC = "semantic_memories"
COLUMNS = ("semantic_id", "user_id", "text", "keywords", "episode_ids", "first_ts", "last_ts", "days", "method",
           "created", "updated")

SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {SEMANTIC} (
        semantic_id VARCHAR PRIMARY KEY,
        user_id VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        keywords VARCHAR[] NOT NULL,
        episode_ids VARCHAR[] NOT NULL,
        first_ts DOUBLE PRECISION NOT NULL,
        last_ts DOUBLE PRECISION NOT NULL,
        days INTEGER NOT NULL,            -- distinct local days its episodes span
        method VARCHAR NOT NULL,          -- offline or llm
        created DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {SEMANTIC}_user_idx ON {SEMANTIC} (user_id)",
)


class SemanticTable:
    def __init__(self, db: SqlConnection):
        self.db = db
        db.migrate("semantic", [SCHEMA])  # step 1: the tables as first made; later changes are new steps

    def upsert(self, rows: Sequence[Mapping[str, Any]]) -> int:
        if not rows:
            return 0
        for r in rows:
            validate_id(r["user_id"], "user_id")
            validate_id(r["semantic_id"], "semantic_id")
            for e in r["episode_ids"]:
                validate_id(e, "episode_ids")
            stored_text("text", r["text"])
            for k in r["keywords"]:
                stored_text("keywords", k)
        with self.db.tx(touches={r["user_id"] for r in rows}) as con:
            con.executemany(
                f"INSERT INTO {SEMANTIC} ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)}) "
                "ON CONFLICT (semantic_id) DO UPDATE SET " + ", ".join(
                    f"{c} = excluded.{c}" for c in COLUMNS if c not in ("semantic_id", "user_id", "created")),
                [[list(r[c]) if c in ("keywords", "episode_ids") else r[c] for c in COLUMNS] for r in rows])
        return len(rows)

    def items(self, user_id: str) -> list[dict[str, Any]]:
        with self.db.read() as con:
            rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM {SEMANTIC} WHERE user_id = ? ORDER BY first_ts, semantic_id",
                               [validate_id(user_id, "user_id")]).fetchall()
        return [dict(zip(COLUMNS, r)) for r in rows]

    def delete(self, user_id: str, semantic_ids: Sequence[str]) -> int:
        user_id = validate_id(user_id, "user_id")
        ids = [validate_id(i, "semantic_id") for i in semantic_ids]
        if not ids:
            return 0
        with self.db.tx(touches=(user_id,)) as con:
            return rows_changed(self.db.dialect, con.execute(
                f"DELETE FROM {SEMANTIC} WHERE user_id = ? AND semantic_id IN (SELECT unnest(?::VARCHAR[]))",
                [user_id, ids]))

    def forget_episodes(self, user_id: str, episode_ids: Sequence[str]) -> int:
        """A deleted episode leaves its clusters; a cluster left with fewer than two episodes goes."""
        user_id = validate_id(user_id, "user_id")
        gone = [validate_id(e, "episode_ids") for e in episode_ids]
        with self.db.tx(touches=(user_id,)) as con:
            con.execute(
                f"UPDATE {SEMANTIC} SET episode_ids = array(SELECT e FROM unnest(episode_ids) AS k(e) "
                "WHERE NOT (e = ANY(?::VARCHAR[]))) WHERE user_id = ? AND episode_ids && ?::VARCHAR[]",
                [gone, user_id, gone])
            return rows_changed(self.db.dialect, con.execute(
                f"DELETE FROM {SEMANTIC} WHERE user_id = ? AND cardinality(episode_ids) < 2", [user_id]))
