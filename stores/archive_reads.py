"""The archive's reads of turns and segments (mixed into archive_sql.SqlArchive): by id, in conversation or arrival
order, by time, by id prefix, and the per-user values recall and priming ask for."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import InvalidInput
from .ids import PART_MARK, SEGMENTS_TABLE, TURNS_TABLE, validate_id
from .knowledge_duckdb import KNOWLEDGE
from .models import SegmentRecord, Turn
from .procedures_duckdb import PROCEDURES
from .archive_schema import _ABSENT_MAX, _SEG_COLS, _SELECT_SEGMENTS, _TURN_COLS
from .sql_connection import SqlConnection


class ArchiveReads:
    """``SqlArchive``'s turn and segment reads (``_db``, ``_absent``, ``_turn`` and ``_segment`` are its)."""

    _db: SqlConnection
    _absent: set[tuple[str, str]]

    # --- reads -------------------------------------------------------------------------------------
    def has_turn(self, user_id: str, turn_id: str) -> bool:
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            if (user_id, turn_id) in self._absent:
                return False
            row = con.execute(
                f"SELECT 1 FROM {TURNS_TABLE} WHERE user_id = ? AND turn_id = ?", [user_id, turn_id]
            ).fetchone()
        return row is not None

    def _rows_of_turns(self, columns: str, user_id: str, turn_ids: Sequence[str]) -> tuple[list[str], list[tuple]]:
        """The distinct ids of ``turn_ids`` in the order asked, and the rows (``columns``) of those the user has."""
        validate_id(user_id, "user_id")
        wanted = list(dict.fromkeys(turn_ids))
        if not wanted:
            return [], []
        with self._db.read() as con:
            return wanted, con.execute(
                f"SELECT {columns} FROM {TURNS_TABLE} WHERE user_id = ? AND turn_id IN (SELECT unnest(?::VARCHAR[]))",
                [user_id, wanted],
            ).fetchall()

    def missing_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[str]:
        """Which of ``turn_ids`` the user has no archived turn for, in the order asked (one query
        for a batch; has_turn() then answers these without one until they are written, unless other
        processes write the same database)."""
        with self._db.lock:  # read and noted under one hold: put_turns() drops what it writes under the same lock
            wanted, rows = self._rows_of_turns("turn_id", user_id, turn_ids)
            found = {r[0] for r in rows}
            missing = [t for t in wanted if t not in found]
            if self._db.shared:
                return missing  # another process may write them at any moment: nothing is remembered
            if len(self._absent) + len(missing) > _ABSENT_MAX:
                self._absent.clear()  # ids asked about but never ingested (a run that failed) pile up
            self._absent.update((user_id, t) for t in missing)
        return missing

    def get_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[Turn]:
        """The user's turns among ``turn_ids``, in the order asked; unknown ids are skipped and a
        repeated id is returned once."""
        wanted, rows = self._rows_of_turns(", ".join(_TURN_COLS), user_id, turn_ids)
        found = {row[0]: self._turn(row) for row in rows}
        return [found[t] for t in wanted if t in found]

    def all_turns(self, user_id: str) -> list[Turn]:
        """Every turn of the user in conversation order (message time, then arrival)."""
        return self.turns_since(user_id)[0]

    def _turn_rows(self, user_id: str, after_seq: int) -> list[tuple]:
        """The user's turns that first arrived after arrival number ``after_seq`` (0: all; arrival numbers
        start at 1), in conversation order: ``_TURN_COLS`` and the arrival number."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            return con.execute(
                f"SELECT {', '.join(_TURN_COLS)}, ingest_seq FROM {TURNS_TABLE} "
                "WHERE user_id = ? AND ingest_seq > ? ORDER BY ts, ingest_seq",
                [user_id, int(after_seq)],
            ).fetchall()

    def turn_columns(self, user_id: str) -> tuple[dict[str, tuple], int]:
        """Every turn of the user in conversation order as one tuple per field (``_TURN_COLS``), and the newest
        arrival number (as ``turns_since``): what a recall index is built or loaded from, without a model object
        per turn (at 10,000 turns those cost more than the query)."""
        rows = self._turn_rows(user_id, 0)
        columns = tuple(zip(*rows)) if rows else tuple(() for _ in range(len(_TURN_COLS) + 1))
        last = max(columns[-1], default=0)
        return dict(zip(_TURN_COLS, columns[:-1])), int(last)

    def turns_since(self, user_id: str, after_seq: int = 0) -> tuple[list[Turn], int]:
        """The user's turns that first arrived after arrival number ``after_seq``, in conversation
        order, and the arrival number to ask from next time (``after_seq`` when there are none).
        ``turns_since(u)`` is every turn: an index built from it can later fetch only what is new."""
        rows = self._turn_rows(user_id, after_seq)
        last = max((int(r[-1]) for r in rows), default=int(after_seq))
        return [self._turn(r[:-1]) for r in rows], last

    # Where each kind of pointer's ids live (nodes.tools.pointers): fixed names, never a caller's.
    # A chunked message's parts are named by their message's id (stores.ids.part_source_id).
    _ID_COLUMNS = {"episode": (TURNS_TABLE, f"regexp_replace(source_id, '{PART_MARK}[0-9]+$', '')"),
                   "segment": (SEGMENTS_TABLE, "segment_id"),
                   "knowledge": (KNOWLEDGE, "item_id"), "procedure": (PROCEDURES, "procedure_id")}

    def ids_starting(self, user_id: str, kind: str, start: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` of the user's ids of ``kind`` (episode: messages' source ids; segment,
        knowledge, procedure) that start with ``start``, sorted: what a short pointer may name. ``start`` is
        matched as text (``starts_with``), so ``%`` or ``_`` in it are themselves, not wildcards."""
        validate_id(user_id, "user_id")
        if kind not in self._ID_COLUMNS:
            raise InvalidInput("kind", f"must be one of {sorted(self._ID_COLUMNS)}")
        table, column = self._ID_COLUMNS[kind]
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT DISTINCT {column} AS id FROM {table} WHERE user_id = ? AND starts_with({column}, ?) "
                "ORDER BY id LIMIT ?", [user_id, validate_id(start, "id"), int(limit)]).fetchall()
        return [r[0] for r in rows]

    def segments_at(self, user_id: str, start_ts: float, end_ts: float, limit: int = 5) -> list[str]:
        """Up to ``limit`` ids of the segments holding a turn of the user said in [start_ts, end_ts), the one
        whose first such turn came first first: what a time pointer names (nodes.tools.pointers)."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT segment_id FROM {TURNS_TABLE} WHERE user_id = ? AND ts >= ? AND ts < ? "
                "AND segment_id <> '' GROUP BY segment_id ORDER BY min(ts), segment_id LIMIT ?",
                [user_id, float(start_ts), float(end_ts), int(limit)]).fetchall()
        return [r[0] for r in rows]

    def get_segment(self, user_id: str, segment_id: str) -> SegmentRecord | None:
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            row = con.execute(
                f"{_SELECT_SEGMENTS} WHERE user_id = ? AND segment_id = ?", [user_id, segment_id]
            ).fetchone()
        return self._segment(row) if row else None

    def _newest_segments(self, columns: str, user_id: str, limit: int | None = None,
                         archived_since: float | None = None) -> list[tuple]:
        """``columns`` of the user's segments newest first (end_ts, ties by segment_id so the order is stable):
        all of them, the newest ``limit``, or those archived at or after ``archived_since``."""
        validate_id(user_id, "user_id")
        if limit is not None and limit <= 0:
            return []
        sql = f"SELECT {columns} FROM {SEGMENTS_TABLE} WHERE user_id = ?"
        params: list[object] = [user_id]
        if archived_since is not None:
            sql += " AND archived_at >= ?"
            params.append(float(archived_since))
        sql += " ORDER BY end_ts DESC, segment_id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._db.read() as con:
            return con.execute(sql, params).fetchall()

    def segments(self, user_id: str, limit: int | None = None) -> list[SegmentRecord]:
        """Newest first (end_ts, ties by segment_id so the order is stable); all when limit is None."""
        return [self._segment(r) for r in self._newest_segments(", ".join(_SEG_COLS), user_id, limit)]

    def segment_texts(self, user_id: str, archived_since: float = 0.0) -> list[tuple[str, str, list[str], float]]:
        """(segment_id, text, keywords, archived_at) of the user's segments archived (or re-archived) at or
        after ``archived_since`` (wall clock), newest first like ``segments``: what a keyword index needs
        to catch up, without the embeddings."""
        rows = self._newest_segments("segment_id, text, keywords, archived_at", user_id, archived_since=archived_since)
        return [(r[0], r[1], list(r[2]), float(r[3])) for r in rows]

    def recent_importances(self, user_id: str, limit: int) -> list[float]:
        """Importance of the user's newest ``limit`` segments (the order of ``segments``), without
        reading their text and embeddings."""
        return [float(r[0]) for r in self._newest_segments("importance", user_id, limit)]
