"""The archive's derivation outbox: which derived writes each archived segment still owes (mixed into
archive_sql.SqlArchive), and the newest archive activity the recovery and warm-up read."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from .archive_schema import changed_rows, serialized
from .errors import InvalidInput
from .ids import OUTBOX_TABLE, SEGMENTS_TABLE, TURNS_TABLE, validate_id
from .sql_connection import SqlConnection

# A segment's stages travel joined by this character: PostgreSQL has no ragged arrays of arrays to unnest.
_STAGE_SEP = "\x1f"


class ArchiveOutbox:
    """``SqlArchive``'s outbox methods (``_db`` is the archive's connection)."""

    _db: SqlConnection

    # --- derivation outbox (crash safety, outages) ---------------------------------------------------
    # The archive is the durable base; the other tiers are derived from it. A segment's row says which
    # derived writes (redis, qdrant, graph) it still owes and the promotion verdict made at flush, so a
    # crash or an outage between the archive commit and the last derived write is completed later from
    # the archive (nodes.recovery) instead of being lost.
    def put_outbox(self, entries: Sequence[tuple[str, str, Sequence[str], str]]) -> None:
        """(user_id, segment_id, stages still owed, promotion verdict) per segment, in the order given
        (recovery applies them in that order). Inside ``transaction()`` it commits with the segments."""
        rows = [(validate_id(u, "user_id"), validate_id(s, "segment_id"), _stages(st), str(p or ""))
                for u, s, st, p in entries]
        if not rows:
            return
        with self._db.tx() as con:
            serialized(con, self._db, OUTBOX_TABLE)  # seq continues the largest committed one
            con.execute(f"DELETE FROM {OUTBOX_TABLE} WHERE segment_id IN (SELECT unnest(?::VARCHAR[]))",
                        [[r[1] for r in rows]])
            con.execute(
                f"INSERT INTO {OUTBOX_TABLE} SELECT b.s, b.u, CASE WHEN b.st = '' THEN CAST(ARRAY[] AS VARCHAR[]) "
                "ELSE string_to_array(b.st, chr(31)) END, b.p, m.base + b.ord, ? FROM (SELECT "
                "unnest(?::VARCHAR[]) AS s, unnest(?::VARCHAR[]) AS u, unnest(?::VARCHAR[]) AS st, "
                "unnest(?::VARCHAR[]) AS p, unnest(?::BIGINT[]) AS ord) AS b, "
                f"(SELECT coalesce(max(seq), 0) AS base FROM {OUTBOX_TABLE}) AS m",
                [time.time(), [r[1] for r in rows], [r[0] for r in rows], [r[2] for r in rows],
                 [r[3] for r in rows], list(range(1, len(rows) + 1))],
            )

    def settle_outbox(self, user_id: str, remaining: dict[str, Sequence[str]]) -> None:
        """Record what each segment still owes after a pass: an empty list removes its row."""
        validate_id(user_id, "user_id")
        if not remaining:
            return
        done = [s for s, st in remaining.items() if not st]
        left = {s: list(st) for s, st in remaining.items() if st}
        with self._db.tx() as con:
            if done:
                con.execute(f"DELETE FROM {OUTBOX_TABLE} WHERE user_id = ? AND segment_id IN (SELECT unnest(?::VARCHAR[]))",
                            [user_id, done])
            for segment, stages in left.items():
                con.execute(f"UPDATE {OUTBOX_TABLE} SET stages = ? WHERE user_id = ? AND segment_id = ?",
                            [stages, user_id, segment])

    def outbox(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Pending rows, oldest first: {'user_id', 'segment_id', 'stages', 'promotion', 'seq', 'queued_at'}."""
        where, params = ("", []) if user_id is None else (" WHERE user_id = ?", [validate_id(user_id, "user_id")])
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT user_id, segment_id, stages, promotion, seq, queued_at FROM {OUTBOX_TABLE}{where} ORDER BY seq",
                params,
            ).fetchall()
        keys = ("user_id", "segment_id", "stages", "promotion", "seq", "queued_at")
        return [dict(zip(keys, (r[0], r[1], list(r[2]), r[3], int(r[4]), float(r[5])))) for r in rows]

    def outbox_size(self) -> int:
        """How many segments still owe derived writes (all users): one cheap count before a flush."""
        with self._db.read() as con:
            row = con.execute(f"SELECT count(*) FROM {OUTBOX_TABLE}").fetchone()
        return int(row[0]) if row else 0

    def outbox_count_user(self, user_id: str) -> int:
        with self._db.read() as con:
            row = con.execute(f"SELECT count(*) FROM {OUTBOX_TABLE} WHERE user_id = ?",
                              [validate_id(user_id, "user_id")]).fetchone()
        return int(row[0]) if row else 0

    def outbox_erase_user(self, user_id: str) -> int:
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            return changed_rows(con, f"DELETE FROM {OUTBOX_TABLE} WHERE user_id = ?", [user_id])

    def archived_since(self, since: float) -> list[tuple[str, str, float]]:
        """(user_id, segment_id, archived_at) of every segment archived at or after ``since`` (wall clock),
        oldest first: what mid-term should still hold within its TTL."""
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT user_id, segment_id, archived_at FROM {SEGMENTS_TABLE} WHERE archived_at >= ? "
                "ORDER BY archived_at, segment_id", [float(since)],
            ).fetchall()
        return [(r[0], r[1], float(r[2])) for r in rows]

    def recent_users(self, limit: int) -> list[str]:
        """The ``limit`` users whose turns were archived last, most recent first: whom a process that just
        started should have ready (nodes.retrieval.warm)."""
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT user_id FROM {TURNS_TABLE} GROUP BY user_id ORDER BY max(archived_at) DESC, user_id LIMIT ?",
                [int(limit)],
            ).fetchall()
        return [r[0] for r in rows]


def _stages(stages: Sequence[str]) -> str:
    """A segment's owed stages as one string (``_STAGE_SEP`` between them); a stage name must be non-empty and
    free of the separator."""
    names = [str(x) for x in stages]
    for name in names:
        if not name or _STAGE_SEP in name:
            raise InvalidInput("stages", f"stage name {name!r} must be non-empty and free of control character 31")
    return _STAGE_SEP.join(names)
