"""The lifecycle's state (F1–F9): one row per memory, in the archive database, as the source of truth.

A *memory* is a closed segment (``memory_id`` = ``segment_id``); its turns are its detail and stay in the
archive whatever the memory's level (forgetting changes what is remembered, not what is recorded).

Tables (all with ``user_id``, so erasure, backups and the residue scan find them in the catalogue like
the archive's own tables, stores.places.archive):

- ``memories``        the lifecycle columns; ``text`` is the memory as it stands at its level (NULL at
                      level 1: its turns are its text)
- ``memory_relations`` typed relations (F6), pointing from the higher- to the lower-retention memory:
                      continues and references added at encoding (``add_relations``, in the archive
                      transaction that writes the memory), same_topic by the batch's auto-link
- ``lifecycle_days``  per user, the last local day the daily batch completed: a day's changes and this
                      mark commit in one transaction, so a killed batch never applies a day twice
- ``memory_forgotten`` memories the batch auto-deleted: their segments stay as the record, and this keeps them
                      from coming back as fresh memories (priming, re-derivation, the mid-term refill)
- ``lifecycle_outbox`` derived writes a committed day (or an encoding that added relations) still owes
                      (re-embedding, vector payloads, graph relations): applied after the commit by the next
                      maintenance run (nodes.lifecycle.phases), idempotently, like the archive's outbox

The batch reads columns as numpy arrays and writes them back in one UPDATE from the day's arrays (scanned as
numpy on DuckDB, unnested parameters on PostgreSQL): a day over 1M memories is a handful of statements.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import InvalidInput
from .ids import validate_id
from .records import OUTBOX_ACTIONS, WRITTEN_BY_BATCH, RecentMemory  # noqa: F401 - their home is records
from .memories_batch import MemoryBatch
from .memory_undo import MemoryUndoTable, record_merge
from .memories_schema import (  # noqa: F401 - importers read the table names here
    CATEGORIES, FORGOTTEN, LIST_FIELDS, MEMORIES, NEW_COLUMNS, OUTBOX, RECALL_FIELDS, RELATION_KINDS, RELATIONS,
    INSERT_NEW, SCHEMA, TAG_SEPARATOR, TEXT_COLUMNS, TEXT_SCHEMA, _FLAGGED_USERS, _ids, rows_changed, stored_text,
)
from .sql_connection import SqlConnection
from .stamped_cache import StampedCache

class MemoryTable(MemoryBatch):
    """The lifecycle tables on the archive's connection (same file, same transactions as the segments)."""

    def __init__(self, db: SqlConnection):
        self.db = db
        self._recall_cache = StampedCache(db)
        self._flag_lock = threading.Lock()
        self._flagged: OrderedDict[tuple[str, bool], tuple[int, set[str]]] = OrderedDict()  # see mark_recalled
        db.migrate("memories", [SCHEMA, TEXT_SCHEMA])  # step 1: the tables as first made; step 2: F2's texts
        self.undo = MemoryUndoTable(db)  # what forgetting changed, for `lumina-memory undo` (issue 49)

    # --- encoding: one row per closed segment -----------------------------------------------------
    def put_new(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert memories not yet known (a re-archived segment keeps its lifecycle); rows hold NEW_COLUMNS.
        Inside the archive's ``transaction()`` it commits with the segments. Returns how many were new."""
        return len(self.insert_new(rows))

    def insert_new(self, rows: Sequence[Mapping[str, Any]]) -> list[str]:
        """``put_new``, returning the ids of the memories that were new (in the rows' order)."""
        if not rows:
            return []
        for row in rows:
            validate_id(row["user_id"], "user_id")
            validate_id(row["memory_id"], "memory_id")
            if row["category"] not in CATEGORIES:
                raise InvalidInput("category", f"must be one of {CATEGORIES}, got {row['category']!r}")
            for field in ("valence", "emotion_path"):
                stored_text(field, row[field])
            for field in TEXT_COLUMNS:
                if row.get(field) is not None:
                    stored_text(field, row[field])
            for tag in row["tags"]:
                if not isinstance(tag, str) or not tag or TAG_SEPARATOR in stored_text("tags", tag):
                    raise InvalidInput("tags", f"{tag!r}: a tag is a non-empty text without the character U+001F")
        ids = [r["memory_id"] for r in rows]
        columns = [[TAG_SEPARATOR.join(r[c]) for r in rows] if c == "tags" else [r[c] for r in rows]
                   for c in NEW_COLUMNS] + [[r.get(c) for r in rows] for c in TEXT_COLUMNS]
        with self.db.tx(touches={r["user_id"] for r in rows}) as con:
            new = {r[0] for r in con.execute(INSERT_NEW, columns).fetchall()}
        return list(dict.fromkeys(i for i in ids if i in new))

    # --- relations made at encoding (F6 continues, references) -------------------------------------
    def recent_with_segments(self, user_id: str, until: float, limit: int,
                             include: Sequence[str] = ()) -> list[RecentMemory]:
        """The user's ``limit`` newest memories created at or before ``until``, and those of ``include``,
        newest first, each with what its segment says about it (when it began, who spoke, why it closed,
        keywords, embedding). Inside the archive's transaction it sees the memories just written there."""
        from .ids import SEGMENTS_TABLE

        user_id = validate_id(user_id, "user_id")
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT m.memory_id, m.created, m.retention, m.level, s.start_ts, s.characters, s.close_reason, "
                f"s.keywords, s.embedding FROM {MEMORIES} m JOIN {SEGMENTS_TABLE} s "
                "ON s.segment_id = m.memory_id AND s.user_id = m.user_id WHERE m.user_id = ? AND "
                "(m.memory_id IN (SELECT unnest(?::VARCHAR[])) OR m.seq IN (SELECT seq FROM "
                f"{MEMORIES} WHERE user_id = ? AND created <= ? ORDER BY created DESC, seq DESC LIMIT ?)) "
                "ORDER BY m.created DESC, m.seq DESC",
                [user_id, _ids(include, "memory_id"), user_id, float(until), int(limit)]).fetchall()
        return [RecentMemory(memory_id=r[0], created=float(r[1]), retention=float(r[2]), level=int(r[3]),
                             start_ts=float(r[4]), characters=list(r[5]), close_reason=r[6], keywords=list(r[7]),
                             embedding=np.asarray(r[8], dtype=np.float32)) for r in rows]

    def add_relations(self, user_id: str, relations: Sequence[tuple[str, str, str, float]], day: int) -> int:
        """Add (src, dst, kind, score) relations of one user unless that pair already has that kind, either
        way round (the batch may have re-pointed it), and owe the graph tier the user's relations (outbox
        action ``relations``) in the same transaction. Returns how many were added."""
        validate_id(user_id, "user_id")
        wanted: dict[tuple[str, str, str], float] = {}
        for src, dst, kind, score in relations:
            validate_id(src, "relations.src")
            validate_id(dst, "relations.dst")
            if kind not in RELATION_KINDS:
                raise InvalidInput("relations.kind", f"must be one of {RELATION_KINDS}, got {kind!r}")
            if src == dst:
                raise InvalidInput("relations", f"{src!r} cannot be related to itself")
            if (dst, src, kind) not in wanted:
                wanted.setdefault((src, dst, kind), float(score))
        if not wanted:
            return 0
        keys = list(wanted)
        with self.db.tx(touches=(user_id,)) as con:
            added = rows_changed(self.db.dialect, con.execute(
                f"INSERT INTO {RELATIONS} SELECT ?::VARCHAR, n.src, n.dst, n.kind, n.score, ?::BIGINT FROM (SELECT "
                "unnest(?::VARCHAR[]) AS src, unnest(?::VARCHAR[]) AS dst, unnest(?::VARCHAR[]) AS kind, "
                f"unnest(?::DOUBLE PRECISION[]) AS score) n WHERE NOT EXISTS (SELECT 1 FROM {RELATIONS} r "
                "WHERE r.user_id = ? AND r.kind = n.kind AND ((r.src = n.src AND r.dst = n.dst) OR "
                "(r.src = n.dst AND r.dst = n.src)))",
                [user_id, int(day), [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
                 [wanted[k] for k in keys], user_id]))
            if added:
                con.execute(f"INSERT INTO {OUTBOX} VALUES (?, '*', 'relations', ?)", [user_id, int(day)])
        return int(added)

    def forgotten(self, user_id: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of ``memory_ids`` the batch auto-deleted (their segments and turns are still the record)."""
        ids = _ids(memory_ids, "memory_id")
        if not ids:
            return set()
        with self.db.read() as con:
            rows = con.execute(f"SELECT DISTINCT memory_id FROM {FORGOTTEN} WHERE user_id = ? AND memory_id IN "
                               "(SELECT unnest(?::VARCHAR[]))", [validate_id(user_id, "user_id"), ids]).fetchall()
        return {r[0] for r in rows}

    # --- what recall keeps of the user in this process (graphs.registry's "cache.recall_reads") ----------
    def cached_for(self, user_id: str) -> int:
        return self._recall_cache.count(user_id)

    def forget_cached(self, user_id: str) -> None:
        self._recall_cache.forget(user_id)
        with self._flag_lock:
            self._flagged.pop((user_id, True), None)
            self._flagged.pop((user_id, False), None)

    def recall_view(self, user_id: str) -> tuple[dict[str, dict[str, Any]], frozenset[str]]:
        """What recall shows of the user's memories on every query (nodes.lifecycle.recall_view): memory id ->
        its ``RECALL_FIELDS``, and the ids the batch auto-deleted. Kept until the user's write stamp moves
        (stores.stamped_cache): recall flags may lag, levels and texts never do."""
        user_id = validate_id(user_id, "user_id")

        def load() -> tuple[dict[str, dict[str, Any]], frozenset[str]]:
            with self.db.read() as con:
                rows = con.execute(f"SELECT {', '.join(RECALL_FIELDS)} FROM {MEMORIES} WHERE user_id = ?",
                                   [user_id]).fetchall()
                gone = con.execute(f"SELECT DISTINCT memory_id FROM {FORGOTTEN} WHERE user_id = ?", [user_id]).fetchall()
            return {r[0]: dict(zip(RECALL_FIELDS, r)) for r in rows}, frozenset(g[0] for g in gone)

        return self._recall_cache.get(user_id, "view", load)

    # --- flags set by recall and by the user --------------------------------------------------------
    def mark_recalled(self, user_id: str, memory_ids: Sequence[str], now: float, deliberate: bool) -> int:
        """F3/F5: recall only sets flags; the batch reinforces (and revives archived memories that deliberate
        recall reached). Returns how many memories were flagged."""
        ids = _ids(memory_ids, "memory_id")
        if not ids:
            return 0
        user_id = validate_id(user_id, "user_id")
        # Flags stay set until the batch (a write that moves the user's stamp) consumes them: memories flagged
        # since the stamp last moved need no write (issue 19: the UPDATE was ~3 ms of every recall).
        stamp, key = self.db.key_generation.get(user_id, 0), (user_id, bool(deliberate))
        with self._flag_lock:
            flagged = self._flagged.get(key)
            if flagged is not None and flagged[0] == stamp and flagged[1].issuperset(ids):
                return len(set(ids))
        # Recall flags are no input of any in-process index: the user's write stamp stays, or every recall
        # would make the next one re-count the user's turns and segments (issue 19: ~1.6 ms a query).
        with self.db.tx() as con:
            matched = rows_changed(self.db.dialect, con.execute(
                f"UPDATE {MEMORIES} SET recalled = recalled OR level < 4, "
                "revival_requested_at = CASE WHEN ?::BOOLEAN AND level = 4 AND NOT revival_requested "
                "THEN ?::DOUBLE PRECISION ELSE revival_requested_at END, "
                "revival_requested = revival_requested OR (?::BOOLEAN AND level = 4) "
                "WHERE user_id = ? AND memory_id IN (SELECT unnest(?::VARCHAR[]))",
                [bool(deliberate), float(now), bool(deliberate), user_id, ids]))
        if matched == len(set(ids)):
            with self._flag_lock:
                flagged = self._flagged.get(key)
                if flagged is None or flagged[0] != stamp:
                    flagged = self._flagged[key] = (stamp, set())
                flagged[1].update(ids)
                self._flagged.move_to_end(key)
                while len(self._flagged) > _FLAGGED_USERS:
                    self._flagged.popitem(last=False)
        return matched

    def set_protected(self, user_id: str, memory_id: str, protected: bool, cap: int) -> dict[str, Any]:
        """F8. Raises InvalidInput naming the cap when the user already has ``cap`` protected memories."""
        validate_id(user_id, "user_id")
        validate_id(memory_id, "memory_id")
        with self.db.tx(touches=(user_id,)) as con:
            found = con.execute(f"SELECT protected FROM {MEMORIES} WHERE user_id = ? AND memory_id = ?",
                                [user_id, memory_id]).fetchone()
            if found is None:
                raise InvalidInput("memory_id", f"{memory_id!r} not found for user_id {user_id!r}")
            if protected and not found[0]:
                (held,) = con.execute(f"SELECT count(*) FROM {MEMORIES} WHERE user_id = ? AND protected",
                                      [user_id]).fetchone()
                if held >= cap:
                    raise InvalidInput(
                        "protected", f"user {user_id!r} already has {held} protected memories, the limit "
                        f"(LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORIES={cap}); unprotect one first: "
                        f"`lumina-memory unprotect --user {user_id} MEMORY_ID` (list them with "
                        f"`lumina-memory memories --user {user_id} --json`)")
            con.execute(f"UPDATE {MEMORIES} SET protected = ? WHERE user_id = ? AND memory_id = ?",
                        [protected, user_id, memory_id])
        return {"memory_id": memory_id, "protected": protected, "changed": bool(found[0]) != protected}

    def rows_tags(self, memory_ids: Sequence[str]) -> list[tuple[str, list[str]]]:
        with self.db.read() as con:
            rows = con.execute(f"SELECT memory_id, tags FROM {MEMORIES} WHERE memory_id IN (SELECT unnest(?::VARCHAR[]))",
                               [_ids(memory_ids, "memory_id")]).fetchall()
        return [(r[0], list(r[1])) for r in rows]

    def protected_count(self, user_id: str) -> int:
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {MEMORIES} WHERE user_id = ? AND protected",
                               [validate_id(user_id, "user_id")]).fetchone()
        return int(n)

    def delete(self, user_id: str, memory_id: str) -> int:
        """Remove one memory's lifecycle rows and its relations (forget); the caller removes the rest."""
        validate_id(user_id, "user_id")
        with self.db.tx(touches=(user_id,)) as con:
            gone = rows_changed(self.db.dialect, con.execute(
                f"DELETE FROM {MEMORIES} WHERE user_id = ? AND memory_id = ?", [user_id, validate_id(memory_id, "memory_id")]))
            con.execute(f"DELETE FROM {RELATIONS} WHERE user_id = ? AND (src = ? OR dst = ?)", [user_id, memory_id, memory_id])
            con.execute(f"DELETE FROM {OUTBOX} WHERE user_id = ? AND memory_id = ?", [user_id, memory_id])
            # Deliberate forgetting and retention are not undoable: no copy of the memory stays in the undo log.
            self.undo.drop(con, user_id, [memory_id])
        return gone

    def merge_into(self, user_id: str, survivor: str, absorbed: Mapping[str, float], values: Mapping[str, Any],
                   day: int, now: float | None = None) -> None:
        """A9: ``absorbed`` (memory id -> its similarity to ``survivor``) folded into ``survivor``, in one
        transaction: the survivor takes ``values`` (retention, intensity, tags, created, text, trigger, content),
        the absorbed rows and their relations go, each is marked forgotten (its segment stays the record and must
        not come back as a fresh memory) and gets a derived_from relation from the survivor; the outbox owes the
        survivor's re-embedding, the absorbed ones' removal from every tier and the graph's relations. The undo
        log keeps every row as it was (step ``merge``, applied at ``now``, the clock by default)."""
        user_id, survivor = validate_id(user_id, "user_id"), validate_id(survivor, "memory_id")
        gone = _ids(absorbed, "memory_id")
        if not gone or survivor in gone:
            raise InvalidInput("absorbed", "must name memories other than the survivor")
        for field in ("text", "trigger", "content"):
            if values.get(field) is not None:
                stored_text(field, values[field])
        day = int(day)
        with self.db.tx(touches=(user_id,)) as con:
            found = con.execute(f"SELECT count(*) FROM {MEMORIES} WHERE user_id = ? AND memory_id IN "
                                "(SELECT unnest(?::VARCHAR[]))", [user_id, [survivor, *gone]]).fetchone()[0]
            if int(found) != len(gone) + 1:
                raise InvalidInput("memory_id", f"{[survivor, *gone]} are not all memories of user_id {user_id!r}")
            record_merge(con, user_id, survivor, gone, day, time.time() if now is None else float(now))
            con.execute(f"UPDATE {MEMORIES} SET retention = ?, intensity = ?, tags = ?::VARCHAR[], created = ?, "
                        "text = ?, trigger = ?, content = ? WHERE user_id = ? AND memory_id = ?",
                        [float(values["retention"]), float(values["intensity"]), list(values["tags"]),
                         float(values["created"]), values.get("text"), values.get("trigger"), values.get("content"),
                         user_id, survivor])
            con.execute(f"INSERT INTO {FORGOTTEN} SELECT ?::VARCHAR, unnest(?::VARCHAR[]), ?::BIGINT",
                        [user_id, gone, day])
            con.execute(f"DELETE FROM {MEMORIES} WHERE user_id = ? AND memory_id IN (SELECT unnest(?::VARCHAR[]))",
                        [user_id, gone])
            con.execute(f"DELETE FROM {RELATIONS} WHERE user_id = ? AND (src IN (SELECT unnest(?::VARCHAR[])) OR "
                        "dst IN (SELECT unnest(?::VARCHAR[])))", [user_id, gone, gone])
            con.execute(f"INSERT INTO {RELATIONS} SELECT ?::VARCHAR, ?::VARCHAR, unnest(?::VARCHAR[]), 'derived_from', "
                        "unnest(?::DOUBLE PRECISION[]), ?::BIGINT",
                        [user_id, survivor, gone, [float(absorbed[g]) for g in gone], day])
            con.execute(f"INSERT INTO {OUTBOX} SELECT ?::VARCHAR, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                        "?::BIGINT",
                        [user_id, [survivor, *gone, "*"], ["reembed", *(["delete"] * len(gone)), "relations"], day])

    # --- reads ------------------------------------------------------------------------------------
    def rows(self, user_id: str, memory_ids: Sequence[str] | None = None, level: int | None = None) -> list[dict[str, Any]]:
        """Memories of the user as dicts (LIST_FIELDS plus source_turn_ids, source_ids, segment_text), oldest first."""
        params: list[Any] = [validate_id(user_id, "user_id")]
        where = "m.user_id = ?"
        if memory_ids is not None:
            where += " AND m.memory_id IN (SELECT unnest(?::VARCHAR[]))"
            params.append(_ids(memory_ids, "memory_id"))
        if level is not None:
            where += " AND m.level = ?"
            params.append(int(level))
        cols = ", ".join(f"m.{c}" for c in LIST_FIELDS)
        from .ids import SEGMENTS_TABLE

        with self.db.read() as con:
            rows = con.execute(
                f"SELECT {cols}, s.turn_ids, s.source_ids, s.text FROM {MEMORIES} m LEFT JOIN {SEGMENTS_TABLE} s "
                f"ON s.segment_id = m.memory_id AND s.user_id = m.user_id WHERE {where} ORDER BY m.created, m.seq",
                params).fetchall()
        names = (*LIST_FIELDS, "source_turn_ids", "source_ids", "segment_text")
        return [dict(zip(names, r)) for r in rows]

    def relations(self, user_id: str, memory_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        params: list[Any] = [validate_id(user_id, "user_id")]
        where = "user_id = ?"
        if memory_ids is not None:
            ids = _ids(memory_ids, "memory_id")
            where += " AND (src IN (SELECT unnest(?::VARCHAR[])) OR dst IN (SELECT unnest(?::VARCHAR[])))"
            params += [ids, ids]
        with self.db.read() as con:
            rows = con.execute(f"SELECT src, dst, kind, score, created_day FROM {RELATIONS} WHERE {where} "
                               "ORDER BY src, dst, kind", params).fetchall()
        return [dict(zip(("src", "dst", "kind", "score", "created_day"), r)) for r in rows]

    def level_counts(self, user_id: str | None = None) -> dict[int, int]:
        where, params = ("", []) if user_id is None else (" WHERE user_id = ?", [validate_id(user_id, "user_id")])
        with self.db.read() as con:
            rows = con.execute(f"SELECT level, count(*) FROM {MEMORIES}{where} GROUP BY level", params).fetchall()
        return {int(r[0]): int(r[1]) for r in rows}
