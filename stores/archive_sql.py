"""The archive tier, whichever engine holds it: every turn and closed segment, plus an audit log.

``SqlArchive`` is the ``ArchiveStore`` written once over a ``SqlConnection`` (stores.sql_connection): the
embedded DuckDB file (stores.archive_duckdb) and a PostgreSQL server many processes share
(stores.archive_postgres) run the same statements. Each write is one explicit transaction; a write that
returned is durable (DuckDB's WAL is fsynced on COMMIT; PostgreSQL's own WAL likewise).

All SQL is in this module and its parts (archive_schema: tables and statements; archive_reads; archive_outbox);
every value travels as a ``?`` parameter; table names come from ``lumina_memory.stores.ids`` constants only.
Where one process is not the only writer (``_db.shared``), the shortcuts that assume it are not taken: rows
known absent are not remembered, a batch is upserted rather than inserted after a look, and arrival numbers
are handed out under a lock the transaction holds to its end (``serialized``).
"""

from __future__ import annotations

import threading

import time
from functools import lru_cache
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

from .archive_counts import archive_counts
from .archive_outbox import ArchiveOutbox
from .archive_reads import ArchiveReads
from .archive_schema import (
    _INSERT_AUDIT, _INSERT_SEGMENT, _INSERT_SEGMENTS, _INSERT_TURNS, _SEG_COLS, _SELECT_SEGMENTS,
    _SELECT_TURNS, _TURN_COLS, _UPSERT_SEGMENT, _UPSERT_SEGMENTS, _UPSERT_TURNS, _text, archive_steps, changed_rows,
    serialized,
)
from .errors import InvalidInput
from .ids import AUDIT_TABLE, OUTBOX_TABLE, SEGMENTS_TABLE, TURNS_TABLE, validate_id
from .knowledge_duckdb import KnowledgeTable
from .memories_duckdb import MemoryTable
from .models import SegmentRecord, Turn
from .protocols_agents import AgentTables
from .protocols_collections import KBCatalogStore
from .protocols_files import AuditTrail
from .protocols_tables import CostLogStore, StrategyStore
from .procedures_duckdb import ProcedureTable
from .records import ArchiveCounts
from .semantic_duckdb import SemanticTable
from .sql_connection import SqlConnection
from .stamped_cache import StampedCache
from .turn_reads_duckdb import TurnReadsTable
from .user_data import UserDataPlace


class SqlArchive(ArchiveReads, ArchiveOutbox):
    """``ArchiveStore`` on a ``SqlConnection``: the embedded DuckDB file (``DuckDBArchive``) or a PostgreSQL
    server (``PostgresArchive``) run these same statements. A subclass opens the connection and calls
    ``_open_tables``. Each use goes through the connection's lock (a DuckDB connection is not safe for concurrent
    use, and LangGraph may run nodes in a thread pool)."""

    backend: str
    database: str
    data_dir: str

    def _open_tables(self, db: SqlConnection) -> None:
        """Open the archive's schema and the tables that share its database and transactions."""
        self._db = db
        self._agent_tables: AgentTables | None = None
        self._agent_tables_lock = threading.Lock()
        self._strategies: StrategyStore | None = None
        self._costs: CostLogStore | None = None
        db.migrate("archive", archive_steps(db.dialect))
        self.memories = MemoryTable(db)  # the lifecycle's state shares the database and its transactions
        self.knowledge = KnowledgeTable(db)  # so do knowledge items (issue 18)
        self.procedures = ProcedureTable(db)  # and procedures (issue 18, A8)
        self.semantic = SemanticTable(db)  # and semantic memories (P4 consolidation)
        self.turn_reads = TurnReadsTable(db)  # and what the recall index read of each turn (issue 19)
        # Values derived from a user's whole archive (the profile priming shows before every reply), kept until
        # the user's write stamp moves: building one reads every turn and segment of the user.
        self._derived = StampedCache(db)
        # (user_id, turn_id) pairs found missing by missing_turns(): has_turn() answers them without a query.
        # Sound only where this adapter is the database's only writer (an embedded file, which DuckDB locks to one
        # process): put_turns() drops the pairs it writes, under the same lock, before writing them. On a shared
        # server other processes write turns, so the set stays empty there (ArchiveReads checks ``_db.shared``).
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
        # Arrival numbers continue the largest committed one: writers from other processes take them in turn.
        serialized(con, self._db, TURNS_TABLE)
        existing = con.execute(
            f"SELECT 1 FROM {TURNS_TABLE} WHERE turn_id IN (SELECT unnest(?::VARCHAR[])) LIMIT 1", [columns[0]]
        ).fetchone()
        if existing:  # a rewritten text's old read must not outlive it
            TurnReadsTable.drop(con, None, columns[0])
        # Under the lock no other writer adds turns, so a batch found new is new: the plain INSERT is safe.
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
            # Where another process may insert the same segment meanwhile, always the upsert.
            existing = self._db.shared or con.execute(
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
            if self._db.dialect == "postgres":
                # PostgreSQL's arrays of arrays must be rectangular and unnest() flattens them, so the list
                # columns cannot travel as unnested columns: the one-row upsert, pipelined by psycopg.
                now = time.time()
                con.executemany(_UPSERT_SEGMENT, [[*row, now] for row in rows])
                return
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
            n_turns = changed_rows(con, f"DELETE FROM {TURNS_TABLE} WHERE user_id = ?", [user_id])
            TurnReadsTable.drop(con, user_id)
            n_segs = changed_rows(con, f"DELETE FROM {SEGMENTS_TABLE} WHERE user_id = ?", [user_id])
            con.execute(f"DELETE FROM {OUTBOX_TABLE} WHERE user_id = ?", [user_id])
            con.execute(
                _INSERT_AUDIT, [time.time(), "user_erased", user_id, f"turns={n_turns} segments={n_segs}"]
            )
        # DuckDB: fold the WAL (which still holds the erased rows' inserts) into the main file now. Cheap: erasure
        # is rare, and an in-memory database ignores it. PostgreSQL checkpoints on its own schedule.
        self._db.checkpoint()
        return int(n_turns) + int(n_segs)

    # --- what else lives in this file, on its one connection (whose lock serialises it with the archive) ----
    def audit_trail(self, key: bytes) -> AuditTrail:
        from .audit import AuditLog

        return AuditLog(self._db, key)

    def user_data_places(self) -> list[UserDataPlace]:
        from .places.archive import archive_places

        mine = archive_table_names() if self._db.shared else None
        return archive_places(self._db, on_restore=self._absent.clear, mine=mine)

    def strategies(self) -> StrategyStore:
        with self._agent_tables_lock:
            if self._strategies is None:
                from .strategies_sql import StrategyTable

                self._strategies = StrategyTable(self._db)
            return self._strategies

    def op_costs(self) -> CostLogStore:
        with self._agent_tables_lock:
            if self._costs is None:
                from .costs_sql import CostTable

                self._costs = CostTable(self._db)
            return self._costs

    def kb_catalog(self) -> KBCatalogStore:
        from .kb_duckdb import KBCatalog

        return KBCatalog(self._db)

    def agent_tables(self) -> AgentTables:
        """One per archive: its in-process copy of agents' recent events must be the only one kept current."""
        with self._agent_tables_lock:
            if self._agent_tables is None:
                from .agent_tables import SqlAgentTables

                self._agent_tables = SqlAgentTables(self._db)
            return self._agent_tables

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
        audit log aside); equal values mean none did in between. The connection keeps the stamps: in this
        process for a DuckDB file (which it locks to one process), as rows for a server (any process's writes
        move them)."""
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
            n = changed_rows(con, f"DELETE FROM {TURNS_TABLE} WHERE user_id = ? AND turn_id IN "
                             "(SELECT unnest(?::VARCHAR[]))", [user_id, list(turn_ids)])
            TurnReadsTable.drop(con, user_id, turn_ids)
        return n

    def delete_segments(self, user_id: str, segment_ids: Sequence[str]) -> int:
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            return changed_rows(con, f"DELETE FROM {SEGMENTS_TABLE} WHERE user_id = ? AND segment_id IN "
                                "(SELECT unnest(?::VARCHAR[]))", [user_id, list(segment_ids)])

    def clear_segment_texts(self, user_id: str, segment_ids: Sequence[str]) -> int:
        """Blank the raw-turn text of segments (summary, keywords, embedding stay): storage policies A/B."""
        validate_id(user_id, "user_id")
        with self._db.tx(touches=(user_id,)) as con:
            return changed_rows(con, f"UPDATE {SEGMENTS_TABLE} SET text = '' WHERE user_id = ? AND text <> '' AND "
                                "segment_id IN (SELECT unnest(?::VARCHAR[]))", [user_id, list(segment_ids)])

    def compact(self, free_share: float) -> dict[str, Any]:
        """DuckDB: CHECKPOINT (the WAL folded in, part of deleted rows' space reclaimed), then the whole file
        rewritten when more than ``free_share`` of it is still reclaimable: free blocks, or row slots of deleted
        rows (a checkpoint leaves those of tables with an index in place, and DuckDB's VACUUM reclaims nothing).
        PostgreSQL: nothing; its autovacuum reclaims, and VACUUM FULL would lock each table while it copies."""
        if self._db.dialect != "duckdb":
            return {"engine": self._db.dialect, "action": "none (the server's autovacuum)"}
        self._db.checkpoint()
        before = self._reclaimable()
        report: dict[str, Any] = {"engine": "duckdb", **before, "rewritten": False}
        if max(before["free_share"], before["dead_row_share"]) > free_share:
            self._db.rewrite()
            after = self._reclaimable()
            report.update(rewritten=True, blocks_after=after["blocks"], dead_row_share_after=after["dead_row_share"])
        return report

    def _reclaimable(self) -> dict[str, Any]:
        """The file's blocks and free share, and the share of row slots held by deleted rows (every table)."""
        with self._db.read() as con:
            row = con.execute("SELECT total_blocks, free_blocks FROM pragma_database_size() "
                              "WHERE database_name = current_database()").fetchone()
            tables = con.execute("SELECT schema_name, table_name, estimated_size FROM duckdb_tables() "
                                 "WHERE database_name = current_database() AND estimated_size > 0").fetchall()
            live = sum(con.execute(f'SELECT count(*) FROM "{schema}"."{name}"').fetchone()[0] for schema, name, _ in tables)
        slots = sum(int(size) for _, _, size in tables)
        total, free = (int(row[0]), int(row[1])) if row else (0, 0)
        return {"blocks": total, "free_share": round(free / total, 4) if total else 0.0,
                "dead_row_share": round(1 - live / slots, 4) if slots else 0.0}

    # --- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Release the connection (a DuckDB file is checkpointed and its lock released). Idempotent."""
        if self._db.is_open:  # recall's use counts still in memory go in first (stores.use_counts)
            for table in (self.knowledge, self.procedures):
                table.flush_uses()
            if self._costs is not None:  # the operations' cost records still waiting (stores.costs_sql)
                self._costs.flush()
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.data_dir!r}, open={self._db.is_open})"


@lru_cache(maxsize=1)
def archive_table_names() -> frozenset[str]:
    """The user tables the archive and the tables on its connection create (a server database also holds other
    tiers' user tables), read from the catalogue of an in-memory embedded archive, once per process."""
    from .duckdb_connection import GuardedConnection
    from .places.archive import user_tables

    db = GuardedConnection(":memory:", ":memory:", "archive", ())
    try:
        probe = SqlArchive()
        probe._open_tables(db)
        probe.kb_catalog()
        probe.strategies()  # S5's table is made on first use: a server database would otherwise not list it
        return frozenset(user_tables(db))
    finally:
        db.close()
