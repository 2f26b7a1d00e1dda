"""Durable items of the LangGraph store (``lumina_memory.stores.langgraph_store``): one SQL table, on the
embedded DuckDB file or on the PostgreSQL server a deployment shares.

One row per (namespace, key): the JSON value, its timestamps, its time-to-live (``ttl_minutes``, and
``expires_at`` in epoch seconds; NULL: never expires), and what the search channels need — the tokens of
its indexed text (keyword channel) and a hash of that text, so a vector hit computed from an older value of
the item is recognised and ignored. Embedded, the table is in ``<data_dir>/store.duckdb`` (``DuckDBItems``),
beside the archive, sharing the data directory's one-process rule without sharing the archive's connection;
in server mode it is a table of the shared PostgreSQL (``SqlItems.on_postgres``), which any number of
processes read and write.

All SQL of the store is here, written once in the subset both engines share (stores.sql_connection); every
value travels as a ``?`` parameter. Rows of arrays are sent as one joined text per row and split by
``string_to_array`` in the statement: PostgreSQL's arrays are not arrays of arrays (``unnest`` of a
``VARCHAR[][]`` flattens every element, and ragged rows are refused), so a batch cannot carry them as one.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .duckdb_connection import GuardedConnection
from .sql_connection import SqlConnection

STORE_FILENAME = "store.duckdb"
ITEMS_TABLE = "lg_store_items"
COMPONENT = "store"  # the item table's schema steps in lumina_migrations
SEP = "."  # LangGraph forbids '.' inside namespace labels, so joining with it is unambiguous
TOKEN_SEP = "\x1f"  # joins a row's tokens in a batch; a token holding it (or NUL) is never stored

# Step 1 is the table as it was before migrations were numbered: idempotent on an existing file (the columns
# a store file written before items had a TTL lacks are added; NULL: the item never expires).
_STEPS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE IF NOT EXISTS {ITEMS_TABLE} (
        item_id VARCHAR PRIMARY KEY,
        ns_path VARCHAR NOT NULL,
        namespace VARCHAR[] NOT NULL,
        "key" VARCHAR NOT NULL,
        value VARCHAR NOT NULL,
        tokens VARCHAR[] NOT NULL,
        index_hash VARCHAR NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION,
        ttl_minutes DOUBLE PRECISION)""",
        f"CREATE INDEX IF NOT EXISTS {ITEMS_TABLE}_ns_idx ON {ITEMS_TABLE} (ns_path)",
        f"ALTER TABLE {ITEMS_TABLE} ADD COLUMN IF NOT EXISTS expires_at DOUBLE PRECISION",
        f"ALTER TABLE {ITEMS_TABLE} ADD COLUMN IF NOT EXISTS ttl_minutes DOUBLE PRECISION",
    ),
)
_COLS = ("item_id", "ns_path", "namespace", '"key"', "value", "tokens", "index_hash", "created_at", "updated_at",
         "expires_at", "ttl_minutes")
# A batch sends one array per column, and one joined text per row for the array columns, made back into arrays
# by the statement: the namespace from ns_path (labels hold no '.'), the tokens from their TOKEN_SEP-joined text.
_SENT = {"item_id": "VARCHAR", "ns_path": "VARCHAR", '"key"': "VARCHAR", "value": "VARCHAR", "tokens": "VARCHAR",
         "index_hash": "VARCHAR", "created_at": "DOUBLE PRECISION", "updated_at": "DOUBLE PRECISION",
         "expires_at": "DOUBLE PRECISION", "ttl_minutes": "DOUBLE PRECISION"}
_MADE = {"namespace": "string_to_array(b.ns_path, '.')",
         "tokens": "coalesce(string_to_array(nullif(b.tokens, ''), chr(31)), ARRAY[]::VARCHAR[])"}
_SELECT = f"SELECT {', '.join(_COLS)} FROM {ITEMS_TABLE}"
_ALL_UPDATED = ", ".join(f"{c} = excluded.{c}" for c in _COLS[1:])


def _upsert(updated: str) -> str:
    """Insert a batch (the columns of ``_SENT``, one array parameter each, in that order), updating ``updated``
    on a row that exists."""
    made = [_MADE.get(c, f"b.{c}") for c in _COLS]
    sent = ", ".join(f"unnest(?::{t}[]) AS {c}" for c, t in _SENT.items())
    return (f"INSERT INTO {ITEMS_TABLE} ({', '.join(_COLS)}) SELECT {', '.join(made)} FROM (SELECT {sent}) AS b "
            f"ON CONFLICT (item_id) DO UPDATE SET {updated}")


_UPSERT = _upsert("value = excluded.value, tokens = excluded.tokens, index_hash = excluded.index_hash, "
                  "updated_at = excluded.updated_at, expires_at = excluded.expires_at, "
                  "ttl_minutes = excluded.ttl_minutes")
_RESTORE = _upsert(_ALL_UPDATED)
# Everything under a prefix: the namespace itself or any namespace below it.
_UNDER = "(?::VARCHAR = '' OR ns_path = ? OR starts_with(ns_path, ?::VARCHAR || '.'))"
# Not expired at a time (a parameter): TTLConfig's omit_expired hides such items before a sweep removes them.
_ALIVE = "(expires_at IS NULL OR expires_at > ?)"
# The query terms each item under a prefix holds (tokens are distinct within a row).
_HELD = (f"(SELECT item_id, unnest(tokens) AS t FROM {ITEMS_TABLE} WHERE {{where}} AND tokens && ?::VARCHAR[]) "
         "AS held WHERE t = ANY(?::VARCHAR[])")


# A write's items held against other processes' writes (SqlItems.writing): transaction-level advisory locks on
# the items' buckets, taken in key order so two writers never deadlock. Buckets bound the locks one write takes
# (each takes a slot of the server's shared lock table); the two-integer form keeps them apart from other locks.
_ITEM_LOCK_CLASS = 0x6C73  # "ls"
_ITEM_BUCKETS = 256
_LOCK_ITEMS = ("SELECT count(pg_advisory_xact_lock(?::INTEGER, k)) FROM (SELECT unnest(?::INTEGER[]) AS k "
               "ORDER BY k) AS keys")


def _bucket(item_id: str) -> int:
    digest = hashlib.blake2b(item_id.encode("utf-8", "surrogatepass"), digest_size=4, person=b"lumina-items").digest()
    return int.from_bytes(digest, "big") % _ITEM_BUCKETS


def _alive(alive_at: float | None) -> tuple[str, list[Any]]:
    """The SQL condition (with its parameters) keeping items alive at ``alive_at``; None: every item."""
    return ("", []) if alive_at is None else (f" AND {_ALIVE}", [alive_at])


def _joined(tokens: Sequence[str]) -> str:
    """A row's tokens as one text for a batch (tokens that cannot travel so, or be stored, are left out)."""
    return TOKEN_SEP.join(t for t in tokens if t and TOKEN_SEP not in t and "\x00" not in t)


def _floats(values: Sequence[float | None]) -> list[float | None]:
    # psycopg refuses a list mixing int and float; DuckDB would take it.
    return [None if v is None else float(v) for v in values]


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


class SqlItems:
    """The store's item table over a ``SqlConnection`` (stores.sql_connection): one transaction per write.

    On PostgreSQL (``db.shared``) other processes write the same table: nothing here is kept between calls, so
    each read sees every process's committed writes."""

    def __init__(self, db: SqlConnection):
        self._db = db
        self.backend = db.dialect
        self.database = db.database
        try:
            db.migrate(COMPONENT, _STEPS)
        except BaseException:
            db.close()
            raise

    @classmethod
    def on_postgres(cls, uri: str, *, timeout: float = 10.0, pool_size: int = 4) -> "SqlItems":
        """The item table in the PostgreSQL database at ``uri`` (server mode); StoreUnavailable naming the
        ``store`` tier when it cannot be reached within ``timeout`` seconds."""
        from .pg_connection import PostgresConnection

        return cls(PostgresConnection(uri, COMPONENT, timeout=timeout, pool_size=pool_size))

    # --- writes --------------------------------------------------------------------------------------
    @contextmanager
    def writing(self, item_ids: Sequence[str]) -> Iterator[None]:
        """Hold ``item_ids`` against other processes' writes for a ``with`` block (the store's write of their
        vectors and rows): on PostgreSQL one transaction holding advisory locks on the items' buckets, which the
        block's ``write`` joins, so of two processes updating an item the second starts after the first's rows
        are committed. An embedded file has one process, whose store serialises its writes: nothing to take."""
        if not self._db.shared or not item_ids:
            yield
            return
        with self._db.tx() as con:
            con.execute(_LOCK_ITEMS, [_ITEM_LOCK_CLASS, sorted({_bucket(i) for i in item_ids})])
            yield

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
                        [p.key for p in puts],
                        [p.value_json for p in puts],
                        [_joined(p.tokens) for p in puts],
                        [p.index_hash for p in puts],
                        [float(now)] * len(puts),
                        [float(now)] * len(puts),
                        [None if p.ttl_minutes is None else now + 60.0 * p.ttl_minutes for p in puts],
                        _floats([p.ttl_minutes for p in puts]),
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
                [float(now), list(item_ids), *params],
            )

    def expired(self, now: float, limit: int) -> list[Row]:
        """Up to ``limit`` items whose TTL ran out at or before ``now``, the longest expired first."""
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT} WHERE expires_at <= ? ORDER BY expires_at, item_id LIMIT ?",
                               [float(now), int(limit)]).fetchall()
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
        where = f"{_UNDER}{alive}"
        with self._db.read() as con:
            total = con.execute(f"SELECT count(*) FROM {ITEMS_TABLE} WHERE {where}", [p, p, p, *ap]).fetchone()
            if not terms:
                return [], {}, int(total[0]) if total else 0
            held = _HELD.format(where=where)
            df = con.execute(f"SELECT t, count(*) FROM {held} GROUP BY t", [p, p, p, *ap, terms, terms]).fetchall()
            rows = con.execute(
                f"SELECT {', '.join(f'i.{c}' for c in _COLS)} FROM {ITEMS_TABLE} AS i JOIN "
                f"(SELECT item_id, count(*) AS n FROM {held} GROUP BY item_id) AS hits ON i.item_id = hits.item_id "
                f"ORDER BY hits.n DESC, i.updated_at DESC, i.item_id LIMIT ?",
                [p, p, p, *ap, terms, terms, int(limit)],
            ).fetchall()
        wanted = set(terms)
        return ([(_row(r), [t for t in r[5] if t in wanted]) for r in rows], {t: int(n) for t, n in df},
                int(total[0]) if total else 0)

    # --- keyword terms of another tokenizer version ---------------------------------------------------
    def unstamped(self, stamp: str, limit: int) -> list[Row]:
        """Up to ``limit`` indexed items whose tokens lack ``stamp`` (tokenised by an earlier version)."""
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT} WHERE index_hash <> '' AND NOT (?::VARCHAR = ANY(tokens)) "
                               f"ORDER BY item_id LIMIT ?", [stamp, int(limit)]).fetchall()
        return [_row(r) for r in rows]

    def set_tokens(self, tokens: dict[str, list[str]]) -> None:
        """Replace the tokens of items (item id -> tokens); nothing else changes, updated_at included."""
        if not tokens:
            return
        with self._db.tx() as con:
            con.execute(
                f"UPDATE {ITEMS_TABLE} SET tokens = {_MADE['tokens']} FROM (SELECT unnest(?::VARCHAR[]) AS "
                f"item_id, unnest(?::VARCHAR[]) AS tokens) AS b WHERE {ITEMS_TABLE}.item_id = b.item_id",
                [list(tokens), [_joined(t) for t in tokens.values()]],
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
                f"{_SELECT} WHERE position(?::VARCHAR IN ns_path) > 0 OR position(?::VARCHAR IN \"key\") > 0",
                [text, text],
            ).fetchall()
        return [_row(r) for r in rows]

    # --- backups and erasure (L10, L11) --------------------------------------------------------------
    def with_label(self, label: str) -> list[tuple[tuple[str, ...], str]]:
        """(namespace, key) of every item whose namespace has ``label`` as one of its labels."""
        with self._db.read() as con:
            rows = con.execute(
                f'SELECT namespace, "key" FROM {ITEMS_TABLE} WHERE ?::VARCHAR = ANY(namespace)', [label]
            ).fetchall()
        return [(tuple(r[0]), r[1]) for r in rows]

    def dump_rows(self) -> list[dict[str, Any]]:
        """Every row with all its columns (a backup's records)."""
        names = [c.strip('"') for c in _COLS]
        with self._db.read() as con:
            rows = con.execute(f"{_SELECT} ORDER BY item_id").fetchall()
        return [dict(zip(names, [list(v) if isinstance(v, tuple) else v for v in r])) for r in rows]

    def load_rows(self, rows: Sequence[dict[str, Any]]) -> int:
        """Write rows of ``dump_rows`` back as they were (timestamps and TTLs included; a backup made before
        items had a TTL restores them without one)."""
        if not rows:
            return 0
        columns = [[r.get(c.strip('"')) for r in rows] for c in _SENT]
        columns[4] = [_joined(t or []) for t in columns[4]]
        columns[6:] = [_floats(c) for c in columns[6:]]
        with self._db.tx() as con:
            con.execute(_RESTORE, columns)
        return len(rows)

    def rewrite(self) -> None:
        """Make deleted items' bytes leave the storage: DuckDB copies the file (deleted rows linger in its
        freed blocks); PostgreSQL rewrites the table (VACUUM FULL; see PostgresConnection.rewrite for what
        that does not reach)."""
        if self._db.dialect == "postgres":  # the server's rewrite names its tables; the file's copies them all
            self._db.rewrite([ITEMS_TABLE])  # type: ignore[call-arg]
        else:
            self._db.rewrite()

    def raw_paths(self) -> list[Path]:
        if self._db.dialect != "duckdb" or self.database == ":memory:":
            return []
        return [Path(self.database), Path(self.database + ".wal")]

    # --- lifecycle -----------------------------------------------------------------------------------
    def close(self) -> None:
        self._db.close()


class DuckDBItems(SqlItems):
    """The item table in its own embedded DuckDB file (``<data_dir>/store.duckdb``), or in memory."""

    def __init__(self, location: str | os.PathLike[str] = ":memory:"):
        if str(location) == ":memory:":
            database, data_dir = ":memory:", ":memory:"
        else:
            path = Path(location).expanduser().resolve()
            if path.suffix not in (".duckdb", ".db"):
                path = path / STORE_FILENAME
            path.parent.mkdir(parents=True, exist_ok=True)
            database, data_dir = str(path), str(path.parent)
        super().__init__(GuardedConnection(database, data_dir, COMPONENT, ()))
