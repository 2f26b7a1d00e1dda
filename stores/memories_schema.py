"""The lifecycle tables' names, DDL and column lists (stores.memories_duckdb holds them; see its docstring)."""

from __future__ import annotations

from collections.abc import Iterable

from .archive_schema import _text
from .errors import InvalidInput
from .ids import validate_id

MEMORIES = "memories"
RELATIONS = "memory_relations"
DAYS = "lifecycle_days"
OUTBOX = "lifecycle_outbox"
FORGOTTEN = "memory_forgotten"
CATEGORIES = ("casual", "work", "decision", "emotional")
RELATION_KINDS = ("continues", "references", "derived_from", "contradicts", "same_topic")

SCHEMA = (
    f"CREATE SEQUENCE IF NOT EXISTS {MEMORIES}_seq START 1",
    f"""CREATE TABLE IF NOT EXISTS {MEMORIES} (
        memory_id VARCHAR PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT nextval('{MEMORIES}_seq'),
        user_id VARCHAR NOT NULL,
        created DOUBLE PRECISION NOT NULL,  -- the conversation's clock: when the segment ended
        category VARCHAR NOT NULL,
        intensity DOUBLE PRECISION NOT NULL,
        valence VARCHAR NOT NULL,
        valence_score DOUBLE PRECISION NOT NULL,
        arousal DOUBLE PRECISION NOT NULL,
        tags VARCHAR[] NOT NULL,
        decay DOUBLE PRECISION NOT NULL,
        memory_days DOUBLE PRECISION NOT NULL,
        retention DOUBLE PRECISION NOT NULL,
        level SMALLINT NOT NULL,
        protected BOOLEAN NOT NULL,
        recalled BOOLEAN NOT NULL,          -- the notes' recalled_since_last_batch
        recall_count BIGINT NOT NULL,
        unbatched BOOLEAN NOT NULL,
        idle_days DOUBLE PRECISION NOT NULL,
        archived_on BIGINT NOT NULL,        -- batch day (date ordinal) it was archived; -1 active
        archive_reason SMALLINT NOT NULL,
        revival_requested BOOLEAN NOT NULL,
        revival_requested_at DOUBLE PRECISION,  -- NULL: none
        text VARCHAR,
        emotion_path VARCHAR NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {MEMORIES}_user_idx ON {MEMORIES} (user_id)",
    f"""CREATE TABLE IF NOT EXISTS {RELATIONS} (
        user_id VARCHAR NOT NULL,
        src VARCHAR NOT NULL,
        dst VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        created_day BIGINT NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {DAYS} (
        user_id VARCHAR PRIMARY KEY,
        last_day BIGINT NOT NULL,
        ran_at DOUBLE PRECISION NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {FORGOTTEN} (
        user_id VARCHAR NOT NULL,
        memory_id VARCHAR NOT NULL,
        day BIGINT NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {OUTBOX} (
        user_id VARCHAR NOT NULL,
        memory_id VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        day BIGINT NOT NULL)""",
)

# F2's trigger (what the user said or did that the memory is of) and content (how the characters answered), both
# rewritten at levels 2 and 3, and the path that made them (offline extractive, the model, or offline after the
# model failed). Added as the schema's second step, so a database made before them gains the columns on open;
# rows from before hold NULL.
TEXT_COLUMNS = ("trigger", "content", "trigger_path")
TEXT_SCHEMA = tuple(f"ALTER TABLE {MEMORIES} ADD COLUMN IF NOT EXISTS {c} VARCHAR" for c in TEXT_COLUMNS)

# The lifecycle core's columns (nodes.lifecycle.columns.MemoryColumns) as the table holds them; ``category`` is
# stored as its name and loaded as its code, ``revival_requested_at`` NULL as NaN, ``group`` is the user's index.
CORE_COLUMNS = ("intensity", "category", "decay", "memory_days", "retention", "level", "protected", "recalled",
                "recall_count", "unbatched", "idle_days", "created", "archived_on", "archive_reason",
                "revival_requested", "revival_requested_at")
LIST_FIELDS = ("memory_id", "user_id", "level", "retention", "intensity", "valence", "valence_score", "arousal",
               "tags", "category", "decay", "memory_days", "recall_count", "protected", "archived_on",
               "revival_requested", "revival_requested_at", "text", "created", "emotion_path", "idle_days",
               "archive_reason", *TEXT_COLUMNS)
_FLAGGED_USERS = 1_024
RECALL_FIELDS = ("memory_id", "level", "retention", "recall_count", "valence", "arousal", "tags", "text", "trigger",
                 "content")
NEW_COLUMNS = ("memory_id", "user_id", "created", "category", "intensity", "valence", "valence_score", "arousal",
               "tags", "decay", "memory_days", "retention", "level", "protected", "recalled", "recall_count",
               "unbatched", "idle_days", "archived_on", "archive_reason", "revival_requested", "emotion_path")
_F8 = "DOUBLE PRECISION"
_NEW_TYPES = ("VARCHAR", "VARCHAR", _F8, "VARCHAR", _F8, "VARCHAR", _F8, _F8, "VARCHAR", _F8, _F8, _F8, "SMALLINT",
              "BOOLEAN", "BOOLEAN", "BIGINT", "BOOLEAN", _F8, "BIGINT", "SMALLINT", "BOOLEAN", "VARCHAR")
TAG_SEPARATOR = "\x1f"
# New memories as parallel arrays, one per column (NEW_COLUMNS, then TEXT_COLUMNS, which a row may leave out).
# PostgreSQL has no arrays of arrays (unnest of a VARCHAR[][]
# flattens every element, and ragged rows are refused), so each row's tags travel joined by TAG_SEPARATOR
# (chr(31)) and are split in the statement. RETURNING names the rows this statement inserted: a memory another
# process inserted first is not new.
_INSERTED = (*NEW_COLUMNS, *TEXT_COLUMNS)
INSERT_NEW = (
    f"INSERT INTO {MEMORIES} ({', '.join(_INSERTED)}) SELECT "
    + ", ".join("coalesce(string_to_array(nullif(n.tags, ''), chr(31)), ARRAY[]::VARCHAR[])" if c == "tags"
                else f"n.{c}" for c in _INSERTED)
    + " FROM (SELECT " + ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in
                                   zip(_INSERTED, (*_NEW_TYPES, *("VARCHAR",) * len(TEXT_COLUMNS))))
    + ") AS n ON CONFLICT (memory_id) DO NOTHING RETURNING memory_id"
)


def rows_changed(dialect: str, cursor) -> int:
    """How many rows the INSERT, UPDATE or DELETE just run on ``cursor`` changed. DuckDB answers one with a row
    holding the count, psycopg keeps it as ``rowcount``; RETURNING, which both share, made DuckDB's recall-flag
    UPDATE take twice as long (200 of a user's 5,000 memories: 13.6 ms against 6.1 ms)."""
    if dialect == "duckdb":
        row = cursor.fetchone()
        return int(row[0]) if row else 0
    return int(cursor.rowcount)


def stored_text(field: str, value: str) -> str:
    """``value`` when both engines can keep it: valid UTF-8 (no lone surrogate) and no NUL, which PostgreSQL's
    text refuses; else InvalidInput naming ``field``."""
    if "\x00" in _text(field, value):
        raise InvalidInput(field, "contains a NUL character (U+0000)")
    return value


def _ids(values: Iterable[str], field: str) -> list[str]:
    return [validate_id(v, field) for v in values]
