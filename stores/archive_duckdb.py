"""The archive tier on an embedded DuckDB file: every turn and closed segment, plus an audit log.

Durability: each write is one explicit transaction; DuckDB appends it to ``archive.duckdb.wal`` and
fdatasyncs that file on COMMIT, so a write that returned survives a crash. CHECKPOINT (folding the
WAL into the main file) is left to DuckDB's automatic threshold and ``close()``, except after
``delete_user``: erasure checkpoints at once so the erased rows leave the WAL promptly.

All SQL is in this module, every value travels as a ``?`` parameter; table names come from
``lumina_memory.stores.ids`` constants only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self


from .duckdb_connection import GuardedConnection
from .errors import InvalidInput
from .ids import AUDIT_TABLE, OUTBOX_TABLE, PART_MARK, SEGMENTS_TABLE, TURNS_TABLE, validate_id
from .knowledge_duckdb import KNOWLEDGE, KnowledgeTable
from .memories_duckdb import MemoryTable
from .procedures_duckdb import PROCEDURES, ProcedureTable
from .semantic_duckdb import SemanticTable
from .turn_reads_duckdb import TurnReadsTable
from .archive_counts import archive_counts
from .records import ArchiveCounts
from .stamped_cache import StampedCache
from .models import SegmentRecord, Turn

ARCHIVE_FILENAME = "archive.duckdb"
_ABSENT_MAX = 100_000
MEMORY = ":memory:"

# --- schema --------------------------------------------------------------------------------------
# ts/start_ts/end_ts are the conversation's own clock; archived_at/at are wall-clock epoch seconds
# (DOUBLE like ts, so no time-zone conversion happens anywhere).
# ingest_seq records first-arrival order: turns of one session often share a timestamp, and the
# transcript order must survive. It is set on first insert and never updated by an upsert.
_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TURNS_TABLE} (
        turn_id VARCHAR PRIMARY KEY,
        source_id VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        segment_id VARCHAR NOT NULL,
        speaker VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        ts DOUBLE NOT NULL,
        archived_at DOUBLE NOT NULL,
        ingest_seq BIGINT NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {SEGMENTS_TABLE} (
        segment_id VARCHAR PRIMARY KEY,
        user_id VARCHAR NOT NULL,
        turn_ids VARCHAR[] NOT NULL,
        source_ids VARCHAR[] NOT NULL,
        characters VARCHAR[] NOT NULL,
        start_ts DOUBLE NOT NULL,
        end_ts DOUBLE NOT NULL,
        summary VARCHAR NOT NULL,
        keywords VARCHAR[] NOT NULL,
        embedding FLOAT[] NOT NULL,
        importance DOUBLE NOT NULL,
        valence DOUBLE NOT NULL,
        domain VARCHAR NOT NULL,
        close_reason VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        summary_method VARCHAR NOT NULL,
        archived_at DOUBLE NOT NULL)""",
    f"CREATE SEQUENCE IF NOT EXISTS {AUDIT_TABLE}_seq START 1",
    f"""CREATE TABLE IF NOT EXISTS {AUDIT_TABLE} (
        seq BIGINT PRIMARY KEY DEFAULT nextval('{AUDIT_TABLE}_seq'),
        "at" DOUBLE NOT NULL,  -- quoted: AT is a keyword in DuckDB (AT TIME ZONE)
        event VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        detail VARCHAR NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {TURNS_TABLE}_user_idx ON {TURNS_TABLE} (user_id)",
    f"CREATE INDEX IF NOT EXISTS {SEGMENTS_TABLE}_user_idx ON {SEGMENTS_TABLE} (user_id)",
    f"CREATE INDEX IF NOT EXISTS {AUDIT_TABLE}_user_idx ON {AUDIT_TABLE} (user_id)",
    # Derived-tier work still owed for archived segments (see the outbox methods): written in the same
    # transaction as the segments, emptied as the later tiers confirm. No key: rows are few and short-lived.
    f"""CREATE TABLE IF NOT EXISTS {OUTBOX_TABLE} (
        segment_id VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        stages VARCHAR[] NOT NULL,
        promotion VARCHAR NOT NULL,
        seq BIGINT NOT NULL,
        queued_at DOUBLE NOT NULL)""",
)

_TURN_COLS = ("turn_id", "source_id", "user_id", "segment_id", "speaker", "text", "ts")
_TURN_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE")
_SEG_COLS = (
    "segment_id", "user_id", "turn_ids", "source_ids", "characters", "start_ts", "end_ts", "summary",
    "keywords", "embedding", "importance", "valence", "domain", "close_reason", "text", "summary_method",
)
_SEG_TYPES = (
    "VARCHAR", "VARCHAR", "VARCHAR[]", "VARCHAR[]", "VARCHAR[]", "DOUBLE", "DOUBLE", "VARCHAR",
    "VARCHAR[]", "FLOAT[]", "DOUBLE", "DOUBLE", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR",
)

# One statement per batch: unnest() of column lists. executemany() costs ~2 ms per row in DuckDB
# (measured: 2,000 turns 4.2 s vs 0.02 s), too slow for replaying a transcript.
_UPSERT_TURNS = (
    f"INSERT INTO {TURNS_TABLE} ({', '.join(_TURN_COLS)}, archived_at, ingest_seq) "
    f"SELECT {', '.join('b.' + c for c in _TURN_COLS)}, ?, m.base + b.ord FROM (SELECT "
    + ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in zip(_TURN_COLS, _TURN_TYPES))
    + ", unnest(?::BIGINT[]) AS ord) AS b, "
    f"(SELECT coalesce(max(ingest_seq), 0) AS base FROM {TURNS_TABLE}) AS m "
    f"ON CONFLICT (turn_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*_TURN_COLS[1:], "archived_at"))
)
_UPSERT_SEGMENT = (
    f"INSERT INTO {SEGMENTS_TABLE} ({', '.join(_SEG_COLS)}, archived_at) "
    f"VALUES ({', '.join('?' for _ in _SEG_COLS)}, ?) ON CONFLICT (segment_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*_SEG_COLS[1:], "archived_at"))
)
_UPSERT_SEGMENTS = (
    f"INSERT INTO {SEGMENTS_TABLE} ({', '.join(_SEG_COLS)}, archived_at) "
    f"SELECT {', '.join('b.' + c for c in _SEG_COLS)}, ? FROM (SELECT "
    + ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in zip(_SEG_COLS, _SEG_TYPES))
    + ") AS b ON CONFLICT (segment_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*_SEG_COLS[1:], "archived_at"))
)
# Plain INSERTs for rows known to be new: ON CONFLICT DO UPDATE costs 2-5x more per statement
# (measured: a segment 7.1 ms vs 1.3 ms, ten turns 6.6 ms vs 3.1 ms), and nearly every write is new.
_INSERT_TURNS = _UPSERT_TURNS.split(" ON CONFLICT ")[0]
_INSERT_SEGMENT = _UPSERT_SEGMENT.split(" ON CONFLICT ")[0]
_INSERT_SEGMENTS = _UPSERT_SEGMENTS.split(" ON CONFLICT ")[0]
_SELECT_TURNS = f"SELECT {', '.join(_TURN_COLS)} FROM {TURNS_TABLE}"
_SELECT_SEGMENTS = f"SELECT {', '.join(_SEG_COLS)} FROM {SEGMENTS_TABLE}"
_INSERT_AUDIT = f'INSERT INTO {AUDIT_TABLE} ("at", event, user_id, detail) VALUES (?, ?, ?, ?)'

# DuckDB 2.0: 'IO Error: Could not set lock on file "<path>": Conflicting lock is held in
# <program> (PID <n>). See also ...'


def _text(field: str, value: str) -> str:
    # DuckDB rejects lone surrogates with an opaque conversion error; say which field instead.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(field, f"not valid UTF-8 text ({exc.reason} at {exc.start})") from None
    return value


def _resolve(location: str | os.PathLike[str]) -> tuple[str, str]:
    """(duckdb database, data dir for messages). A '*.duckdb'/'*.db' path is the file itself;
    anything else is a data directory holding ARCHIVE_FILENAME."""
    if str(location) == MEMORY:
        return MEMORY, MEMORY
    path = Path(location).expanduser().resolve()
    if path.suffix not in (".duckdb", ".db"):
        path = path / ARCHIVE_FILENAME
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path), str(path.parent)


class DuckDBArchive:
    """``ArchiveStore`` on DuckDB. One connection, serialised by a lock (DuckDB connections are
    not safe for concurrent use, and LangGraph may run nodes in a thread pool)."""

    backend = "duckdb"

    def __init__(self, location: str | os.PathLike[str] = MEMORY):
        self.database, self.data_dir = _resolve(location)
        self._db = GuardedConnection(self.database, self.data_dir, "archive", _SCHEMA)
        self.memories = MemoryTable(self._db)  # the lifecycle's state shares the file and its transactions
        self.knowledge = KnowledgeTable(self._db)  # so do knowledge items (issue 18)
        self.procedures = ProcedureTable(self._db)  # and procedures (issue 18, A8)
        self.semantic = SemanticTable(self._db)  # and semantic memories (P4 consolidation)
        self.turn_reads = TurnReadsTable(self._db)  # and what the recall index read of each turn (issue 19)
        # Values derived from a user's whole archive (the profile priming shows before every reply), kept until
        # the user's write stamp moves: building one reads every turn and segment of the user.
        self._derived = StampedCache(self._db)
        # (user_id, turn_id) pairs found missing by missing_turns(): has_turn() answers them without a
        # query. Sound because this adapter is the file's only writer (DuckDB locks the file to one
        # process, and nothing else in it writes the turn table): put_turns() drops the pairs it
        # writes, under the same lock, before writing them.
        self._absent: set[tuple[str, str]] = set()

    @staticmethod
    def _turn(row: Sequence[Any]) -> Turn:
        return Turn(**dict(zip(_TURN_COLS, row)))

    @staticmethod
    def _segment(row: Sequence[Any]) -> SegmentRecord:
        return SegmentRecord(**dict(zip(_SEG_COLS, row)))

    # --- writes ------------------------------------------------------------------------------------
    @staticmethod
    def _check_turn(t: Turn) -> None:
        validate_id(t.user_id, "user_id")
        validate_id(t.turn_id, "turn_id")
        if t.segment_id:
            validate_id(t.segment_id, "segment_id")
        _text("text", t.text)
        _text("source_id", t.source_id)
        _text("speaker", t.speaker)

    def put_turns(self, turns: Sequence[Turn]) -> None:
        # Last occurrence wins within a batch: one INSERT .. ON CONFLICT may not touch a row twice.
        latest: dict[str, Turn] = {}
        for t in turns:
            self._check_turn(t)
            latest.pop(t.turn_id, None)  # re-insert so order follows the last occurrence
            latest[t.turn_id] = t
        if not latest:
            return
        with self._db.tx(touches={t.user_id for t in latest.values()}) as con:
            self._write_turns(con, list(latest.values()))

    def _write_turns(self, con, batch: list[Turn]) -> None:
        """Upsert validated, de-duplicated turns inside the caller's transaction (lock held)."""
        if self._absent:
            self._absent.difference_update((t.user_id, t.turn_id) for t in batch)
        columns = [[getattr(t, c) for t in batch] for c in _TURN_COLS]
        params = [*columns, list(range(1, len(batch) + 1))]
        existing = con.execute(
            f"SELECT 1 FROM {TURNS_TABLE} WHERE turn_id IN (SELECT unnest(?::VARCHAR[])) LIMIT 1", [columns[0]]
        ).fetchone()
        if existing:  # a rewritten text's old read must not outlive it
            TurnReadsTable.drop(con, None, columns[0])
        con.execute(_UPSERT_TURNS if existing else _INSERT_TURNS, [time.time(), *params])

    @staticmethod
    def _segment_values(record: SegmentRecord) -> list[Any]:
        validate_id(record.user_id, "user_id")
        validate_id(record.segment_id, "segment_id")
        for field in ("summary", "text", "domain", "close_reason", "summary_method"):
            _text(field, getattr(record, field))
        for field in ("turn_ids", "source_ids", "characters", "keywords"):
            for item in getattr(record, field):
                _text(field, item)
        return [getattr(record, c) for c in _SEG_COLS]

    def put_segment(self, record: SegmentRecord) -> None:
        values = self._segment_values(record)
        with self._db.tx(touches=(record.user_id,)) as con:
            existing = con.execute(
                f"SELECT 1 FROM {SEGMENTS_TABLE} WHERE segment_id = ?", [record.segment_id]
            ).fetchone()
            con.execute(_UPSERT_SEGMENT if existing else _INSERT_SEGMENT, [*values, time.time()])

    def put_segments(self, records: Sequence[SegmentRecord]) -> None:
        """Upsert many segments in one statement (a transcript batch closes several at once)."""
        latest = {r.segment_id: self._segment_values(r) for r in records}  # last occurrence wins
        if not latest:
            return
        rows = list(latest.values())
        columns = [[row[i] for row in rows] for i in range(len(_SEG_COLS))]
        with self._db.tx(touches={r.user_id for r in records}) as con:
            existing = con.execute(
                f"SELECT 1 FROM {SEGMENTS_TABLE} WHERE segment_id IN (SELECT unnest(?::VARCHAR[])) LIMIT 1",
                [columns[0]],
            ).fetchone()
            con.execute(_UPSERT_SEGMENTS if existing else _INSERT_SEGMENTS, [time.time(), *columns])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Writes inside the block are one transaction (one commit, one WAL fsync): a closed segment's
        turns and the segment itself land together or not at all."""
        with self._db.tx():
            yield

    def append_audit(self, event: str, user_id: str, detail: str = "") -> None:
        validate_id(user_id, "user_id")
        if not event:
            raise InvalidInput("event", "must be a non-empty string")
        with self._db.tx() as con:
            con.execute(_INSERT_AUDIT, [time.time(), _text("event", event), user_id, _text("detail", detail)])

    def delete_user(self, user_id: str) -> int:
        """Erase the user's turns and segments; returns how many rows went. The audit log keeps
        its rows (append-only) and gains a 'user_erased' record that carries counts, no content."""
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            turns = con.execute(f"DELETE FROM {TURNS_TABLE} WHERE user_id = ?", [user_id]).fetchone()
            TurnReadsTable.drop(con, user_id)
            segs = con.execute(f"DELETE FROM {SEGMENTS_TABLE} WHERE user_id = ?", [user_id]).fetchone()
            con.execute(f"DELETE FROM {OUTBOX_TABLE} WHERE user_id = ?", [user_id])
            n_turns, n_segs = (turns[0] if turns else 0), (segs[0] if segs else 0)
            con.execute(
                _INSERT_AUDIT, [time.time(), "user_erased", user_id, f"turns={n_turns} segments={n_segs}"]
            )
        # Fold the WAL (which still holds the erased rows' inserts) into the main file now.
        # Cheap: erasure is rare, and an in-memory database ignores it.
        self._db.checkpoint()
        return int(n_turns) + int(n_segs)

    # --- derivation outbox (crash safety, outages) ---------------------------------------------------
    # The archive is the durable base; the other tiers are derived from it. A segment's row says which
    # derived writes (redis, qdrant, graph) it still owes and the promotion verdict made at flush, so a
    # crash or an outage between the archive commit and the last derived write is completed later from
    # the archive (nodes.recovery) instead of being lost.
    def put_outbox(self, entries: Sequence[tuple[str, str, Sequence[str], str]]) -> None:
        """(user_id, segment_id, stages still owed, promotion verdict) per segment, in the order given
        (recovery applies them in that order). Inside ``transaction()`` it commits with the segments."""
        rows = [(validate_id(u, "user_id"), validate_id(s, "segment_id"), [str(x) for x in st], str(p or ""))
                for u, s, st, p in entries]
        if not rows:
            return
        with self._db.tx() as con:
            con.execute(f"DELETE FROM {OUTBOX_TABLE} WHERE segment_id IN (SELECT unnest(?::VARCHAR[]))",
                        [[r[1] for r in rows]])
            con.execute(
                f"INSERT INTO {OUTBOX_TABLE} SELECT b.s, b.u, b.st, b.p, m.base + b.ord, ? FROM (SELECT "
                "unnest(?::VARCHAR[]) AS s, unnest(?::VARCHAR[]) AS u, unnest(?::VARCHAR[][]) AS st, "
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
            row = con.execute(f"DELETE FROM {OUTBOX_TABLE} WHERE user_id = ?", [user_id]).fetchone()
        return int(row[0]) if row else 0

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

    def missing_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[str]:
        """Which of ``turn_ids`` the user has no archived turn for, in the order asked (one query
        for a batch; has_turn() then answers these without one until they are written)."""
        validate_id(user_id, "user_id")
        wanted = list(dict.fromkeys(turn_ids))
        if not wanted:
            return []
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT turn_id FROM {TURNS_TABLE} WHERE user_id = ? AND turn_id IN (SELECT unnest(?::VARCHAR[]))",
                [user_id, wanted],
            ).fetchall()
            found = {r[0] for r in rows}
            missing = [t for t in wanted if t not in found]
            if len(self._absent) + len(missing) > _ABSENT_MAX:
                self._absent.clear()  # ids asked about but never ingested (a run that failed) pile up
            self._absent.update((user_id, t) for t in missing)
        return missing

    def get_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[Turn]:
        """The user's turns among ``turn_ids``, in the order asked; unknown ids are skipped and a
        repeated id is returned once."""
        validate_id(user_id, "user_id")
        wanted = list(dict.fromkeys(turn_ids))
        if not wanted:
            return []
        with self._db.read() as con:
            rows = con.execute(
                f"{_SELECT_TURNS} WHERE user_id = ? AND turn_id IN (SELECT unnest(?::VARCHAR[]))",
                [user_id, wanted],
            ).fetchall()
        found = {row[0]: self._turn(row) for row in rows}
        return [found[t] for t in wanted if t in found]

    def all_turns(self, user_id: str) -> list[Turn]:
        """Every turn of the user in conversation order (message time, then arrival)."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            rows = con.execute(
                f"{_SELECT_TURNS} WHERE user_id = ? ORDER BY ts, ingest_seq", [user_id]
            ).fetchall()
        return [self._turn(r) for r in rows]

    def turn_columns(self, user_id: str) -> tuple[dict[str, tuple], int]:
        """Every turn of the user in conversation order as one tuple per field (``_TURN_COLS``), and the newest
        arrival number (as ``turns_since``): what a recall index is built or loaded from, without a model object
        per turn (at 10,000 turns those cost more than the query)."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {', '.join(_TURN_COLS)}, ingest_seq FROM {TURNS_TABLE} WHERE user_id = ? ORDER BY ts, ingest_seq",
                [user_id],
            ).fetchall()
        columns = tuple(zip(*rows)) if rows else tuple(() for _ in range(len(_TURN_COLS) + 1))
        last = max(columns[-1], default=0)
        return dict(zip(_TURN_COLS, columns[:-1])), int(last)

    def turns_since(self, user_id: str, after_seq: int = 0) -> tuple[list[Turn], int]:
        """The user's turns that first arrived after arrival number ``after_seq``, in conversation
        order, and the arrival number to ask from next time (``after_seq`` when there are none).
        ``turns_since(u)`` is every turn: an index built from it can later fetch only what is new."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {', '.join(_TURN_COLS)}, ingest_seq FROM {TURNS_TABLE} "
                "WHERE user_id = ? AND ingest_seq > ? ORDER BY ts, ingest_seq",
                [user_id, int(after_seq)],
            ).fetchall()
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

    def segments(self, user_id: str, limit: int | None = None) -> list[SegmentRecord]:
        """Newest first (end_ts, ties by segment_id so the order is stable); all when limit is None."""
        validate_id(user_id, "user_id")
        if limit is not None and limit <= 0:
            return []
        sql = f"{_SELECT_SEGMENTS} WHERE user_id = ? ORDER BY end_ts DESC, segment_id"
        params: list[Any] = [user_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._db.read() as con:
            rows = con.execute(sql, params).fetchall()
        return [self._segment(r) for r in rows]

    def segment_texts(self, user_id: str, archived_since: float = 0.0) -> list[tuple[str, str, list[str], float]]:
        """(segment_id, text, keywords, archived_at) of the user's segments archived (or re-archived) at or
        after ``archived_since`` (wall clock), newest first like ``segments``: what a keyword index needs
        to catch up, without the embeddings."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT segment_id, text, keywords, archived_at FROM {SEGMENTS_TABLE} "
                "WHERE user_id = ? AND archived_at >= ? ORDER BY end_ts DESC, segment_id",
                [user_id, float(archived_since)],
            ).fetchall()
        return [(r[0], r[1], list(r[2]), float(r[3])) for r in rows]

    def recent_importances(self, user_id: str, limit: int) -> list[float]:
        """Importance of the user's newest ``limit`` segments (the order of ``segments``), without
        reading their text and embeddings."""
        validate_id(user_id, "user_id")
        if limit <= 0:
            return []
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT importance FROM {SEGMENTS_TABLE} WHERE user_id = ? "
                "ORDER BY end_ts DESC, segment_id LIMIT ?",
                [user_id, int(limit)],
            ).fetchall()
        return [float(r[0]) for r in rows]

    @property
    def generation(self) -> int:
        """Changes whenever a write transaction ends; equal values mean nothing was written in between."""
        return self._db.generation

    def kept(self, user_id: str, key: Hashable, load: Callable[[], Any]) -> Any:
        """``load()`` (a read of the user's archive), read again only after a write touched the user."""
        return self._derived.get(validate_id(user_id, "user_id"), key, load)

    # what is kept of the user in this process (graphs.registry's "cache.recall_reads")
    def cached_for(self, user_id: str) -> int:
        return self._derived.count(user_id)

    def forget_cached(self, user_id: str) -> None:
        self._derived.forget(user_id)

    def tier_counts(self) -> ArchiveCounts:
        """Per user: what the archive says each derived tier should hold (doctor and stats compare them)."""
        with self._db.read() as con:
            return archive_counts(con)

    def generation_of(self, user_id: str) -> int:
        """Changes whenever a write transaction that touched this user's turns or segments ends (the
        audit log aside); equal values mean none did in between. Writes reach the file only through this
        process (DuckDB locks it), so the stamp misses none."""
        return self._db.key_generation.get(user_id, 0)

    def counts(self, user_id: str | None = None, which: Sequence[str] = ("turns", "segments")) -> dict[str, int]:
        """``which``: the counts wanted (an index that checks one table need not scan the other)."""
        where, params = ("", []) if user_id is None else (" WHERE user_id = ?", [validate_id(user_id, "user_id")])
        tables = {"turns": TURNS_TABLE, "segments": SEGMENTS_TABLE}
        unknown = [w for w in which if w not in tables]
        if unknown:
            raise InvalidInput("which", f"unknown counts {unknown}; expected some of {sorted(tables)}")
        out: dict[str, int] = {}
        with self._db.read() as con:
            for name in which:
                row = con.execute(f"SELECT count(*) FROM {tables[name]}{where}", params).fetchone()
                out[name] = int(row[0]) if row else 0
        return out

    def audit(self, user_id: str) -> list[dict[str, Any]]:
        """The user's audit rows, oldest first: {'seq', 'at', 'event', 'user_id', 'detail'}."""
        validate_id(user_id, "user_id")
        with self._db.read() as con:
            rows = con.execute(
                f'SELECT seq, "at", event, user_id, detail FROM {AUDIT_TABLE} WHERE user_id = ? ORDER BY seq',
                [user_id],
            ).fetchall()
        return [dict(zip(("seq", "at", "event", "user_id", "detail"), r)) for r in rows]

    # --- retention (L9, S7): nodes.retention decides, these read and remove ---------------------------
    def turns_before(self, before_ts: float) -> list[Turn]:
        """Every user's turns whose message time is before ``before_ts``, by user then conversation order."""
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT_TURNS} WHERE ts < ? ORDER BY user_id, ts, ingest_seq", [before_ts]).fetchall()
        return [self._turn(r) for r in rows]

    def segments_before(self, before_ts: float) -> list[SegmentRecord]:
        """Every user's segments that ended before ``before_ts``."""
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT_SEGMENTS} WHERE end_ts < ? ORDER BY user_id, end_ts", [before_ts]).fetchall()
        return [self._segment(r) for r in rows]

    def delete_turns(self, user_id: str, turn_ids: Sequence[str]) -> int:
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            row = con.execute(f"DELETE FROM {TURNS_TABLE} WHERE user_id = ? AND turn_id IN (SELECT unnest(?::VARCHAR[]))",
                              [user_id, list(turn_ids)]).fetchone()
            TurnReadsTable.drop(con, user_id, turn_ids)
        return int(row[0]) if row else 0

    def delete_segments(self, user_id: str, segment_ids: Sequence[str]) -> int:
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            row = con.execute(f"DELETE FROM {SEGMENTS_TABLE} WHERE user_id = ? AND segment_id IN (SELECT unnest(?::VARCHAR[]))",
                              [user_id, list(segment_ids)]).fetchone()
        return int(row[0]) if row else 0

    def clear_segment_texts(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Blank the raw-turn text of segments (summary, keywords, embedding stay): storage policies A/B."""
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            row = con.execute(f"UPDATE {SEGMENTS_TABLE} SET text = '' WHERE user_id = ? AND text <> '' AND segment_id IN "
                              "(SELECT unnest(?::VARCHAR[]))", [user_id, list(segment_ids)]).fetchone()
        return int(row[0]) if row else 0

    # --- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Checkpoint and release the file (and DuckDB's file lock). Idempotent."""
        if self._db.is_open:  # recall's use counts still in memory go in first (stores.use_counts)
            for table in (self.knowledge, self.procedures):
                table.flush_uses()
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DuckDBArchive({self.database!r}, open={self._db.is_open})"
