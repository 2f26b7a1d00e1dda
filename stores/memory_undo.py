"""The undo log of forgetting (issue 49): what a memory or a fact was before a forgetting step changed it.

Table ``memory_undo`` (in the archive's database, with ``user_id``: erasure, backups and the residue scan find it
in the catalogue like the lifecycle's tables, so an erased user's entries go with the rest and an erasure is never
undoable). One row per memory and step:

- ``compress`` / ``archive`` / ``delete``: the memory's whole row before the batch day that compressed (level 1→2,
  2→3), archived (→ 4) or auto-deleted it, written by ``MemoryTable.write_day`` in that day's own transaction
  (``record_day``), a deleted memory's relations included;
- ``knowledge``: a fact's activity before monthly knowledge forgetting forgot it (nodes.knowledge.forgetting,
  in the forgetting's own transaction);
- ``merge``: A9's episode merging (``MemoryTable.merge_into``, in its transaction): the survivor's row (with the
  ids folded into it, ``folded``) and each folded memory's row with its relations (and ``merged_into``);
- ``procedure``: a procedure lineage the monthly forgetting removed, every version's row (outcome counts and ids
  are columns of it), keyed by lineage id (stores.procedures_duckdb, in the forgetting's transaction).

``prior`` is JSON. The memory's vectors are not kept: its text is, and the restore re-embeds it through the path
compression uses (nodes.lifecycle.undo). Entries older than ``lifecycle.undo_window_days`` are refused and purged
by the maintenance graph's lifecycle days step.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InvalidInput
from .ids import validate_id
from .memories_schema import FORGOTTEN, MEMORIES, RELATIONS, _ids
from .undo_steps import FOLDED, MERGED_INTO, STEPS

UNDO = "memory_undo"
_NOT_COLUMNS = ("relations", FOLDED, MERGED_INTO)
KNOWLEDGE = "knowledge_items"  # stores.knowledge_duckdb.KNOWLEDGE (imported there from here would be a cycle)

SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {UNDO} (
        undo_id VARCHAR PRIMARY KEY,
        user_id VARCHAR NOT NULL,
        target_id VARCHAR NOT NULL,  -- a memory id, or a knowledge item id (step 'knowledge')
        step VARCHAR NOT NULL,
        day BIGINT NOT NULL,         -- the batch day (date ordinal) of the step
        ts DOUBLE PRECISION NOT NULL,  -- when it was applied: the undo window runs from here
        prior VARCHAR NOT NULL)""",
    f"CREATE INDEX IF NOT EXISTS {UNDO}_user_idx ON {UNDO} (user_id)",
)
_FIELDS = ("undo_id", "user_id", "target_id", "step", "day", "ts", "prior")
_INSERT = (f"INSERT INTO {UNDO} SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
           "unnest(?::VARCHAR[]), ?::BIGINT, ?::DOUBLE PRECISION, unnest(?::VARCHAR[])")
# Restoring a row sets every column it had but these (the row's identity and its place in load order).
_KEPT = ("memory_id", "user_id", "seq")


def _insert(con, rows: Sequence[tuple[str, str, str, str]], day: int, ts: float) -> None:
    """(user, target, step, prior JSON) rows of one day."""
    if rows:
        con.execute(_INSERT, [[uuid.uuid4().hex for _ in rows], [r[0] for r in rows], [r[1] for r in rows],
                              [r[2] for r in rows], int(day), float(ts), [r[3] for r in rows]])


def record_day(con, steps: Mapping[int, str], day: int, now: float, dialect: str = "duckdb") -> int:
    """Inside a batch day's transaction, before it writes: each memory of ``steps`` (seq -> step) as it stands,
    with its relations when the step deletes it. Every column is kept (the whole row as JSON), so a column a
    later migration adds is restored too. Compressions and archivings are copied by the database itself (a
    first batch may move most of a million memories: built in Python, 100,000 rows took 6.8 s against 0.4 s
    for the day's own writes); the few deletions go through Python for their relations."""
    if not steps:
        return 0
    kept = [(int(s), step) for s, step in steps.items() if step != "delete"]
    if kept:
        as_json = "to_json(m)" if dialect == "duckdb" else "row_to_json(m)"
        con.execute(
            f"INSERT INTO {UNDO} SELECT gen_random_uuid()::VARCHAR, m.user_id, m.memory_id, s.step, ?::BIGINT, "
            f"?::DOUBLE PRECISION, {as_json}::VARCHAR FROM {MEMORIES} m JOIN (SELECT unnest(?::BIGINT[]) AS seq, "
            "unnest(?::VARCHAR[]) AS step) s ON m.seq = s.seq",
            [int(day), float(now), [k[0] for k in kept], [k[1] for k in kept]])
    steps = {int(s): step for s, step in steps.items() if step == "delete"}
    if not steps:
        return len(kept)
    found = _priors(con, "seq IN (SELECT unnest(?::BIGINT[]))", [list(steps)], related=True)
    rows = [(p["user_id"], p["memory_id"], "delete", _dumps(p)) for p in found]
    _insert(con, rows, day, now)
    return len(kept) + len(rows)


def _dumps(prior: Mapping[str, Any]) -> str:
    return json.dumps(prior, ensure_ascii=False, default=str)


def _priors(con, where: str, params: list, related: bool | set[str]) -> list[dict[str, Any]]:
    """Memories' whole rows (``seq`` aside) as JSON-ready dicts; ``relations`` added to each (``related`` True)
    or to those of the ids in ``related``."""
    cursor = con.execute(f"SELECT * FROM {MEMORIES} WHERE {where}", params)
    names = [d[0] for d in cursor.description]
    found = [{k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in zip(names, r) if k != "seq"}
             for r in cursor.fetchall()]
    doomed = [r["memory_id"] for r in found if related is True or r["memory_id"] in related]
    relations: dict[str, list] = {}
    if doomed:
        for src, dst, kind, score, created in con.execute(
                f"SELECT src, dst, kind, score, created_day FROM {RELATIONS} WHERE src IN (SELECT unnest(?::VARCHAR[])) "
                "OR dst IN (SELECT unnest(?::VARCHAR[]))", [doomed, doomed]).fetchall():
            for end in {src, dst} & set(doomed):
                relations.setdefault(end, []).append([src, dst, kind, float(score), int(created)])
    for row in found:
        if row["memory_id"] in doomed:
            row["relations"] = relations.get(row["memory_id"], [])
    return found


def record_merge(con, user_id: str, survivor: str, folded: Sequence[str], day: int, now: float) -> int:
    """Inside ``merge_into``'s transaction, before it writes: the survivor's row (``folded``: the ids the merge
    folds into it, whose derived_from relations an undo removes) and each folded memory's row with its relations
    (``merged_into``: the survivor, so undoing any of them undoes the whole merge)."""
    found = _priors(con, "user_id = ? AND memory_id IN (SELECT unnest(?::VARCHAR[]))", [user_id, [survivor, *folded]],
                    related=set(folded))
    for prior in found:
        prior.update({FOLDED: list(folded)} if prior["memory_id"] == survivor else {MERGED_INTO: survivor})
    _insert(con, [(user_id, p["memory_id"], "merge", _dumps(p)) for p in found], day, now)
    return len(found)


def record_procedures(con, user_id: str, rows: Sequence[Mapping[str, Any]], day: int, now: float) -> int:
    """Inside a procedure forgetting's transaction: one entry per lineage holding every version's row."""
    lineages: dict[str, list] = {}
    for row in rows:
        lineages.setdefault(row["lineage_id"], []).append(dict(row))
    _insert(con, [(user_id, lineage, "procedure", _dumps({"versions": versions}))
                  for lineage, versions in lineages.items()], day, now)
    return len(lineages)


class MemoryUndoTable:
    """``memory_undo`` on the archive's connection (``MemoryTable.undo``)."""

    def __init__(self, db):
        self.db = db
        db.migrate("memory_undo", [SCHEMA])

    def record_facts(self, user_items: Sequence[tuple[str, str]], day: int, now: float) -> int:
        """Facts (user, item_id) just forgotten: their activity before it. Call it inside the forgetting's
        transaction (``db.tx()`` nests) so both commit or neither does."""
        if not user_items:
            return 0
        ids = [validate_id(i, "item_id") for _u, i in user_items]
        with self.db.tx(touches={u for u, _ in user_items}) as con:
            found = con.execute(f"SELECT user_id, item_id, low_activity_since, last_access, access_count FROM {KNOWLEDGE} "
                                "WHERE item_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()
            rows = [(u, i, "knowledge", json.dumps({"forgotten_at": None, "low_activity_since": since,
                                                    "last_access": last, "access_count": count}))
                    for u, i, since, last, count in found]
            _insert(con, rows, day, now)
        return len(rows)

    def entries(self, user_id: str, target_id: str | None = None, step: str | None = None,
                since_day: int | None = None) -> list[dict[str, Any]]:
        """The user's entries, oldest first (``prior`` parsed), optionally of one target, one step, from a day."""
        where, params = ["user_id = ?"], [validate_id(user_id, "user_id")]
        if target_id is not None:
            where.append("target_id = ?")
            params.append(validate_id(target_id, "memory_id"))
        if step is not None:
            if step not in STEPS:
                raise InvalidInput("step", f"must be one of {STEPS}, got {step!r}")
            where.append("step = ?")
            params.append(step)
        if since_day is not None:
            where.append("day >= ?")
            params.append(int(since_day))
        with self.db.read() as con:
            rows = con.execute(f"SELECT {', '.join(_FIELDS)} FROM {UNDO} WHERE {' AND '.join(where)} "
                               "ORDER BY ts, day, target_id, undo_id", params).fetchall()
        return [{**dict(zip(_FIELDS, r)), "prior": json.loads(r[6])} for r in rows]

    def count(self, user_id: str | None = None) -> int:
        where, params = ("", []) if user_id is None else (" WHERE user_id = ?", [validate_id(user_id, "user_id")])
        with self.db.read() as con:
            return int(con.execute(f"SELECT count(*) FROM {UNDO}{where}", params).fetchone()[0])

    def purge(self, before_ts: float) -> int:
        """Drop entries applied before ``before_ts`` (out of the undo window); how many went."""
        with self.db.tx() as con:
            gone = con.execute(f"DELETE FROM {UNDO} WHERE ts < ? RETURNING undo_id", [float(before_ts)]).fetchall()
        return len(gone)

    def restore_memories(self, user_id: str, priors: Sequence[Mapping[str, Any]], consumed: Sequence[str],
                         overrides: Mapping[str, Any]) -> list[str]:
        """Put each memory back as ``priors`` hold it (a row still there is updated, a deleted one inserted again,
        its forgotten mark dropped and its relations re-added where both ends exist), ``overrides`` set on top;
        the ``consumed`` entries go, all in one transaction. Returns the memory ids restored."""
        user_id = validate_id(user_id, "user_id")
        restored: list[str] = []
        with self.db.tx(touches=(user_id,)) as con:
            for prior in priors:
                if prior["user_id"] != user_id:
                    raise InvalidInput("undo", "an entry of another user")  # never: entries are read per user
                memory_id = validate_id(prior["memory_id"], "memory_id")
                values = {k: v for k, v in prior.items() if k not in (*_KEPT, *_NOT_COLUMNS)} | dict(overrides)
                there = con.execute(f"SELECT 1 FROM {MEMORIES} WHERE user_id = ? AND memory_id = ?",
                                    [user_id, memory_id]).fetchone()
                if there:
                    con.execute(f"UPDATE {MEMORIES} SET {', '.join(f'{k} = ?' for k in values)} "
                                "WHERE user_id = ? AND memory_id = ?", [*values.values(), user_id, memory_id])
                else:
                    columns = ["memory_id", "user_id", *values]
                    con.execute(f"INSERT INTO {MEMORIES} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                                [memory_id, user_id, *values.values()])
                    con.execute(f"DELETE FROM {FORGOTTEN} WHERE user_id = ? AND memory_id = ?", [user_id, memory_id])
                for src, dst, kind, score, created in prior.get("relations", []):
                    con.execute(
                        f"INSERT INTO {RELATIONS} SELECT ?::VARCHAR, ?::VARCHAR, ?::VARCHAR, ?::VARCHAR, ?::DOUBLE PRECISION, ?::BIGINT WHERE (SELECT count(*) FROM {MEMORIES} "
                        "WHERE user_id = ? AND memory_id IN (?::VARCHAR, ?::VARCHAR)) = 2 AND NOT EXISTS (SELECT 1 FROM "
                        f"{RELATIONS} WHERE user_id = ? AND kind = ? AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?)))",
                        [user_id, src, dst, kind, float(score), int(created), user_id, src, dst, user_id, kind, src, dst,
                         dst, src])
                if prior.get(FOLDED):  # a merge undone: the survivor no longer derives from the folded ones
                    con.execute(f"DELETE FROM {RELATIONS} WHERE user_id = ? AND src = ? AND kind = 'derived_from' "
                                "AND dst IN (SELECT unnest(?::VARCHAR[]))", [user_id, memory_id, _ids(prior[FOLDED], "memory_id")])
                restored.append(memory_id)
            self.consume(con, user_id, consumed)
        return restored

    def restore_facts(self, user_id: str, item_ids: Sequence[str], consumed: Sequence[str], now: float) -> int:
        """Remember forgotten facts again as if just used (their low-activity mark cleared, last access ``now``), owed
        to the tiers; the ``consumed`` entries go. Returns the facts brought back."""
        user_id = validate_id(user_id, "user_id")
        with self.db.tx(touches=(user_id,)) as con:
            back = con.execute(
                f"UPDATE {KNOWLEDGE} SET forgotten_at = NULL, low_activity_since = NULL, last_access = ?, "
                "tiers_synced = false WHERE user_id = ? AND item_id IN (SELECT unnest(?::VARCHAR[])) "
                "AND forgotten_at IS NOT NULL RETURNING item_id", [float(now), user_id, _ids(item_ids, "item_id")]).fetchall()
            self.consume(con, user_id, consumed)
        return len(back)

    def forget(self, user_id: str, target_ids: Sequence[str]) -> None:
        """Every entry of these memories (or lineages) gone, in a transaction of its own or the caller's:
        retention removed what they would put back."""
        user_id = validate_id(user_id, "user_id")
        with self.db.tx(touches=(user_id,)) as con:
            self.drop(con, user_id, target_ids)

    @staticmethod
    def drop(con, user_id: str, target_ids: Sequence[str]) -> None:
        """Inside the caller's transaction: every entry of these memories (or facts, or lineages), gone for good
        with them, and every entry that would bring their text back: a memory merged into one of them, a forgotten
        procedure a version of which one of them taught."""
        if not target_ids:
            return
        gone = _ids(target_ids, "memory_id")
        con.execute(f"DELETE FROM {UNDO} WHERE user_id = ? AND target_id IN (SELECT unnest(?::VARCHAR[]))",
                    [user_id, gone])
        held = con.execute(f"SELECT undo_id, prior FROM {UNDO} WHERE user_id = ? AND step IN ('merge', 'procedure')",
                           [user_id]).fetchall()
        ids = set(gone)
        MemoryUndoTable.consume(con, user_id, [
            undo_id for undo_id, prior in held if (p := json.loads(prior)).get(MERGED_INTO) in ids
            or any(ids & set(v.get("episode_ids") or ()) for v in p.get("versions", ()))])

    @staticmethod
    def consume(con, user_id: str, undo_ids: Sequence[str]) -> None:
        """Inside the caller's transaction: these entries used up by a restore."""
        if undo_ids:
            con.execute(f"DELETE FROM {UNDO} WHERE user_id = ? AND undo_id IN (SELECT unnest(?::VARCHAR[]))",
                        [user_id, list(undo_ids)])
