"""The archive's tables and statements (stores.archive_duckdb): DDL, column lists, upserts and selects, the
text check every stored string passes, and where an archive location puts its file."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InvalidInput
from .ids import AUDIT_TABLE, OUTBOX_TABLE, SEGMENTS_TABLE, TURNS_TABLE

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
        ts DOUBLE PRECISION NOT NULL,
        archived_at DOUBLE PRECISION NOT NULL,
        ingest_seq BIGINT NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {SEGMENTS_TABLE} (
        segment_id VARCHAR PRIMARY KEY,
        user_id VARCHAR NOT NULL,
        turn_ids VARCHAR[] NOT NULL,
        source_ids VARCHAR[] NOT NULL,
        characters VARCHAR[] NOT NULL,
        start_ts DOUBLE PRECISION NOT NULL,
        end_ts DOUBLE PRECISION NOT NULL,
        summary VARCHAR NOT NULL,
        keywords VARCHAR[] NOT NULL,
        embedding REAL[] NOT NULL,
        importance DOUBLE PRECISION NOT NULL,
        valence DOUBLE PRECISION NOT NULL,
        domain VARCHAR NOT NULL,
        close_reason VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        summary_method VARCHAR NOT NULL,
        archived_at DOUBLE PRECISION NOT NULL)""",
    f"CREATE SEQUENCE IF NOT EXISTS {AUDIT_TABLE}_seq START 1",
    f"""CREATE TABLE IF NOT EXISTS {AUDIT_TABLE} (
        seq BIGINT PRIMARY KEY DEFAULT nextval('{AUDIT_TABLE}_seq'),
        "at" DOUBLE PRECISION NOT NULL,  -- quoted: AT is a keyword in DuckDB (AT TIME ZONE)
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
        queued_at DOUBLE PRECISION NOT NULL)""",
)



def archive_steps(dialect: str) -> list[list[str] | tuple[str, ...]]:
    """The archive's numbered schema steps (``SqlConnection.migrate("archive", ...)``): append, never edit.
    Step 2 differs by engine: PostgreSQL answers ``max(ingest_seq)`` (each turn batch's first arrival number) by
    reading the whole table unless an index holds it (50 ms at 200,000 turns, 0.03 ms with one); DuckDB answers it
    from its row groups' min/max, where an index would only slow inserts."""
    seq_index = [f"CREATE INDEX IF NOT EXISTS {TURNS_TABLE}_seq_idx ON {TURNS_TABLE} (ingest_seq)"]
    return [_SCHEMA, seq_index if dialect == "postgres" else []]


_TURN_COLS = ("turn_id", "source_id", "user_id", "segment_id", "speaker", "text", "ts")
_TURN_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE PRECISION")
_SEG_COLS = (
    "segment_id", "user_id", "turn_ids", "source_ids", "characters", "start_ts", "end_ts", "summary",
    "keywords", "embedding", "importance", "valence", "domain", "close_reason", "text", "summary_method",
)
_SEG_TYPES = (
    "VARCHAR", "VARCHAR", "VARCHAR[]", "VARCHAR[]", "VARCHAR[]", "DOUBLE PRECISION", "DOUBLE PRECISION", "VARCHAR",
    "VARCHAR[]", "REAL[]", "DOUBLE PRECISION", "DOUBLE PRECISION", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR",
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


def changed_rows(con, sql: str, params: list) -> int:
    """Run a DELETE or UPDATE and return how many rows it changed: ``RETURNING`` works on both engines (DuckDB
    answers a bare DELETE with a count row, PostgreSQL with no result at all)."""
    return len(con.execute(f"{sql} RETURNING 1", params).fetchall())


# pg_advisory_xact_lock(class, key): this class is Lumina's archive; the key a table's name (hashtext).
_SERIAL_CLASS = 0x4C756D


def serialized(con, db, name: str) -> None:
    """Inside a write transaction: hold ``name``'s lock until it ends, so writers that number rows from the largest
    committed number (turns' arrival, the outbox's order) take turns and commit in the order they numbered.
    A DuckDB file has one writer (its connection's lock); on PostgreSQL an advisory lock, which a killed
    process's session gives up with it."""
    if db.dialect == "postgres":
        con.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", [_SERIAL_CLASS, name])
