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

The batch reads columns as numpy arrays and writes them back by scanning numpy arrays registered on the
connection (no per-row Python, no list conversion): a day over 1M memories is a handful of statements.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .duckdb_connection import GuardedConnection
from .errors import InvalidInput
from .ids import validate_id
from .records import OUTBOX_ACTIONS, WRITTEN_BY_BATCH, RecentMemory  # noqa: F401 - their home is records
from .stamped_cache import StampedCache

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
        created DOUBLE NOT NULL,            -- the conversation's clock: when the segment ended
        category VARCHAR NOT NULL,
        intensity DOUBLE NOT NULL,
        valence VARCHAR NOT NULL,
        valence_score DOUBLE NOT NULL,
        arousal DOUBLE NOT NULL,
        tags VARCHAR[] NOT NULL,
        decay DOUBLE NOT NULL,
        memory_days DOUBLE NOT NULL,
        retention DOUBLE NOT NULL,
        level TINYINT NOT NULL,
        protected BOOLEAN NOT NULL,
        recalled BOOLEAN NOT NULL,          -- the notes' recalled_since_last_batch
        recall_count BIGINT NOT NULL,
        unbatched BOOLEAN NOT NULL,
        idle_days DOUBLE NOT NULL,
        archived_on BIGINT NOT NULL,        -- batch day (date ordinal) it was archived; -1 active
        archive_reason TINYINT NOT NULL,
        revival_requested BOOLEAN NOT NULL,
        revival_requested_at DOUBLE,        -- NULL: none
        text VARCHAR,
        emotion_path VARCHAR NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {MEMORIES}_user_idx ON {MEMORIES} (user_id)",
    f"""CREATE TABLE IF NOT EXISTS {RELATIONS} (
        user_id VARCHAR NOT NULL,
        src VARCHAR NOT NULL,
        dst VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        score DOUBLE NOT NULL,
        created_day BIGINT NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {DAYS} (
        user_id VARCHAR PRIMARY KEY,
        last_day BIGINT NOT NULL,
        ran_at DOUBLE NOT NULL)""",
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

# The lifecycle core's columns (nodes.lifecycle.columns.MemoryColumns) as the table holds them; ``category`` is
# stored as its name and loaded as its code, ``revival_requested_at`` NULL as NaN, ``group`` is the user's index.
CORE_COLUMNS = ("intensity", "category", "decay", "memory_days", "retention", "level", "protected", "recalled",
                "recall_count", "unbatched", "idle_days", "created", "archived_on", "archive_reason",
                "revival_requested", "revival_requested_at")
LIST_FIELDS = ("memory_id", "user_id", "level", "retention", "intensity", "valence", "valence_score", "arousal",
               "tags", "category", "decay", "memory_days", "recall_count", "protected", "archived_on",
               "revival_requested", "revival_requested_at", "text", "created", "emotion_path")
_FLAGGED_USERS = 1_024
RECALL_FIELDS = ("memory_id", "level", "retention", "recall_count", "valence", "arousal", "tags", "text")
NEW_COLUMNS = ("memory_id", "user_id", "created", "category", "intensity", "valence", "valence_score", "arousal",
               "tags", "decay", "memory_days", "retention", "level", "protected", "recalled", "recall_count",
               "unbatched", "idle_days", "archived_on", "archive_reason", "revival_requested", "emotion_path")
_NEW_TYPES = ("VARCHAR", "VARCHAR", "DOUBLE", "VARCHAR", "DOUBLE", "VARCHAR", "DOUBLE", "DOUBLE", "VARCHAR[]",
              "DOUBLE", "DOUBLE", "DOUBLE", "TINYINT", "BOOLEAN", "BOOLEAN", "BIGINT", "BOOLEAN", "DOUBLE", "BIGINT",
              "TINYINT", "BOOLEAN", "VARCHAR")


def _ids(values: Iterable[str], field: str) -> list[str]:
    return [validate_id(v, field) for v in values]


class MemoryTable:
    """The lifecycle tables on the archive's connection (same file, same transactions as the segments)."""

    def __init__(self, db: GuardedConnection):
        self.db = db
        self._recall_cache = StampedCache(db)
        self._flag_lock = threading.Lock()
        self._flagged: OrderedDict[tuple[str, bool], tuple[int, set[str]]] = OrderedDict()  # see mark_recalled
        with db.tx() as con:
            for statement in SCHEMA:
                con.execute(statement)

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
        select = ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in zip(NEW_COLUMNS, _NEW_TYPES))
        ids = [r["memory_id"] for r in rows]
        with self.db.tx(touches={r["user_id"] for r in rows}) as con:
            known = {r[0] for r in con.execute(
                f"SELECT memory_id FROM {MEMORIES} WHERE memory_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
            con.execute(
                f"INSERT INTO {MEMORIES} ({', '.join(NEW_COLUMNS)}) SELECT * FROM (SELECT {select}) "
                "ON CONFLICT (memory_id) DO NOTHING",
                [[r[c] for r in rows] for c in NEW_COLUMNS],
            )
        return list(dict.fromkeys(i for i in ids if i not in known))

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
            (added,) = con.execute(
                f"INSERT INTO {RELATIONS} SELECT ?, n.src, n.dst, n.kind, n.score, ? FROM (SELECT "
                "unnest(?::VARCHAR[]) AS src, unnest(?::VARCHAR[]) AS dst, unnest(?::VARCHAR[]) AS kind, "
                f"unnest(?::DOUBLE[]) AS score) n WHERE NOT EXISTS (SELECT 1 FROM {RELATIONS} r WHERE r.user_id = ? "
                "AND r.kind = n.kind AND ((r.src = n.src AND r.dst = n.dst) OR (r.src = n.dst AND r.dst = n.src)))",
                [user_id, int(day), [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
                 [wanted[k] for k in keys], user_id]).fetchone()
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

    # --- the batch --------------------------------------------------------------------------------
    def due_users(self, day: int, users: Sequence[str] | None = None) -> dict[str, int | None]:
        """user -> last completed day (None: never ran) for users with memories whose last day < ``day``."""
        params: list[Any] = [day]
        where = ""
        if users is not None:
            where = " AND m.user_id IN (SELECT unnest(?::VARCHAR[]))"
            params.append(_ids(users, "user_id"))
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT m.user_id, d.last_day FROM (SELECT DISTINCT user_id FROM {MEMORIES}) m "
                f"LEFT JOIN {DAYS} d USING (user_id) WHERE (d.last_day IS NULL OR d.last_day < ?){where}",
                params,
            ).fetchall()
        return {r[0]: (None if r[1] is None else int(r[1])) for r in rows}

    def load(self, users: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """(core columns as numpy arrays incl. ``group``, memory ids, seqs) of the users' memories, by user then seq."""
        users = _ids(users, "user_id")
        cats = "[" + ", ".join(f"'{c}'" for c in CATEGORIES) + "]"
        cols = [c for c in CORE_COLUMNS if c not in ("category", "revival_requested_at")]
        with self.db.read() as con:
            con.execute(
                f"SELECT memory_id, seq, list_position(?::VARCHAR[], user_id) - 1 AS \"group\", "
                f"coalesce(list_position({cats}, category) - 1, -1) AS category, "
                f"coalesce(revival_requested_at, 'NaN'::DOUBLE) AS revival_requested_at, {', '.join(cols)} "
                f"FROM {MEMORIES} WHERE user_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY \"group\", seq",
                [users, users],
            )
            raw = con.fetchnumpy()
        arrays = {k: np.asarray(v) for k, v in raw.items()}
        ids, seq = arrays.pop("memory_id").astype(object), arrays.pop("seq").astype(np.int64)
        return arrays, ids, seq

    def relation_rows(self, users: Sequence[str]) -> list[tuple[str, str, str, str, float]]:
        with self.db.read() as con:
            return [tuple(r) for r in con.execute(
                f"SELECT user_id, src, dst, kind, score FROM {RELATIONS} WHERE user_id IN (SELECT unnest(?::VARCHAR[])) "
                "ORDER BY user_id, src, dst, kind", [_ids(users, "user_id")]).fetchall()]

    def write_day(self, users: Sequence[str], day: int, seq: np.ndarray, values: Mapping[str, np.ndarray],
                  texts: Mapping[int, str], relations: Sequence[tuple[str, str, str, str, float]] | None,
                  outbox: Sequence[tuple[str, str, str]], delete_seq: Sequence[int], now: float) -> None:
        """One day of the batch for ``users``, in one transaction with its completion mark.

        ``values``: WRITTEN_BY_BATCH columns for the rows ``seq`` (aligned); ``texts``: seq -> the text at the
        new level; ``relations``: the users' full relation set after the day (None: unchanged); ``outbox``:
        (user, memory_id, action) derived writes owed; ``delete_seq``: memories auto-deleted."""
        users = _ids(users, "user_id")
        with self.db.tx(touches=users) as con:
            if len(seq):
                frame = {"seq": np.ascontiguousarray(seq, dtype=np.int64)}
                frame.update({k: np.ascontiguousarray(values[k]) for k in WRITTEN_BY_BATCH})
                con.register("lifecycle_day_values", frame)
                try:
                    sets = ", ".join(f"{k} = v.{k}" for k in WRITTEN_BY_BATCH if k != "revival_requested_at")
                    con.execute(f"UPDATE {MEMORIES} SET {sets}, revival_requested_at = CASE WHEN isnan("
                                "v.revival_requested_at) THEN NULL ELSE v.revival_requested_at END "
                                f"FROM lifecycle_day_values v WHERE {MEMORIES}.seq = v.seq")
                finally:
                    con.unregister("lifecycle_day_values")
            if texts:
                keys = [int(k) for k in texts]
                con.execute(
                    f"UPDATE {MEMORIES} SET text = t.text FROM (SELECT unnest(?::BIGINT[]) AS s, "
                    f"unnest(?::VARCHAR[]) AS text) t WHERE {MEMORIES}.seq = t.s", [keys, [texts[k] for k in keys]])
            if len(delete_seq):
                doomed = [int(x) for x in delete_seq]
                # The segment and its turns stay (the record); this mark keeps the memory from coming back
                # as a fresh one through priming, re-derivation or the mid-term refill.
                con.execute(f"INSERT INTO {FORGOTTEN} SELECT user_id, memory_id, ? FROM {MEMORIES} "
                            "WHERE seq IN (SELECT unnest(?::BIGINT[]))", [int(day), doomed])
                con.execute(f"DELETE FROM {MEMORIES} WHERE seq IN (SELECT unnest(?::BIGINT[]))", [doomed])
            if relations is not None:
                con.execute(f"DELETE FROM {RELATIONS} WHERE user_id IN (SELECT unnest(?::VARCHAR[]))", [users])
                if relations:
                    con.execute(
                        f"INSERT INTO {RELATIONS} SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                        "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::DOUBLE[]), ?",
                        [[r[0] for r in relations], [r[1] for r in relations], [r[2] for r in relations],
                         [r[3] for r in relations], [float(r[4]) for r in relations], day])
            if outbox:
                con.execute(f"INSERT INTO {OUTBOX} SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                            "unnest(?::VARCHAR[]), ?", [[o[0] for o in outbox], [o[1] for o in outbox],
                                                        [o[2] for o in outbox], day])
            con.execute(
                f"INSERT INTO {DAYS} SELECT unnest(?::VARCHAR[]), ?, ? ON CONFLICT (user_id) DO UPDATE "
                "SET last_day = excluded.last_day, ran_at = excluded.ran_at", [users, day, now])

    def start_users(self, users: Sequence[str], day: int, now: float) -> None:
        """Users whose first batch day is ``day``: memories made before it start decaying from it."""
        with self.db.tx(touches=users) as con:
            con.execute(f"INSERT INTO {DAYS} SELECT unnest(?::VARCHAR[]), ?, ? ON CONFLICT (user_id) DO NOTHING",
                        [_ids(users, "user_id"), day, now])

    def last_days(self) -> dict[str, int]:
        with self.db.read() as con:
            return {r[0]: int(r[1]) for r in con.execute(f"SELECT user_id, last_day FROM {DAYS}").fetchall()}

    # --- derived writes owed -----------------------------------------------------------------------
    def queue(self, user_id: str, memory_id: str, action: str, day: int = 0) -> None:
        """One derived write owed outside a batch (a store was down when protect or recall needed it)."""
        if action not in OUTBOX_ACTIONS:
            raise InvalidInput("action", f"must be one of {OUTBOX_ACTIONS}")
        with self.db.tx(touches=(user_id,)) as con:
            con.execute(f"INSERT INTO {OUTBOX} VALUES (?, ?, ?, ?)",
                        [validate_id(user_id, "user_id"), validate_id(memory_id, "memory_id"), action, day])

    def owed(self, limit: int = 10_000, actions: Sequence[str] = OUTBOX_ACTIONS) -> list[tuple[str, str, str]]:
        """(user, memory_id, action) owed, distinct; ``actions`` keeps each maintenance step to its own kinds."""
        with self.db.read() as con:
            rows = con.execute(f"SELECT DISTINCT user_id, memory_id, action FROM {OUTBOX} WHERE action IN (SELECT "
                               "unnest(?::VARCHAR[])) ORDER BY user_id, memory_id, action LIMIT ?",
                               [list(actions), limit]).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def owed_count(self, actions: Sequence[str] = OUTBOX_ACTIONS) -> int:
        with self.db.read() as con:
            return int(con.execute(f"SELECT count(*) FROM (SELECT DISTINCT user_id, memory_id, action FROM {OUTBOX} "
                                   "WHERE action IN (SELECT unnest(?::VARCHAR[])))", [list(actions)]).fetchone()[0])

    def settle(self, done: Sequence[tuple[str, str, str]]) -> None:
        if not done:
            return
        with self.db.tx(touches={d[0] for d in done}) as con:
            con.execute(f"DELETE FROM {OUTBOX} WHERE (user_id, memory_id, action) IN (SELECT (unnest(?::VARCHAR[]), "
                        "unnest(?::VARCHAR[]), unnest(?::VARCHAR[])))",
                        [[d[0] for d in done], [d[1] for d in done], [d[2] for d in done]])

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
            row = con.execute(
                f"UPDATE {MEMORIES} SET recalled = recalled OR level < 4, "
                "revival_requested_at = CASE WHEN ? AND level = 4 AND NOT revival_requested THEN ? "
                "ELSE revival_requested_at END, revival_requested = revival_requested OR (? AND level = 4) "
                "WHERE user_id = ? AND memory_id IN (SELECT unnest(?::VARCHAR[]))",
                [deliberate, now, deliberate, user_id, ids]).fetchone()
        matched = int(row[0]) if row else 0
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
            row = con.execute(f"DELETE FROM {MEMORIES} WHERE user_id = ? AND memory_id = ?",
                              [user_id, validate_id(memory_id, "memory_id")]).fetchone()
            con.execute(f"DELETE FROM {RELATIONS} WHERE user_id = ? AND (src = ? OR dst = ?)", [user_id, memory_id, memory_id])
            con.execute(f"DELETE FROM {OUTBOX} WHERE user_id = ? AND memory_id = ?", [user_id, memory_id])
        return int(row[0]) if row else 0

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
