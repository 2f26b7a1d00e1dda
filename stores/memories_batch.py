"""The lifecycle's daily batch on the memories tables: which users are due, their columns as numpy arrays,
one day written back in one transaction with its completion mark, and the derived writes a day leaves owed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import DayAlreadyApplied, InvalidInput
from .ids import validate_id
from .memory_undo import record_day
from .memories_schema import (CATEGORIES, CORE_COLUMNS, DAYS, FORGOTTEN, MEMORIES, OUTBOX, RELATIONS, _ids,
                              stored_text)
from .records import OUTBOX_ACTIONS, WRITTEN_BY_BATCH
from .sql_connection import SqlConnection

_F8 = "DOUBLE PRECISION"
_SQL_TYPES = {"decay": _F8, "memory_days": _F8, "retention": _F8, "level": "SMALLINT", "protected": "BOOLEAN",
              "recalled": "BOOLEAN", "recall_count": "BIGINT", "unbatched": "BOOLEAN", "idle_days": _F8,
              "archived_on": "BIGINT", "archive_reason": "SMALLINT", "revival_requested": "BOOLEAN",
              "revival_requested_at": _F8}
_WRITTEN_DTYPES = {k: {_F8: np.float64, "SMALLINT": np.int16, "BIGINT": np.int64, "BOOLEAN": np.bool_}[t]
                   for k, t in _SQL_TYPES.items()}
# One day's batch columns for the rows ``seq`` from ``{values}`` (see MemoryBatch._day_values); NaN (no revival
# request) is stored as NULL.
_WRITE_DAY = (
    f"UPDATE {MEMORIES} SET " + ", ".join(f"{k} = v.{k}" for k in WRITTEN_BY_BATCH if k != "revival_requested_at")
    + f", revival_requested_at = nullif(v.revival_requested_at, 'NaN'::{_F8}) FROM ({{values}}) AS v "
    f"WHERE {MEMORIES}.seq = v.seq"
)
_DAY_VALUES = "lifecycle_day_values"
_UNNESTED_DAY_VALUES = "SELECT unnest(?::BIGINT[]) AS seq, " + ", ".join(
    f"unnest(?::{_SQL_TYPES[k]}[]) AS {k}" for k in WRITTEN_BY_BATCH)
# The core columns of some users' memories, by user then seq: ``group`` is the user's index in the list given,
# ``category`` the index into CATEGORIES (-1: unknown), ``revival_requested_at`` NaN where NULL.
_PLAIN = [c for c in CORE_COLUMNS if c not in ("category", "revival_requested_at")]
_LOADED = ("memory_id", "seq", "group", "category", "revival_requested_at", *_PLAIN)
_LOAD = (
    "SELECT memory_id, seq, array_position(?::VARCHAR[], user_id) - 1 AS \"group\", coalesce(array_position(ARRAY["
    + ", ".join(f"'{c}'" for c in CATEGORIES) + f"], category) - 1, -1) AS category, coalesce(revival_requested_at, "
    f"'NaN'::{_F8}) AS revival_requested_at, {', '.join(_PLAIN)} FROM {MEMORIES} "
    "WHERE user_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY \"group\", seq"
)
_LOADED_DTYPES = {"seq": np.int64, "group": np.int64, "category": np.int8, "revival_requested_at": np.float64,
                  "created": np.float64, "intensity": np.float64, **_WRITTEN_DTYPES,
                  "level": np.int8, "archive_reason": np.int8}  # nodes.lifecycle.columns' dtypes


# The users among some whose last completed day is at or after a day (write_day's refusal).
_APPLIED = f"SELECT user_id, last_day FROM {DAYS} WHERE user_id IN (SELECT unnest(?::VARCHAR[])) AND last_day >= ?"


class MemoryBatch:
    """``MemoryTable``'s batch and outbox methods (mixed into it; ``db`` is the archive's connection)."""

    db: SqlConnection

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
        with self.db.read() as con:
            cursor = con.execute(_LOAD, [users, users])
            if self.db.dialect == "duckdb":
                # DuckDB hands the columns over as numpy arrays, no Python object per value: fetchall and a
                # transpose took 6x as long (200,000 memories: 1.8 s against 0.32 s).
                raw = cursor.fetchnumpy()
                columns = [raw[name] for name in _LOADED]
            else:
                rows = cursor.fetchall()
                columns = list(zip(*rows)) if rows else [()] * len(_LOADED)
        arrays = {name: np.asarray(column, dtype=_LOADED_DTYPES.get(name, object))
                  for name, column in zip(_LOADED, columns)}
        ids, seq = arrays.pop("memory_id"), arrays.pop("seq")
        return arrays, ids, seq

    def relation_rows(self, users: Sequence[str]) -> list[tuple[str, str, str, str, float]]:
        with self.db.read() as con:
            return [tuple(r) for r in con.execute(
                f"SELECT user_id, src, dst, kind, score FROM {RELATIONS} WHERE user_id IN (SELECT unnest(?::VARCHAR[])) "
                "ORDER BY user_id, src, dst, kind", [_ids(users, "user_id")]).fetchall()]

    def write_day(self, users: Sequence[str], day: int, seq: np.ndarray, values: Mapping[str, np.ndarray],
                  texts: Mapping[int, str], relations: Sequence[tuple[str, str, str, str, float]] | None,
                  outbox: Sequence[tuple[str, str, str]], delete_seq: Sequence[int], now: float,
                  undo: Mapping[int, str] | None = None, *,
                  sides: Mapping[int, tuple[str | None, str | None]] | None = None) -> None:
        """One day of the batch for ``users``, in one transaction with its completion mark.

        ``values``: WRITTEN_BY_BATCH columns for the rows ``seq`` (aligned); ``texts``: seq -> the text at the
        new level; ``relations``: the users' full relation set after the day (None: unchanged); ``outbox``:
        (user, memory_id, action) derived writes owed; ``delete_seq``: memories auto-deleted; ``undo``: seq ->
        forgetting step (compress, archive, delete) of the rows whose state before the day the undo log keeps;
        ``sides``: seq -> (trigger, content) at the new level (F2), written with ``texts``.

        A day not after every user's last completed day is refused (``DayAlreadyApplied``), nothing written: in
        server mode two processes may both find a day due. The check runs inside the transaction, after its
        write stamps lock the users (PostgresConnection.tx), so of two writers of one day the second waits for
        the first to commit, then sees its mark."""
        users = list(dict.fromkeys(_ids(users, "user_id")))  # one mark per user: ON CONFLICT updates a row once
        for text in texts.values():
            if text is not None:
                stored_text("texts", text)
        for side in (sides or {}).values():
            for text in side:
                if text is not None:
                    stored_text("sides", text)
        day = int(day)
        with self.db.tx(touches=users) as con:
            applied = con.execute(_APPLIED, [users, day]).fetchall()
            if applied:
                raise DayAlreadyApplied(day, {r[0]: int(r[1]) for r in applied})
            record_day(con, undo or {}, day, now, self.db.dialect)  # before the day's writes: the rows as they were
            if len(seq):
                self._write_values(con, seq, values)
            if texts:
                keys = [int(k) for k in texts]
                con.execute(
                    f"UPDATE {MEMORIES} SET text = t.text FROM (SELECT unnest(?::BIGINT[]) AS s, "
                    f"unnest(?::VARCHAR[]) AS text) t WHERE {MEMORIES}.seq = t.s", [keys, [texts[k] for k in keys]])
            if sides:
                keys = [int(k) for k in sides]
                con.execute(
                    f"UPDATE {MEMORIES} SET trigger = t.trigger, content = t.content FROM (SELECT "
                    "unnest(?::BIGINT[]) AS s, unnest(?::VARCHAR[]) AS trigger, unnest(?::VARCHAR[]) AS content) t "
                    f"WHERE {MEMORIES}.seq = t.s",
                    [keys, [sides[k][0] for k in keys], [sides[k][1] for k in keys]])
            if len(delete_seq):
                doomed = [int(x) for x in delete_seq]
                # The segment and its turns stay (the record); this mark keeps the memory from coming back
                # as a fresh one through priming, re-derivation or the mid-term refill.
                con.execute(f"INSERT INTO {FORGOTTEN} SELECT user_id, memory_id, ?::BIGINT FROM {MEMORIES} "
                            "WHERE seq IN (SELECT unnest(?::BIGINT[]))", [int(day), doomed])
                con.execute(f"DELETE FROM {MEMORIES} WHERE seq IN (SELECT unnest(?::BIGINT[]))", [doomed])
            if relations is not None:
                # A9's derived_from rows (a merged memory -> those folded into it, which are no longer memories and
                # so never in ``relations``) stay while the merged memory does.
                con.execute(f"DELETE FROM {RELATIONS} r WHERE user_id IN (SELECT unnest(?::VARCHAR[])) AND NOT ("
                            f"kind = 'derived_from' AND EXISTS (SELECT 1 FROM {MEMORIES} m WHERE m.user_id = r.user_id "
                            f"AND m.memory_id = r.src) AND EXISTS (SELECT 1 FROM {FORGOTTEN} f WHERE "
                            "f.user_id = r.user_id AND f.memory_id = r.dst))", [users])
                if relations:
                    con.execute(
                        f"INSERT INTO {RELATIONS} SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                        "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::DOUBLE PRECISION[]), ?::BIGINT",
                        [[r[0] for r in relations], [r[1] for r in relations], [r[2] for r in relations],
                         [r[3] for r in relations], [float(r[4]) for r in relations], day])
            if outbox:
                con.execute(f"INSERT INTO {OUTBOX} SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                            "unnest(?::VARCHAR[]), ?::BIGINT", [[o[0] for o in outbox], [o[1] for o in outbox],
                                                        [o[2] for o in outbox], day])
            con.execute(
                f"INSERT INTO {DAYS} SELECT unnest(?::VARCHAR[]), ?::BIGINT, ?::DOUBLE PRECISION ON CONFLICT (user_id) "
                "DO UPDATE SET last_day = excluded.last_day, ran_at = excluded.ran_at", [users, day, float(now)])

    def _write_values(self, con, seq: np.ndarray, values: Mapping[str, np.ndarray]) -> None:
        """``_WRITE_DAY`` for the rows ``seq``. DuckDB scans the numpy arrays registered on the connection: as
        parameter lists (the form PostgreSQL takes) a day of 200,000 memories took 1.7 s against 0.13 s."""
        frame = {"seq": np.ascontiguousarray(seq, dtype=np.int64)}
        frame.update({k: np.ascontiguousarray(values[k], dtype=_WRITTEN_DTYPES[k]) for k in WRITTEN_BY_BATCH})
        if self.db.dialect != "duckdb":
            con.execute(_WRITE_DAY.format(values=_UNNESTED_DAY_VALUES), [a.tolist() for a in frame.values()])
            return
        con.register(_DAY_VALUES, frame)
        try:
            con.execute(_WRITE_DAY.format(values=f"SELECT * FROM {_DAY_VALUES}"))
        finally:
            con.unregister(_DAY_VALUES)

    def start_users(self, users: Sequence[str], day: int, now: float) -> None:
        """Users whose first batch day is ``day``: memories made before it start decaying from it."""
        with self.db.tx(touches=users) as con:
            con.execute(f"INSERT INTO {DAYS} SELECT unnest(?::VARCHAR[]), ?::BIGINT, ?::DOUBLE PRECISION "
                        "ON CONFLICT (user_id) DO NOTHING", [_ids(users, "user_id"), int(day), float(now)])

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
                        [validate_id(user_id, "user_id"), validate_id(memory_id, "memory_id"), action, int(day)])

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
                                   "WHERE action IN (SELECT unnest(?::VARCHAR[]))) AS owed", [list(actions)]).fetchone()[0])

    def settle(self, done: Sequence[tuple[str, str, str]]) -> None:
        if not done:
            return
        with self.db.tx(touches={d[0] for d in done}) as con:
            con.execute(f"DELETE FROM {OUTBOX} WHERE (user_id, memory_id, action) IN (SELECT unnest(?::VARCHAR[]), "
                        "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]))",
                        [[d[0] for d in done], [d[1] for d in done], [d[2] for d in done]])
