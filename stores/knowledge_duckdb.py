"""Knowledge items (A4 semantic memory, A7 history) in the archive database, as the source of truth.

One row per item ever extracted: a fact's whole history stays (a superseded item keeps its row with
``valid_to`` and ``superseded_by``; a merged one points at its survivor). Rows hold what
``lumina_memory.nodes.knowledge.models.KnowledgeItem`` holds, plus the user and the episodes (segment ids) the item came
from. ``stores`` imports nothing from ``nodes``: rows go in and out as plain dicts.

The table has a ``user_id`` column, so erasure, backups and the residue scan find it in the archive's
catalogue like the archive's own tables (stores.places.archive). Writes run inside the archive's
transaction when the caller opened one (the knowledge of a segment commits with the segment).

The derived tiers (the knowledge vectors, the graph's Knowledge nodes) are written after the commit, never
inside it: ``tiers_synced`` says which rows they already mirror. Every upsert clears it, so a crash or a
store that is down between the commit and the tiers' writes leaves the row owed (nodes.knowledge.tiers).
It is not one of ``COLUMNS``: rows read here are the item and its sources, not the tiers' bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from .episode_lists import FROM_ANY, FROM_ONLY, WITHOUT
from .errors import InvalidInput
from .ids import validate_id
from .memories_duckdb import MEMORIES
from .sql_connection import SqlConnection
from .texts import check_texts
from .use_counts import RecallReads

KNOWLEDGE = "knowledge_items"
STATUSES = ("current", "superseded", "merged", "coexisting")

# (column, SQL type DuckDB and PostgreSQL share); the order is the row order of every statement below.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("item_id", "VARCHAR"), ("user_id", "VARCHAR"), ("subject", "VARCHAR"), ("attribute", "VARCHAR"),
    ("value", "VARCHAR"), ("value_key", "VARCHAR"), ("polarity", "VARCHAR"), ("detail", "VARCHAR"),
    ("context", "VARCHAR"), ("category", "VARCHAR"), ("event_date", "DATE"), ("when_text", "VARCHAR"),
    ("text", "VARCHAR"), ("source_turn_ids", "VARCHAR[]"), ("source_ids", "VARCHAR[]"),
    ("episode_ids", "VARCHAR[]"), ("said_at", "DOUBLE PRECISION"), ("valid_from", "DOUBLE PRECISION"),
    ("valid_to", "DOUBLE PRECISION"), ("superseded_by", "VARCHAR"), ("status", "VARCHAR"), ("note", "VARCHAR"),
    ("confidence", "DOUBLE PRECISION"), ("method", "VARCHAR"), ("pattern", "VARCHAR"), ("updated_at", "DOUBLE PRECISION"),
)
# Links to other facts of the user (F6), by item id: the facts this one rests on (``derived_from``: it may no
# longer hold once one of them changes, nodes.knowledge.dependents) and the ones it contradicted when it was
# said (``contradicts``; which won is in their ``superseded_by``). Added by a later migration step, so nullable.
LINKS: tuple[tuple[str, str], ...] = (("derived_from", "VARCHAR[]"), ("contradicts", "VARCHAR[]"))
NAMES = tuple(c for c, _ in (*COLUMNS, *LINKS))
_NULLABLE = {"event_date", "valid_to", "superseded_by", *(c for c, _ in LINKS)}
_ID_LISTS = ("source_turn_ids", "episode_ids", "derived_from", "contradicts")

SYNCED = "tiers_synced"

# Forgetting (the notes' synaptic homeostasis): recall counts an item's accesses, the daily step marks an item
# idle too long as of low activity, the monthly step forgets one that stayed so (its tiers drop it; the row,
# the record, stays with ``forgotten_at``). Not in COLUMNS: learning rewrites an item's row without knowing
# its activity. Nullable for the same reason as ``tiers_synced``.
ACTIVITY: tuple[tuple[str, str], ...] = (
    ("access_count", "BIGINT DEFAULT 0"), ("last_access", "DOUBLE PRECISION"),
    ("low_activity_since", "DOUBLE PRECISION"), ("forgotten_at", "DOUBLE PRECISION"))
_DAY = 86_400.0

SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {KNOWLEDGE} ({', '.join(
        f"{c} {t}{'' if c in _NULLABLE else ' NOT NULL'}{' PRIMARY KEY' if c == 'item_id' else ''}"
        for c, t in COLUMNS)}, {SYNCED} BOOLEAN NOT NULL DEFAULT false)""",
    f"CREATE INDEX IF NOT EXISTS {KNOWLEDGE}_user_idx ON {KNOWLEDGE} (user_id)",
    # A table made before the tiers existed gets the column (its rows then owe the tiers: false). DuckDB 2.0
    # refuses NOT NULL in ADD COLUMN IF NOT EXISTS, and any ALTER of a NOT NULL column on an indexed table,
    # so a migrated table's column is nullable: every write here sets it, and reads take NULL as false.
    f"ALTER TABLE {KNOWLEDGE} ADD COLUMN IF NOT EXISTS {SYNCED} BOOLEAN DEFAULT false",
    *(f"ALTER TABLE {KNOWLEDGE} ADD COLUMN IF NOT EXISTS {c} {t}" for c, t in ACTIVITY),
)
LINKS_SCHEMA = tuple(f"ALTER TABLE {KNOWLEDGE} ADD COLUMN IF NOT EXISTS {c} {t}" for c, t in LINKS)
_UNSYNCED = f"{SYNCED} IS NOT TRUE"
_SAME_OWNER = f"{KNOWLEDGE}.user_id = excluded.user_id"
_READ = f"{', '.join(NAMES)}, forgotten_at"
"""Every read returns the item and when it was forgotten (None: remembered)."""


# The item is kept by forgetting: a current fact about a protected subject (what the profile shows), or one
# learned from a memory the user protected (F8). One parameter: the protected subjects. array_position, not
# ``m.memory_id = ANY(..)``: DuckDB plans ANY over a column as a subquery of its own, four times slower inside
# this correlated EXISTS (12 ms against 3 ms over 6,000 items).
_PROTECTED = (f"((status IN ('current', 'coexisting') AND valid_to IS NULL AND subject = ANY(?::VARCHAR[])) "
              f"OR EXISTS (SELECT 1 FROM {MEMORIES} m WHERE m.user_id = {KNOWLEDGE}.user_id AND m.protected "
              f"AND array_position({KNOWLEDGE}.episode_ids, m.memory_id) IS NOT NULL))")


def _check(row: Mapping[str, Any]) -> None:
    validate_id(row["user_id"], "user_id")
    validate_id(row["item_id"], "item_id")
    for field in _ID_LISTS:
        for value in row.get(field) or ():
            validate_id(value, field)
    if row["status"] not in STATUSES:
        raise InvalidInput("status", f"must be one of {STATUSES}, got {row['status']!r}")
    missing = [c for c in NAMES if c not in row and c not in _NULLABLE]
    if missing:
        raise InvalidInput("knowledge item", f"missing fields {missing}")
    check_texts(row, NAMES)


class KnowledgeTable(RecallReads):
    """The knowledge items on the archive's connection (same file, same transactions as the segments)."""

    use_ids = "item_ids"

    def __init__(self, db: SqlConnection):
        self.db = db
        self._keep_recall_reads(db)
        db.migrate("knowledge", [SCHEMA, LINKS_SCHEMA])

    def upsert(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert or replace items by ``item_id`` (an item's status, validity and sources change as newer
        facts arrive; its id never does). Returns how many rows were written."""
        if not rows:
            return 0
        for row in rows:
            _check(row)
        owners = {r["item_id"]: r["user_id"] for r in rows}
        placeholders = ", ".join("?" for _ in NAMES)
        # An item written again (new status, validity or sources) is owed to the derived tiers again.
        # New evidence (said again later, or another source) makes a forgotten or idle item active again; a
        # change of status alone (superseded, merged) does not. SET reads the row as it was; the stored row's
        # columns are named with the table (PostgreSQL finds a bare name ambiguous beside excluded's).
        fresh = f"(excluded.said_at > {KNOWLEDGE}.said_at OR NOT {KNOWLEDGE}.episode_ids @> excluded.episode_ids)"
        updates = ", ".join([*(f"{c} = excluded.{c}" for c in NAMES if c not in ("item_id", "user_id")),
                             f"{SYNCED} = false",
                             *(f"{c} = CASE WHEN {fresh} THEN NULL ELSE {KNOWLEDGE}.{c} END"
                               for c in ("forgotten_at", "low_activity_since"))])
        with self.db.tx(touches=set(owners.values())) as con:
            # An item id belongs to one user forever: a row of another user's id is refused, never replaced
            # (and one another process wrote meanwhile is left as it is: _SAME_OWNER).
            clash = con.execute(
                f"SELECT item_id, user_id FROM {KNOWLEDGE} WHERE item_id IN (SELECT unnest(?::VARCHAR[]))",
                [list(owners)]).fetchall()
            for item_id, owner in clash:
                if owners[item_id] != owner:
                    raise InvalidInput("item_id", f"{item_id!r} belongs to another user")
            con.executemany(
                f"INSERT INTO {KNOWLEDGE} ({', '.join(NAMES)}, {SYNCED}) VALUES ({placeholders}, false) "
                f"ON CONFLICT (item_id) DO UPDATE SET {updates} WHERE {_SAME_OWNER}",
                [[_value(r, c) for c in NAMES] for r in rows])
        return len(rows)

    def items(self, user_id: str, *, history: bool = False, subject: str | None = None,
              attribute: str | None = None, item_ids: Sequence[str] | None = None,
              remembered: bool = False) -> list[dict[str, Any]]:
        """The user's items, oldest statement first: current and coexisting ones still remembered, or every
        one with ``history`` (forgotten ones too, unless ``remembered``); optionally about one subject /
        attribute, or exactly ``item_ids``. Each row has ``forgotten_at`` (None: remembered)."""
        self.flush_uses()  # listings show every use
        where, params = ["user_id = ?"], [validate_id(user_id, "user_id")]
        if not history and item_ids is None:
            where.append("status IN ('current', 'coexisting') AND valid_to IS NULL AND forgotten_at IS NULL")
        if remembered:
            where.append("forgotten_at IS NULL")
        if subject is not None:
            where.append("subject = ?")
            params.append(subject)
        if attribute is not None:
            where.append("attribute = ?")
            params.append(attribute)
        if item_ids is not None:
            where.append("item_id IN (SELECT unnest(?::VARCHAR[]))")
            params.append([validate_id(i, "item_id") for i in item_ids])
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT {_READ} FROM {KNOWLEDGE} WHERE {' AND '.join(where)} "
                "ORDER BY said_at, item_id", params).fetchall()
        return [dict(zip((*NAMES, "forgotten_at"), r)) for r in rows]

    def count(self, user_id: str) -> int:
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {KNOWLEDGE} WHERE user_id = ?",
                               [validate_id(user_id, "user_id")]).fetchone()
        return int(n)

    def forget_episodes(self, user_id: str, episode_ids: Sequence[str]) -> int:
        """An episode deleted from every tier (``lumina-memory forget``) takes the items only it supports;
        items with other sources keep them. Returns how many items went."""
        user_id = validate_id(user_id, "user_id")
        gone = [validate_id(e, "episode_ids") for e in episode_ids]
        if not gone:
            return 0
        with self.db.tx(touches=(user_id,)) as con:
            n = len(con.execute(f"DELETE FROM {KNOWLEDGE} WHERE user_id = ? AND {FROM_ANY} AND {FROM_ONLY} "
                                "RETURNING item_id", [user_id, gone, gone]).fetchall())
            # The survivors' sources changed: the tiers restate them at their next sync.
            con.execute(
                f"UPDATE {KNOWLEDGE} SET episode_ids = {WITHOUT}, {SYNCED} = false WHERE user_id = ? AND {FROM_ANY}",
                [gone, user_id, gone])
        return n

    def of_episodes(self, user_id: str, episode_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The user's items (any status) learned from any of these episodes, oldest statement first."""
        user_id = validate_id(user_id, "user_id")
        wanted = [validate_id(e, "episode_ids") for e in episode_ids]
        if not wanted:
            return []
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT {', '.join(NAMES)} FROM {KNOWLEDGE} WHERE user_id = ? AND {FROM_ANY} ORDER BY said_at, item_id",
                [user_id, wanted]).fetchall()
        return [dict(zip(NAMES, r)) for r in rows]

    def recall_items(self, user_id: str) -> list[dict[str, Any]]:
        """``items(user_id, history=True, remembered=True)`` as recall reads it on every query: kept until the
        user's write stamp moves (stores.stamped_cache; use counts may lag, facts never do)."""
        user_id = validate_id(user_id, "user_id")
        return self._recall_cache.get(user_id, "items", lambda: self.items(user_id, history=True, remembered=True))

    # --- forgetting (the notes' daily downscaling and monthly forgetting) -----------------------------
    def flush_uses(self) -> int:
        """Write the pending uses (of every user); returns how many items they touched."""
        users, items, counts, lasts = self._uses.drain()
        if not items:
            return 0
        # Use is no input of any in-process index: the user's write stamp stays (a recall would
        # otherwise make the next one re-check the archive).
        with self.db.tx() as con:
            rows = con.execute(
                f"UPDATE {KNOWLEDGE} SET access_count = coalesce(access_count, 0) + v.n, "
                "last_access = greatest(coalesce(last_access, v.last), v.last), low_activity_since = NULL "
                "FROM (SELECT unnest(?::VARCHAR[]) AS u, unnest(?::VARCHAR[]) AS i, unnest(?::BIGINT[]) AS n, "
                f"unnest(?::DOUBLE PRECISION[]) AS last) v WHERE {KNOWLEDGE}.user_id = v.u AND {KNOWLEDGE}.item_id = v.i "
                "AND forgotten_at IS NULL RETURNING item_id", [users, items, counts, lasts]).fetchall()
        return len(rows)

    def mark_low_activity(self, now: float, idle_days: float, min_accesses: int,
                          protected_subjects: Sequence[str], user_id: str | None = None) -> int:
        """Items not accessed for ``idle_days`` (since they were said, if never) and accessed fewer than
        ``min_accesses`` times, not protected, become of low activity as of ``now``. Returns how many."""
        self.flush_uses()
        where = ["forgotten_at IS NULL", "low_activity_since IS NULL",
                 "coalesce(last_access, said_at) < ?", "coalesce(access_count, 0) < ?", f"NOT {_PROTECTED}"]
        params: list[Any] = [float(now) - idle_days * _DAY, int(min_accesses), list(protected_subjects)]
        if user_id is not None:
            where.append("user_id = ?")
            params.append(validate_id(user_id, "user_id"))
        with self.db.tx() as con:  # no reader of recall looks at activity
            rows = con.execute(f"UPDATE {KNOWLEDGE} SET low_activity_since = ? WHERE {' AND '.join(where)} "
                               "RETURNING item_id", [float(now), *params]).fetchall()
        return len(rows)

    def low_activity_ids(self, user_id: str) -> set[str]:
        with self.db.read() as con:
            rows = con.execute(f"SELECT item_id FROM {KNOWLEDGE} WHERE user_id = ? AND low_activity_since IS NOT NULL "
                               "AND forgotten_at IS NULL", [validate_id(user_id, "user_id")]).fetchall()
        return {r[0] for r in rows}

    def users_with_low_activity(self) -> list[str]:
        with self.db.read() as con:
            return [r[0] for r in con.execute(
                f"SELECT DISTINCT user_id FROM {KNOWLEDGE} WHERE low_activity_since IS NOT NULL AND forgotten_at IS NULL "
                "ORDER BY user_id").fetchall()]

    def forget_idle(self, now: float, after_days: float, protected_subjects: Sequence[str],
                    user_id: str | None = None) -> list[tuple[str, str]]:
        """Items of low activity for ``after_days`` and not accessed since, still not protected, are forgotten
        as of ``now``: the row stays (the record), the tiers owe their removal. Returns (user, item_id)."""
        self.flush_uses()
        where = ["forgotten_at IS NULL", "low_activity_since IS NOT NULL", "low_activity_since <= ?",
                 "(last_access IS NULL OR last_access < low_activity_since)", f"NOT {_PROTECTED}"]
        params: list[Any] = [float(now) - after_days * _DAY, list(protected_subjects)]
        if user_id is not None:
            where.append("user_id = ?")
            params.append(validate_id(user_id, "user_id"))
        with self.db.read() as con:
            due = con.execute(f"SELECT user_id, item_id FROM {KNOWLEDGE} WHERE {' AND '.join(where)}", params).fetchall()
        if not due:
            return []
        # Recall's caches key on the users whose rows a transaction touched: name them.
        with self.db.tx(touches={u for u, _ in due}) as con:
            rows = con.execute(
                f"UPDATE {KNOWLEDGE} SET forgotten_at = ?, {SYNCED} = false WHERE {' AND '.join(where)} "
                "AND item_id IN (SELECT unnest(?::VARCHAR[])) RETURNING user_id, item_id",
                [float(now), *params, [i for _, i in due]]).fetchall()
        return sorted((str(u), str(i)) for u, i in rows)

    # --- retention (S7: nodes.retention) ---------------------------------------------------------------
    def expire_said_before(self, cutoff: float, now: float) -> dict[str, list[str]]:
        """Items, of any status, last said before ``cutoff`` (a restatement merged into an item is a saying
        of it) are marked forgotten as of ``now`` if they were not, and owed to the tiers: recall and the
        profile stop showing them at once, and a sync would drop their points and nodes. Returns them per
        user, those an earlier run marked and could not delete included."""
        last_said = (f"SELECT k.user_id, k.item_id FROM {KNOWLEDGE} k LEFT JOIN {KNOWLEDGE} m "
                     "ON m.user_id = k.user_id AND m.superseded_by = k.item_id AND m.status = 'merged' "
                     "GROUP BY k.user_id, k.item_id, k.said_at HAVING greatest(k.said_at, coalesce(max(m.said_at), "
                     "k.said_at)) < ?")
        with self.db.read() as con:
            due = con.execute(last_said, [float(cutoff)]).fetchall()
        if not due:
            return {}
        by_user: dict[str, list[str]] = {}
        for user, item in due:
            by_user.setdefault(str(user), []).append(str(item))
        with self.db.tx(touches=set(by_user)) as con:
            con.execute(f"UPDATE {KNOWLEDGE} SET forgotten_at = coalesce(forgotten_at, ?), {SYNCED} = false "
                        "WHERE (user_id, item_id) IN (SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]))",
                        [float(now), [u for u, _ in due], [i for _, i in due]])
        return {u: sorted(ids) for u, ids in sorted(by_user.items())}

    def delete_items(self, user_id: str, item_ids: Sequence[str]) -> int:
        """Remove these items' rows (history included: retention keeps no record). Returns rows removed."""
        user_id = validate_id(user_id, "user_id")
        wanted = [validate_id(i, "item_ids") for i in item_ids]
        if not wanted:
            return 0
        with self.db.tx(touches=(user_id,)) as con:
            rows = con.execute(f"DELETE FROM {KNOWLEDGE} WHERE user_id = ? AND item_id IN (SELECT unnest(?::VARCHAR[])) "
                               "RETURNING item_id", [user_id, wanted]).fetchall()
        return len(rows)

    # --- the derived tiers' bookkeeping (nodes.knowledge.tiers) ----------------------------------------
    def unsynced(self, user_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Items the derived tiers do not mirror yet (one user's, or everyone's), by user, oldest first."""
        where, params = [_UNSYNCED], []
        if user_id is not None:
            where.append("user_id = ?")
            params.append(validate_id(user_id, "user_id"))
        tail = ""
        if limit is not None:
            tail, params = " LIMIT ?", [*params, int(limit)]
        with self.db.read() as con:
            rows = con.execute(
                f"SELECT {_READ} FROM {KNOWLEDGE} WHERE {' AND '.join(where)} "
                f"ORDER BY user_id, said_at, item_id{tail}", params).fetchall()
        return [dict(zip((*NAMES, "forgotten_at"), r)) for r in rows]

    def unsynced_count(self, user_id: str | None = None) -> int:
        where, params = [_UNSYNCED], []
        if user_id is not None:
            where.append("user_id = ?")
            params.append(validate_id(user_id, "user_id"))
        with self.db.read() as con:
            (n,) = con.execute(f"SELECT count(*) FROM {KNOWLEDGE} WHERE {' AND '.join(where)}", params).fetchone()
        return int(n)

    def mark_synced(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Mark these rows (as ``unsynced`` returned them) mirrored by the tiers — each only if it is still
        what was read: a row written again meanwhile (another status, validity or sources) stays owed.
        Returns how many were marked."""
        if not rows:
            return 0
        # One column per field, zipped by unnest. The sources are compared joined by ',' (no id holds one):
        # a list of lists does not unnest into rows on PostgreSQL.
        columns: list[list[Any]] = [[], [], [], [], [], [], []]
        for r in rows:
            for column, value in zip(columns, (
                    validate_id(r["item_id"], "item_id"), validate_id(r["user_id"], "user_id"), r["status"],
                    r["valid_to"], r["superseded_by"],
                    ",".join(validate_id(e, "episode_ids") for e in r["episode_ids"] or ()), r["updated_at"])):
                column.append(value)
        with self.db.tx(touches=set(columns[1])) as con:
            marked = con.execute(
                f"UPDATE {KNOWLEDGE} SET {SYNCED} = true FROM (SELECT unnest(?::VARCHAR[]) AS i, "
                "unnest(?::VARCHAR[]) AS u, unnest(?::VARCHAR[]) AS s, unnest(?::DOUBLE PRECISION[]) AS vt, "
                "unnest(?::VARCHAR[]) AS sb, unnest(?::VARCHAR[]) AS e, unnest(?::DOUBLE PRECISION[]) AS ua) v "
                f"WHERE {KNOWLEDGE}.item_id = v.i AND {KNOWLEDGE}.user_id = v.u AND status = v.s "
                "AND valid_to IS NOT DISTINCT FROM v.vt AND superseded_by IS NOT DISTINCT FROM v.sb "
                f"AND array_to_string(episode_ids, ',') = v.e AND updated_at = v.ua AND {_UNSYNCED} "
                "RETURNING item_id", columns).fetchall()
        return len(marked)

    def mark_unsynced(self, user_id: str) -> int:
        """Owe every item of the user to the tiers again (a repair that rebuilds them from the archive)."""
        user_id = validate_id(user_id, "user_id")
        with self.db.tx(touches=(user_id,)) as con:
            (n,) = con.execute(f"SELECT count(*) FROM {KNOWLEDGE} WHERE user_id = ?", [user_id]).fetchone()
            con.execute(f"UPDATE {KNOWLEDGE} SET {SYNCED} = false WHERE user_id = ?", [user_id])
        return int(n)


def _value(row: Mapping[str, Any], column: str) -> Any:
    value = row.get(column)
    if column in ("source_turn_ids", "source_ids", "episode_ids", "derived_from", "contradicts"):
        return list(value or ())
    if column == "event_date" and isinstance(value, str):
        return date.fromisoformat(value)
    return value
