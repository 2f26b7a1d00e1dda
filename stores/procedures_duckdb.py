"""Procedures (A8 procedural memory, S5 strategy learning) in the archive database, as the source of truth.

One row per version of a procedure: a re-consolidated procedure keeps its old version (status
``superseded``, ``superseded_by`` the new one) and every version of one procedure shares its
``lineage_id``. Rows go in and out as plain dicts (``stores`` imports nothing from ``nodes``); what a row
means is ``lumina_memory.nodes.knowledge.procedure_models``.

The table has a ``user_id`` column, so erasure, backups and the residue scan find it in the archive's
catalogue like the archive's own tables (stores.places.archive). Writes run inside the archive's
transaction when the caller opened one (the procedures a segment taught commit with the segment).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from .episode_lists import FROM_ANY, FROM_ONLY, WITHOUT
from .errors import InvalidInput
from .ids import validate_id
from .memories_duckdb import MEMORIES
from .memory_undo import MemoryUndoTable, record_procedures
from .sql_connection import SqlConnection
from .texts import check_texts
from .use_counts import RecallReads

PROCEDURES = "procedures"
STATUSES = ("current", "superseded")

# (column, SQL type DuckDB and PostgreSQL share); the order is the row order of every statement below.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("procedure_id", "VARCHAR"), ("user_id", "VARCHAR"), ("lineage_id", "VARCHAR"), ("version", "INTEGER"),
    ("title", "VARCHAR"), ("task_key", "VARCHAR"), ("description", "VARCHAR"), ("steps", "VARCHAR[]"),
    ("keywords", "VARCHAR[]"), ("language", "VARCHAR"), ("embedding", "REAL[]"),
    ("success_count", "INTEGER"), ("failure_count", "INTEGER"), ("confidence", "DOUBLE PRECISION"),
    ("status", "VARCHAR"), ("superseded_by", "VARCHAR"), ("supersedes", "VARCHAR"),
    ("episode_ids", "VARCHAR[]"), ("source_turn_ids", "VARCHAR[]"), ("source_ids", "VARCHAR[]"),
    ("outcome_ids", "VARCHAR[]"), ("said_at", "DOUBLE PRECISION"), ("last_outcome_at", "DOUBLE PRECISION"),
    ("method", "VARCHAR"), ("note", "VARCHAR"), ("created_at", "DOUBLE PRECISION"), ("updated_at", "DOUBLE PRECISION"),
)
NAMES = tuple(c for c, _ in COLUMNS)
_NULLABLE = {"superseded_by", "supersedes", "last_outcome_at"}
_LISTS = {"steps", "keywords", "embedding", "episode_ids", "source_turn_ids", "source_ids", "outcome_ids"}
_IDS = ("source_turn_ids", "episode_ids")
_RESTORED = (*NAMES, "access_count", "last_access")  # what an undone forgetting puts back

SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {PROCEDURES} ({', '.join(
        f"{c} {t}{'' if c in _NULLABLE else ' NOT NULL'}{' PRIMARY KEY' if c == 'procedure_id' else ''}"
        for c, t in COLUMNS)})""",
    f"CREATE INDEX IF NOT EXISTS {PROCEDURES}_user_idx ON {PROCEDURES} (user_id)",
    # Use (the notes' forgetting of unused procedures): how often recall matched a version, and when last.
    # Not in COLUMNS (a re-consolidation writes rows without knowing them); nullable, as DuckDB requires here.
    f"ALTER TABLE {PROCEDURES} ADD COLUMN IF NOT EXISTS access_count BIGINT DEFAULT 0",
    f"ALTER TABLE {PROCEDURES} ADD COLUMN IF NOT EXISTS last_access DOUBLE PRECISION",
)
_DAY = 86_400.0
# A version whose description holds the notes' [IMPORTANT] tag (nodes.text.important_tag writes it so) is never
# forgotten or pruned; LIKE's only wildcards are % and _, so the brackets match as written.
_IMPORTANT = "(lower(description) LIKE '%[important]%')"


def _check(row: Mapping[str, Any]) -> None:
    validate_id(row["user_id"], "user_id")
    validate_id(row["procedure_id"], "procedure_id")
    validate_id(row["lineage_id"], "lineage_id")
    for field in _IDS:
        for value in row[field]:
            validate_id(value, field)
    if row["status"] not in STATUSES:
        raise InvalidInput("status", f"must be one of {STATUSES}, got {row['status']!r}")
    missing = [c for c in NAMES if c not in row and c not in _NULLABLE]
    if missing:
        raise InvalidInput("procedure", f"missing fields {missing}")
    check_texts(row, NAMES)


class ProcedureTable(RecallReads):
    """The procedures on the archive's connection (same file, same transactions as the segments)."""

    use_ids = "procedure_ids"

    def __init__(self, db: SqlConnection):
        self.db = db
        self._keep_recall_reads(db)
        db.migrate("procedures", [SCHEMA])
        MemoryUndoTable(db)  # a forgotten lineage's versions are kept there (the archive opens it too)

    @contextmanager
    def transaction(self, user_id: str) -> Iterator[None]:
        """A read-modify-write of one user's procedures as one transaction (an outcome counted by two
        callers at once is counted twice, never once); joins the archive's transaction when one is open."""
        # The user's write stamp moves first thing: on PostgreSQL its row stays locked until the commit, so a second
        # process's read-modify-write of the same user waits, then reads the first one's count (READ COMMITTED
        # alone would let both read the old count). A DuckDB file has one writer, serialised by the connection.
        with self.db.tx(touches=(validate_id(user_id, "user_id"),)):
            yield

    def upsert(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert or replace versions by ``procedure_id`` (a version's counts, status and sources change;
        its id and steps never do). Returns how many rows were written."""
        if not rows:
            return 0
        for row in rows:
            _check(row)
        owners = {r["procedure_id"]: r["user_id"] for r in rows}
        placeholders = ", ".join("?" for _ in NAMES)
        updates = ", ".join(f"{c} = excluded.{c}" for c in NAMES if c not in ("procedure_id", "user_id"))
        with self.db.tx(touches=set(owners.values())) as con:
            # A procedure id belongs to one user forever: a row of another user's id is refused, never replaced
            # (and one another process wrote meanwhile is left as it is: the WHERE of the update).
            clash = con.execute(
                f"SELECT procedure_id, user_id FROM {PROCEDURES} WHERE procedure_id IN (SELECT unnest(?::VARCHAR[]))",
                [list(owners)]).fetchall()
            for procedure_id, owner in clash:
                if owners[procedure_id] != owner:
                    raise InvalidInput("procedure_id", f"{procedure_id!r} belongs to another user")
            con.executemany(
                f"INSERT INTO {PROCEDURES} ({', '.join(NAMES)}) VALUES ({placeholders}) "
                f"ON CONFLICT (procedure_id) DO UPDATE SET {updates} WHERE {PROCEDURES}.user_id = excluded.user_id",
                [[_value(r, c) for c in NAMES] for r in rows])
        return len(rows)

    def procedures(self, user_id: str, *, history: bool = False,
                   procedure_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The user's current procedures, oldest first (``history``: superseded versions too), or exactly
        ``procedure_ids`` (whatever their status)."""
        self.flush_uses()
        where, params = ["user_id = ?"], [validate_id(user_id, "user_id")]
        if not history and procedure_ids is None:
            where.append("status = 'current'")
        if procedure_ids is not None:
            where.append("procedure_id IN (SELECT unnest(?::VARCHAR[]))")
            params.append([validate_id(p, "procedure_id") for p in procedure_ids])
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT {', '.join(NAMES)} FROM {PROCEDURES} WHERE {' AND '.join(where)} "
                "ORDER BY said_at, lineage_id, version", params).fetchall()
        return [_row(r) for r in rows]

    def current(self, user_id: str) -> list[dict[str, Any]]:
        """``procedures(user_id)`` as recall reads it on every query: kept until the user's write stamp moves
        (stores.stamped_cache; use counts may lag, steps and versions never do)."""
        user_id = validate_id(user_id, "user_id")
        return self._recall_cache.get(user_id, "current", lambda: self.procedures(user_id))

    def count(self, user_id: str) -> int:
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {PROCEDURES} WHERE user_id = ?",
                               [validate_id(user_id, "user_id")]).fetchone()
        return int(n)

    def forget_episodes(self, user_id: str, episode_ids: Sequence[str]) -> int:
        """An episode deleted from every tier takes the versions only it taught; versions with other
        sources keep them. A version whose successor went is current again (the history without the
        forgotten episode). Returns how many versions went."""
        user_id = validate_id(user_id, "user_id")
        gone = [validate_id(e, "episode_ids") for e in episode_ids]
        if not gone:
            return 0
        with self.db.tx(touches=(user_id,)) as con:
            deleted = [r[0] for r in con.execute(
                f"DELETE FROM {PROCEDURES} WHERE user_id = ? AND {FROM_ANY} AND {FROM_ONLY} RETURNING procedure_id",
                [user_id, gone, gone]).fetchall()]
            con.execute(
                f"UPDATE {PROCEDURES} SET episode_ids = {WITHOUT} WHERE user_id = ? AND {FROM_ANY}", [gone, user_id, gone])
            con.execute(
                f"UPDATE {PROCEDURES} SET status = 'current', superseded_by = NULL "
                "WHERE user_id = ? AND superseded_by = ANY(?::VARCHAR[])", [user_id, deleted])
            con.execute(f"UPDATE {PROCEDURES} SET supersedes = NULL "
                        "WHERE user_id = ? AND supersedes = ANY(?::VARCHAR[])", [user_id, deleted])
        return len(deleted)

    def prune_versions(self, user_id: str, lineage_ids: Sequence[str], keep: int) -> list[str]:
        """Only the newest ``keep`` versions of each of ``lineage_ids`` stay (the notes: the last five); an
        older superseded version goes unless it is tagged [IMPORTANT]. The oldest version kept then supersedes
        nothing. Returns the procedure ids that went."""
        user_id = validate_id(user_id, "user_id")
        lineages = [validate_id(x, "lineage_id") for x in lineage_ids]
        if not lineages:
            return []
        with self.db.tx(touches=(user_id,)) as con:
            gone = [r[0] for r in con.execute(
                f"DELETE FROM {PROCEDURES} p WHERE user_id = ? AND lineage_id = ANY(?::VARCHAR[]) "
                f"AND status = 'superseded' AND NOT {_IMPORTANT} AND version <= (SELECT max(version) FROM {PROCEDURES} q "
                "WHERE q.user_id = p.user_id AND q.lineage_id = p.lineage_id) - ? RETURNING procedure_id",
                [user_id, lineages, int(keep)]).fetchall()]
            if gone:
                con.execute(f"UPDATE {PROCEDURES} SET supersedes = NULL "
                            "WHERE user_id = ? AND supersedes = ANY(?::VARCHAR[])", [user_id, gone])
        return sorted(gone)

    def forget_unreliable(self, user_id: str, below: float, min_outcomes: int, now: float | None = None) -> list[str]:
        """The monthly step: a procedure whose current version, tried at least ``min_outcomes`` times, has a
        confidence below ``below`` is forgotten with all its versions, kept in the undo log (``now``: when,
        the clock by default). Returns the lineages that went."""
        user_id = validate_id(user_id, "user_id")
        now = time.time() if now is None else float(now)
        with self.db.tx(touches=(user_id,)) as con:
            lineages = [r[0] for r in con.execute(
                f"SELECT lineage_id FROM {PROCEDURES} WHERE user_id = ? AND status = 'current' "
                f"AND success_count + failure_count >= ? AND confidence < ? AND NOT {_IMPORTANT}",
                [user_id, int(min_outcomes), float(below)]).fetchall()]
            self._forget(con, user_id, lineages, now, True)
        return sorted(lineages)

    @staticmethod
    def _forget(con, user_id: str, lineages: list[str], now: float, undoable: bool) -> None:
        """Inside the caller's transaction: the lineages' versions go, into the undo log (issue 49) or with
        their entries there."""
        if not lineages:
            return
        if undoable:
            cursor = con.execute(f"SELECT {', '.join(_RESTORED)} FROM {PROCEDURES} WHERE user_id = ? "
                                 "AND lineage_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY version", [user_id, lineages])
            rows = [{**_row(r[:len(NAMES)]), **dict(zip(_RESTORED[len(NAMES):], r[len(NAMES):]))} for r in cursor.fetchall()]
            # The undo log's day is the UTC date: this store does not know the lifecycle's time zone.
            record_procedures(con, user_id, rows, datetime.fromtimestamp(now, UTC).date().toordinal(), now)
        else:
            MemoryUndoTable.drop(con, user_id, lineages)
        con.execute(f"DELETE FROM {PROCEDURES} WHERE user_id = ? AND lineage_id IN (SELECT unnest(?::VARCHAR[]))",
                    [user_id, lineages])

    def restore_lineages(self, user_id: str, entries: Sequence[Mapping[str, Any]], now: float) -> list[str]:
        """Undo of forgetting: each undo entry's versions (``prior["versions"]``) inserted again, use counts and
        outcomes included, unless the lineage is back already; the entries are used up in the same transaction.
        Each counts as used at ``now`` (the undo asked for it), so the next disuse forgetting does not take it again
        at once. Returns the lineages restored."""
        user_id = validate_id(user_id, "user_id")
        restored: list[str] = []
        with self.db.tx(touches=(user_id,)) as con:
            for entry in entries:
                versions = entry["prior"]["versions"]
                if any(v["user_id"] != user_id for v in versions):
                    raise InvalidInput("undo", "an entry of another user")  # never: entries are read per user
                lineage = validate_id(entry["target_id"], "lineage_id")
                if con.execute(f"SELECT 1 FROM {PROCEDURES} WHERE user_id = ? AND lineage_id = ?",
                               [user_id, lineage]).fetchone():
                    continue
                for version in versions:
                    _check(version)
                con.executemany(f"INSERT INTO {PROCEDURES} ({', '.join(_RESTORED)}) VALUES "
                                f"({', '.join('?' for _ in _RESTORED)})",
                                [[_value({**v, "last_access": float(now)}, c) for c in _RESTORED] for v in versions])
                restored.append(lineage)
            MemoryUndoTable.consume(con, user_id, [e["undo_id"] for e in entries])
        return restored

    def flush_uses(self) -> int:
        """Write the pending uses (of every user); returns how many procedures they touched."""
        users, ids, counts, lasts = self._uses.drain()
        if not ids:
            return 0
        # Use is no input of any in-process index: the user's write stamp stays.
        with self.db.tx() as con:
            rows = con.execute(
                f"UPDATE {PROCEDURES} SET access_count = coalesce(access_count, 0) + v.n, "
                "last_access = greatest(coalesce(last_access, v.last), v.last) "
                "FROM (SELECT unnest(?::VARCHAR[]) AS u, unnest(?::VARCHAR[]) AS p, unnest(?::BIGINT[]) AS n, "
                f"unnest(?::DOUBLE PRECISION[]) AS last) v WHERE {PROCEDURES}.user_id = v.u AND {PROCEDURES}.procedure_id = v.p "
                "RETURNING procedure_id", [users, ids, counts, lasts]).fetchall()
        return len(rows)

    def forget_unused(self, user_id: str, now: float, idle_days: float, min_uses: int, mature_version: int,
                      undoable: bool = True) -> list[str]:
        """The monthly step (the notes' procedures threshold): a procedure whose current version was neither
        recalled nor reported on for ``idle_days`` (since it was taught, if never) and was used fewer than
        ``min_uses`` times (recalls + outcomes) is forgotten with all its versions — unless it is mature
        (version ≥ ``mature_version``: re-consolidated often), tagged [IMPORTANT], or taught by a memory the user
        protected (the lifecycle's table, as knowledge forgetting asks it). Returns the lineages that went.
        ``undoable``: kept in the undo log (the monthly forgetting); retention passes False, and the lineages'
        entries go with them (no copy outlives the retention)."""
        self.flush_uses()
        user_id = validate_id(user_id, "user_id")
        with self.db.tx(touches=(user_id,)) as con:
            lineages = [r[0] for r in con.execute(
                f"SELECT lineage_id FROM {PROCEDURES} p WHERE user_id = ? AND status = 'current' "
                "AND greatest(coalesce(last_access, said_at), coalesce(last_outcome_at, said_at), said_at) < ? "
                f"AND coalesce(access_count, 0) + success_count + failure_count < ? AND version < ? AND NOT {_IMPORTANT} "
                f"AND NOT EXISTS (SELECT 1 FROM {MEMORIES} m WHERE m.user_id = p.user_id AND m.protected "
                "AND array_position(p.episode_ids, m.memory_id) IS NOT NULL)",  # see knowledge_duckdb._PROTECTED
                [user_id, float(now) - idle_days * _DAY, int(min_uses), int(mature_version)]).fetchall()]
            self._forget(con, user_id, lineages, now, undoable)
        return sorted(lineages)


def _row(values: Sequence[Any]) -> dict[str, Any]:
    row = dict(zip(NAMES, values))
    for column in _LISTS:
        row[column] = list(row[column] or ())
    return row


def _value(row: Mapping[str, Any], column: str) -> Any:
    value = row.get(column)
    if column == "embedding":
        return [float(v) for v in (value if value is not None else ())]
    if column in _LISTS:
        return list(value or ())
    return value
