"""Durable items of the LangGraph store (``lumina_memory.stores.langgraph_store``) in an embedded DuckDB file.

One row per (namespace, key): the JSON value, its timestamps, its time-to-live (``ttl_minutes``, and
``expires_at`` in epoch seconds; NULL: never expires), and what the search channels need — the tokens of
its indexed text (keyword channel) and a hash of that text, so a vector hit computed from an older value of
the item is recognised and ignored. The file is ``<data_dir>/store.duckdb``, beside the
archive, so it shares the data directory's one-process rule without sharing the archive's connection.

All SQL of the store is here; every value travels as a ``?`` parameter.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from .duckdb_connection import GuardedConnection

STORE_FILENAME = "store.duckdb"
ITEMS_TABLE = "lg_store_items"
SEP = "."  # LangGraph forbids '.' inside namespace labels, so joining with it is unambiguous

_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {ITEMS_TABLE} (
        item_id VARCHAR PRIMARY KEY,
        ns_path VARCHAR NOT NULL,
        namespace VARCHAR[] NOT NULL,
        "key" VARCHAR NOT NULL,
        value VARCHAR NOT NULL,
        tokens VARCHAR[] NOT NULL,
        index_hash VARCHAR NOT NULL,
        created_at DOUBLE NOT NULL,
        updated_at DOUBLE NOT NULL,
        expires_at DOUBLE,
        ttl_minutes DOUBLE)""",
    f"CREATE INDEX IF NOT EXISTS {ITEMS_TABLE}_ns_idx ON {ITEMS_TABLE} (ns_path)",
    # A store file written before items had a TTL gets the columns (NULL: the item never expires).
    f"ALTER TABLE {ITEMS_TABLE} ADD COLUMN IF NOT EXISTS expires_at DOUBLE",
    f"ALTER TABLE {ITEMS_TABLE} ADD COLUMN IF NOT EXISTS ttl_minutes DOUBLE",
)
_COLS = ("item_id", "ns_path", "namespace", '"key"', "value", "tokens", "index_hash", "created_at", "updated_at",
         "expires_at", "ttl_minutes")
_TYPES = ("VARCHAR[]", "VARCHAR[]", "VARCHAR[][]", "VARCHAR[]", "VARCHAR[]", "VARCHAR[][]", "VARCHAR[]", "DOUBLE[]",
          "DOUBLE[]", "DOUBLE[]", "DOUBLE[]")
_SELECT = f"SELECT {', '.join(_COLS)} FROM {ITEMS_TABLE}"
_UPSERT = (
    f"INSERT INTO {ITEMS_TABLE} ({', '.join(_COLS)}) "
    f"SELECT * FROM (SELECT "
    + ", ".join(f"unnest(?::{t}) AS c{i}" for i, t in enumerate(_TYPES))
    + ") ON CONFLICT (item_id) DO UPDATE SET value = excluded.value, tokens = excluded.tokens, "
    "index_hash = excluded.index_hash, updated_at = excluded.updated_at, expires_at = excluded.expires_at, "
    "ttl_minutes = excluded.ttl_minutes"
)
# Everything under a prefix: the namespace itself or any namespace below it.
_UNDER = "(? = '' OR ns_path = ? OR starts_with(ns_path, ? || '.'))"
# Not expired at a time (a parameter): TTLConfig's omit_expired hides such items before a sweep removes them.
_ALIVE = "(expires_at IS NULL OR expires_at > ?)"


def _alive(alive_at: float | None) -> tuple[str, list[Any]]:
    """The SQL condition (with its parameters) keeping items alive at ``alive_at``; None: every item."""
    return ("", []) if alive_at is None else (f" AND {_ALIVE}", [alive_at])


@dataclass(frozen=True)
class Row:
    item_id: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    index_hash: str
    created_at: float
    updated_at: float
    expires_at: float | None = None
    ttl_minutes: float | None = None


@dataclass(frozen=True)
class NewRow:
    item_id: str
    namespace: tuple[str, ...]
    key: str
    value_json: str
    tokens: list[str]
    index_hash: str
    ttl_minutes: float | None = None  # None: never expires


def ns_path(namespace: Sequence[str]) -> str:
    return SEP.join(namespace)


def _row(r: Sequence[Any]) -> Row:
    return Row(r[0], tuple(r[2]), r[3], json.loads(r[4]), r[6], float(r[7]), float(r[8]), r[9], r[10])


class DuckDBItems:
    """The store's item table. One connection, serialised by a lock, one transaction per write."""

    backend = "duckdb"

    def __init__(self, location: str | os.PathLike[str] = ":memory:"):
        if str(location) == ":memory:":
            self.database, data_dir = ":memory:", ":memory:"
        else:
            path = Path(location).expanduser().resolve()
            if path.suffix not in (".duckdb", ".db"):
                path = path / STORE_FILENAME
            path.parent.mkdir(parents=True, exist_ok=True)
            self.database, data_dir = str(path), str(path.parent)
        self._db = GuardedConnection(self.database, data_dir, "store", _SCHEMA)

    # --- writes --------------------------------------------------------------------------------------
    def write(self, puts: Sequence[NewRow], deletes: Sequence[str], now: float | None = None) -> None:
        """Upsert ``puts`` (created_at kept on update; the TTL is the put's, counted from ``now``) and delete
        ``deletes`` (item ids) in one transaction. The caller passes each item id at most once."""
        now = time.time() if now is None else now
        with self._db.tx() as con:
            if deletes:
                con.execute(f"DELETE FROM {ITEMS_TABLE} WHERE item_id IN (SELECT unnest(?::VARCHAR[]))", [list(deletes)])
            if puts:
                con.execute(
                    _UPSERT,
                    [
                        [p.item_id for p in puts],
                        [ns_path(p.namespace) for p in puts],
                        [list(p.namespace) for p in puts],
                        [p.key for p in puts],
                        [p.value_json for p in puts],
                        [p.tokens for p in puts],
                        [p.index_hash for p in puts],
                        [now] * len(puts),
                        [now] * len(puts),
                        [None if p.ttl_minutes is None else now + 60.0 * p.ttl_minutes for p in puts],
                        [p.ttl_minutes for p in puts],
                    ],
                )

    # --- time to live -------------------------------------------------------------------------------
    def refresh(self, item_ids: Sequence[str], now: float, alive_at: float | None = None) -> None:
        """Restart the TTL of ``item_ids`` (those that have one) at ``now``; ``alive_at``: only items not
        yet expired then (an expired item hidden from the reader is not brought back by the read)."""
        if not item_ids:
            return
        alive, params = _alive(alive_at)
        with self._db.tx() as con:
            con.execute(
                f"UPDATE {ITEMS_TABLE} SET expires_at = ? + 60.0 * ttl_minutes "
                f"WHERE item_id IN (SELECT unnest(?::VARCHAR[])) AND ttl_minutes IS NOT NULL{alive}",
                [now, list(item_ids), *params],
            )

    def expired(self, now: float, limit: int) -> list[Row]:
        """Up to ``limit`` items whose TTL ran out at or before ``now``, the longest expired first."""
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT} WHERE expires_at <= ? ORDER BY expires_at LIMIT ?",
                               [now, int(limit)]).fetchall()
        return [_row(r) for r in rows]

    # --- reads ---------------------------------------------------------------------------------------
    # ``alive_at`` (every read): when given, items expired at that time are left out.
    def get(self, item_ids: Sequence[str], alive_at: float | None = None) -> dict[str, Row]:
        if not item_ids:
            return {}
        alive, params = _alive(alive_at)
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT} WHERE item_id IN (SELECT unnest(?::VARCHAR[])){alive}",
                               [list(item_ids), *params]).fetchall()
        return {r[0]: _row(r) for r in rows}

    def under(self, prefix: Sequence[str], limit: int | None = None, offset: int = 0,
              alive_at: float | None = None) -> list[Row]:
        """Items in ``prefix`` or below it, most recently updated first (ties: namespace, key)."""
        p = ns_path(prefix)
        alive, alive_params = _alive(alive_at)
        sql = f"{_SELECT} WHERE {_UNDER}{alive} ORDER BY updated_at DESC, ns_path, \"key\""
        params: list[Any] = [p, p, p, *alive_params]
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        with self._db.read() as con:
            return [_row(r) for r in con.execute(sql, params).fetchall()]

    def keyword(self, prefix: Sequence[str], terms: Sequence[str], limit: int,
                alive_at: float | None = None) -> tuple[list[tuple[Row, list[str]]], dict[str, int], int]:
        """Items under ``prefix`` sharing a term with ``terms`` (most shared first), each with the terms
        it has; plus each term's document frequency under the prefix and the number of items there."""
        p = ns_path(prefix)
        terms = list(dict.fromkeys(terms))
        alive, ap = _alive(alive_at)
        with self._db.read() as con:
            total = con.execute(f"SELECT count(*) FROM {ITEMS_TABLE} WHERE {_UNDER}{alive}", [p, p, p, *ap]).fetchone()
            if not terms:
                return [], {}, int(total[0]) if total else 0
            df = con.execute(
                f"SELECT t, count(*) FROM (SELECT unnest(list_distinct(list_intersect(tokens, ?::VARCHAR[]))) AS t "
                f"FROM {ITEMS_TABLE} WHERE {_UNDER}{alive}) GROUP BY t",
                [terms, p, p, p, *ap],
            ).fetchall()
            rows = con.execute(
                f"SELECT {', '.join(_COLS)}, list_distinct(list_intersect(tokens, ?::VARCHAR[])) AS hit "
                f"FROM {ITEMS_TABLE} WHERE {_UNDER}{alive} AND list_has_any(tokens, ?::VARCHAR[]) "
                f"ORDER BY len(hit) DESC, updated_at DESC LIMIT ?",
                [terms, p, p, p, *ap, terms, int(limit)],
            ).fetchall()
        return [(_row(r), list(r[-1])) for r in rows], {t: int(n) for t, n in df}, int(total[0]) if total else 0

    # --- keyword terms of another tokenizer version ---------------------------------------------------
    def unstamped(self, stamp: str, limit: int) -> list[Row]:
        """Up to ``limit`` indexed items whose tokens lack ``stamp`` (tokenised by an earlier version)."""
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT} WHERE index_hash <> '' AND NOT list_contains(tokens, ?) LIMIT ?",
                               [stamp, int(limit)]).fetchall()
        return [_row(r) for r in rows]

    def set_tokens(self, tokens: dict[str, list[str]]) -> None:
        """Replace the tokens of items (item id -> tokens); nothing else changes, updated_at included."""
        if not tokens:
            return
        with self._db.tx() as con:
            con.execute(
                f"UPDATE {ITEMS_TABLE} SET tokens = t.tokens FROM (SELECT unnest(?::VARCHAR[]) AS item_id, "
                f"unnest(?::VARCHAR[][]) AS tokens) AS t WHERE {ITEMS_TABLE}.item_id = t.item_id",
                [list(tokens), list(tokens.values())],
            )

    def namespaces(self, alive_at: float | None = None) -> list[tuple[str, ...]]:
        alive, params = _alive(alive_at)
        with self._db.read() as con:
            rows = con.execute(f"SELECT DISTINCT namespace FROM {ITEMS_TABLE} WHERE TRUE{alive}", params).fetchall()
        return [tuple(r[0]) for r in rows]

    def count(self) -> int:
        with self._db.read() as con:
            row = con.execute(f"SELECT count(*) FROM {ITEMS_TABLE}").fetchone()
        return int(row[0]) if row else 0

    def containing(self, text: str) -> list[Row]:
        """Every item whose namespace path (labels joined by '.') or key contains ``text``: one scan of two
        columns (stores.lgstore_ids finds the items an earlier id scheme named ambiguously)."""
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {', '.join(_COLS)} FROM {ITEMS_TABLE} WHERE contains(ns_path, ?) OR contains(\"key\", ?)",
                [text, text],
            ).fetchall()
        return [_row(r) for r in rows]

    # --- backups and erasure (L10, L11) --------------------------------------------------------------
    def with_label(self, label: str) -> list[tuple[tuple[str, ...], str]]:
        """(namespace, key) of every item whose namespace has ``label`` as one of its labels."""
        with self._db.read() as con:
            rows = con.execute(
                f'SELECT namespace, "key" FROM {ITEMS_TABLE} WHERE list_contains(namespace, ?)', [label]
            ).fetchall()
        return [(tuple(r[0]), r[1]) for r in rows]

    def dump_rows(self) -> list[dict[str, Any]]:
        """Every row with all its columns (a backup's records)."""
        names = [c.strip('"') for c in _COLS]
        with self._db.read() as con:
            rows = con.execute(_SELECT).fetchall()
        return [dict(zip(names, [list(v) if isinstance(v, tuple) else v for v in r])) for r in rows]

    def load_rows(self, rows: Sequence[dict[str, Any]]) -> int:
        """Write rows of ``dump_rows`` back as they were (timestamps and TTLs included; a backup made before
        items had a TTL restores them without one)."""
        if not rows:
            return 0
        names = [c.strip('"') for c in _COLS]
        with self._db.tx() as con:
            con.execute(
                f"INSERT OR REPLACE INTO {ITEMS_TABLE} ({', '.join(_COLS)}) SELECT * FROM (SELECT "
                + ", ".join(f"unnest(?::{t}) AS c{i}" for i, t in enumerate(_TYPES)) + ")",
                [[r.get(n) for r in rows] for n in names],
            )
        return len(rows)

    def rewrite(self) -> None:
        """Copy the table into a fresh file (deleted items linger in DuckDB's freed blocks)."""
        self._db.rewrite()

    def raw_paths(self) -> list[Path]:
        return [] if self.database == ":memory:" else [Path(self.database), Path(self.database + ".wal")]

    # --- lifecycle -----------------------------------------------------------------------------------
    def close(self) -> None:
        self._db.close()
