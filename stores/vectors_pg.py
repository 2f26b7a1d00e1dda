"""Long-term vectors on pgvector: a collection is one table in the server mode's PostgreSQL.

Why this shape:
- One table per collection (``lumina_v_<name>_<hash>``: PostgreSQL names stop at 63 bytes), listed with its
  embedder and dimension in ``lumina_vector_collections``, so a model change is refused before any vector mixes
  (as the qdrant adapters record theirs). Its schema is numbered steps of ``lumina_migrations`` (component
  ``vectors:<collection>``), applied under the migrations' advisory lock so processes that start together create
  it once.
- Columns: ``id`` (the point id, a UUID), ``user_id`` (the tenant, copied out of the payload: a b-tree index
  serves every user-scoped read and delete), ``embedding vector(dim)`` with an HNSW ``vector_cosine_ops`` index,
  and ``payload`` JSONB holding the whole payload as the other engines return it (user_id included).
- Search: HNSW applies the WHERE after walking the graph, so a user's k nearest can come back short. Each search
  runs with ``hnsw.iterative_scan = relaxed_order`` (pgvector 0.8: the scan goes on until k rows pass the filter
  or ``hnsw.max_scan_tuples`` is reached), the rows are re-sorted by score, and a search still short of its limit
  is answered again exactly (the user's rows through the b-tree, sorted by distance), so a result is short only
  when the user has no more matching points.
- Every wait is bounded: taking a connection (``timeout``) and each statement (``statement_timeout``); failures
  are StoreUnavailable("long-term", "PostgreSQL at ...").
- PostgreSQL's JSONB refuses NUL characters and lone surrogates; payloads holding them are refused as
  InvalidInput before anything is written (a whole call is one transaction).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from . import ids
from .pg_statistics import resample_statistics
from .errors import InvalidInput, StoreUnavailable
from .pg_connection import _MIGRATION_LOCK, PgExecutor, describe
from .pg_watchdog import grace, longer
from .sql_connection import MIGRATIONS_TABLE, apply_migrations
from .vector_filters import (
    TENANT_FIELD, TIER, Condition, Patch, PreparedPoint, VectorStoreBase, batched, check_embedder, embedder_metadata,
)
from .vectors_pg_sql import (  # noqa: F401 - callers import the pool and names from here
    CATALOG, CATALOG_SCHEMA, EF_SEARCH, _EF_SEARCH_MAX, _first_line, _Params, _payload_sql, _uuids, _where,
    check_payload, collection_names, open_pool, table_name, table_steps,
)


REWRITE_SECONDS = 1800  # the longest a VACUUM FULL of one collection may copy (erasure's rewrite)


class PgVectorStore(VectorStoreBase):
    """``VectorStore`` on one pgvector table. ``pool``: from ``open_pool``; closed with the store when ``owns_pool``."""

    backend = "pgvector"

    def __init__(self, pool: ConnectionPool, collection: str, dim: int, embedder_name: str, *,
                 batch_size: int = 100, owns_pool: bool = True) -> None:
        self._init_common(collection, dim, embedder_name, batch_size)
        self._pool, self._owns_pool = pool, owns_pool
        self.table = table_name(self.collection)
        self._where = f"{describe(pool.conninfo)} (pgvector collection {self.collection!r})"
        try:
            self._ensure_collection()
        except BaseException:
            if owns_pool:
                pool.close()
            raise

    @classmethod
    def from_uri(cls, uri: str, collection: str, dim: int, embedder_name: str, *, timeout: float = 10.0,
                 batch_size: int = 100) -> "PgVectorStore":
        """The collection in the PostgreSQL of ``uri`` (created when missing). Unreachable or slow:
        StoreUnavailable now, not on first use."""
        return cls(open_pool(uri, timeout=timeout), collection, dim, embedder_name, batch_size=batch_size)

    # --- connections and errors -------------------------------------------------------------------
    @contextmanager
    def _con(self, action: str, *, transaction: bool = False) -> Iterator[psycopg.Connection]:
        """A pooled connection (inside one transaction when asked); server trouble becomes StoreUnavailable."""
        try:
            with self._pool.connection() as con:
                if transaction:
                    with con.transaction():
                        yield con
                else:
                    yield con
        except (PoolTimeout, psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise StoreUnavailable(TIER, f"{action}: PostgreSQL at {self._where}: {_first_line(exc)}") from None
        except psycopg.DataError as exc:
            raise InvalidInput("points", f"PostgreSQL refused the data: {_first_line(exc)}") from None

    # --- opening ----------------------------------------------------------------------------------
    def _ensure_collection(self) -> None:
        with self._con("open the collection", transaction=True) as con:
            con.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
            for statement in CATALOG_SCHEMA:
                con.execute(statement)
            row = con.execute(
                f"SELECT table_name, lumina_embedder, lumina_dim FROM {CATALOG} WHERE collection = %s",
                [self.collection]).fetchone()
            if row is not None:
                # Checked before the table is touched, so a mismatch never changes anything.
                stored = {"lumina_embedder": row[1], "lumina_dim": row[2]}
                check_embedder(stored, f"pgvector collection {self.collection!r} at {self._where}",
                               self.embedder_name, self.dim)
            else:
                meta = embedder_metadata(self.embedder_name, self.dim)
                con.execute(
                    f"INSERT INTO {CATALOG} (collection, table_name, lumina_embedder, lumina_dim, lumina_distance, "
                    "created_at) VALUES (%s, %s, %s, %s, %s, %s)",
                    [self.collection, self.table, meta["lumina_embedder"], meta["lumina_dim"],
                     meta["lumina_distance"], time.time()])
            apply_migrations(PgExecutor(con, self._where, TIER), f"vectors:{self.collection}",
                             table_steps(self.table, self.dim), time.time())

    # --- writes -----------------------------------------------------------------------------------
    def _write(self, points: Sequence[PreparedPoint]) -> None:
        self._write_all(points)

    def _write_all(self, points: Sequence[PreparedPoint]) -> None:
        """Every point checked, then all written in one transaction (batches of ``batch_size`` rows)."""
        # In id order, the last of a repeated id kept: two processes writing the same points (one transcript
        # imported twice) then take their row locks in the same order and wait for each other, never deadlock.
        rows = sorted({row[0]: row for row in (self._row(p, i) for i, p in enumerate(points))}.values(), key=lambda r: r[0])
        if not rows:
            return
        with self._con("upsert", transaction=True) as con:
            for batch in batched(rows, self.batch_size):
                con.execute(
                    f"INSERT INTO {self.table} (id, user_id, embedding, payload) "
                    "SELECT * FROM unnest(%s::uuid[], %s::varchar[], %s::vector[], %s::jsonb[]) "
                    "ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, embedding = excluded.embedding, "
                    "payload = excluded.payload",
                    [[r[0] for r in batch], [r[1] for r in batch], [r[2] for r in batch], [r[3] for r in batch]])

    @staticmethod
    def _row(point: PreparedPoint, i: int) -> tuple[str, str | None, np.ndarray, str]:
        try:
            pid = str(uuid.UUID(str(point.point_id)))
        except ValueError:
            raise InvalidInput(f"points[{i}].point_id", f"{str(point.point_id)[:40]!r} is not a UUID") from None
        payload = check_payload(point.payload, f"points[{i}].payload")
        user = point.payload.get(TENANT_FIELD)
        return pid, user if isinstance(user, str) else None, np.asarray(point.vector, dtype=np.float32), payload

    def _delete(self, conditions: list[Condition]) -> None:
        p = _Params()
        where = _where(conditions, p)
        with self._con("delete") as con:
            con.execute(f"DELETE FROM {self.table} WHERE {where}", p.values)

    def _patch(self, patches: Sequence[Patch]) -> None:
        patches = sorted(patches, key=lambda p: p.point_id)  # row locks in id order, as writes take them
        vectors = [(p.point_id, np.asarray(p.vector, dtype=np.float32)) for p in patches if p.vector is not None]
        fields = [(p.point_id, check_payload(p.fields, f"fields of {p.point_id}")) for p in patches if p.fields]
        with self._con("update", transaction=True) as con:
            if vectors:
                con.execute(
                    f"UPDATE {self.table} AS t SET embedding = v.e FROM unnest(%s::uuid[], %s::vector[]) AS v(id, e) "
                    "WHERE t.id = v.id", [[i for i, _ in vectors], [e for _, e in vectors]])
            if fields:
                con.execute(
                    f"UPDATE {self.table} AS t SET payload = t.payload || v.f FROM unnest(%s::uuid[], %s::jsonb[]) "
                    "AS v(id, f) WHERE t.id = v.id", [[i for i, _ in fields], [f for _, f in fields]])

    # --- reads ------------------------------------------------------------------------------------
    def _search_sql(self, conditions: list[Condition], fields: Sequence[str] | None, exact: bool) -> tuple[str, _Params]:
        """One search's statement, the query vector and limit left as %(q)s and %(k)s. ``exact``: ordered by
        an expression the HNSW index cannot serve, so the planner reads the matching rows and sorts them."""
        p = _Params()
        payload = _payload_sql(fields, p)
        order = "(embedding <=> %(q)s) + 0" if exact else "embedding <=> %(q)s"
        sql = (f"SELECT id, 1 - (embedding <=> %(q)s), {payload} FROM {self.table} "
               f"WHERE {_where(conditions, p)} ORDER BY {order} LIMIT %(k)s")
        return sql, p

    @staticmethod
    @contextmanager
    def _wide_scan(con: psycopg.Connection, limit: int) -> Iterator[None]:
        """Searches asking for more rows than the pool's ef_search get a wider HNSW scan, in a transaction so the
        setting ends with it; the rest run as they are (one round trip each)."""
        if limit <= EF_SEARCH:
            yield
            return
        with con.transaction():
            con.execute(f"SET LOCAL hnsw.ef_search = {min(_EF_SEARCH_MAX, int(limit))}")
            yield

    def _query(
        self, vector: list[float], conditions: list[Condition], limit: int, fields: Sequence[str] | None = None
    ) -> list[tuple[str, float, dict]]:
        return self._query_many([vector], conditions, [limit], fields)[0]

    def _query_many(
        self, vectors: list[list[float]], conditions: list[Condition], limits: list[int], fields: Sequence[str] | None
    ) -> list[list[tuple[str, float, dict]]]:
        if not vectors:
            return []
        sql, p = self._search_sql(conditions, fields, exact=False)
        out: list[list[tuple[str, float, dict]]] = []
        with self._con("search") as con, self._wide_scan(con, max(limits)):
            with con.pipeline():
                cursors = [con.execute(sql, {**p.values, "q": np.asarray(v, dtype=np.float32), "k": k})
                           for v, k in zip(vectors, limits)]
            for cur in cursors:
                out.append(_hits(cur.fetchall()))
            short = [i for i, hits in enumerate(out) if len(hits) < limits[i]]
            if short:
                # Iterative scan gave up (max_scan_tuples) before finding enough: read this user's rows exactly.
                exact_sql, ep = self._search_sql(conditions, fields, exact=True)
                for i in short:
                    rows = con.execute(exact_sql, {**ep.values, "q": np.asarray(vectors[i], dtype=np.float32),
                                                   "k": limits[i]}).fetchall()
                    out[i] = _hits(rows)
        return out

    def _retrieve(self, point_ids: list[str], fields: Sequence[str] | None = None) -> list[tuple[str, dict]]:
        p = _Params()
        payload = _payload_sql(fields, p)
        with self._con("get") as con:
            rows = con.execute(f"SELECT id, {payload} FROM {self.table} WHERE id = ANY({p(_uuids(point_ids))}::uuid[])",
                               p.values).fetchall()
        return [(str(r[0]), r[1]) for r in rows]

    def _count(self, conditions: list[Condition] | None) -> int:
        p = _Params()
        where = _where(conditions or [], p)
        with self._con("count") as con:
            return int(con.execute(f"SELECT count(*) FROM {self.table} WHERE {where}", p.values).fetchone()[0])

    def vectors_by_id(self, user_id: str, point_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors (float32) of these points of this user, by point id; missing ones left out."""
        self._require_open()
        user = ids.validate_id(user_id, "user_id")
        out: dict[str, np.ndarray] = {}
        for chunk in batched(list(point_ids), 1_000):
            with self._con("get") as con:
                rows = con.execute(f"SELECT id, embedding FROM {self.table} WHERE id = ANY(%s::uuid[]) AND user_id = %s",
                                   [_uuids(chunk), user]).fetchall()
            out.update({str(pid): vec.to_numpy().astype(np.float32) for pid, vec in rows})
        return out

    # --- whole collection ---------------------------------------------------------------------------
    def _scroll(self, page: int = 1_000) -> Iterator[tuple[str, list[float], dict]]:
        yield from self._pages("embedding, payload", page, lambda r: (str(r[0]), r[1].to_list(), r[2]))

    def payloads(self, fields: Sequence[str], page: int = 2_000) -> Iterator[dict[str, Any]]:
        """These payload fields of every point, without vectors (maintenance counts)."""
        self._require_open()
        p = _Params()
        columns = _payload_sql(list(fields), p)
        yield from self._pages(columns, page, lambda r: r[1], p.values)

    def _pages(self, columns: str, page: int, shape, params: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Rows in id order, ``page`` at a time (each page its own statement: no cursor is held between)."""
        after = None
        while True:
            values = {**(params or {}), "after": after, "page": page}
            with self._con("scroll") as con:
                rows = con.execute(
                    f"SELECT id, {columns} FROM {self.table} WHERE %(after)s::uuid IS NULL OR id > %(after)s::uuid "
                    "ORDER BY id LIMIT %(page)s", values).fetchall()
            for row in rows:
                yield shape(row)
            if len(rows) < page:
                return
            after = rows[-1][0]

    def _optimize(self) -> bool:
        """The HNSW index is kept up to date by every write; this refreshes the planner's statistics, which
        decide between the index and an exact read of a user's rows."""
        with self._con("analyze") as con:
            con.execute(f"ANALYZE {self.table}")
        return True

    def raw_paths(self) -> list:
        return []  # nothing on this machine: the rows live in the server's files

    def rewrite(self) -> None:
        """VACUUM FULL: the table, its TOASTed payloads and its indexes (the HNSW graph included) are written
        anew from the live rows, so deleted points' tuples leave the table's files. A plain VACUUM only marks
        dead tuples' space reusable, and neither reaches WAL segments the server still keeps, base backups or
        replicas: those age out on the server's own schedule.

        It holds the table exclusively while it copies (every search of the collection waits), so it runs with
        its own bounds: it gives up at once if it cannot take the table within the pool's timeout (a long
        transaction would otherwise leave everyone queued behind it), and may copy for up to REWRITE_SECONDS."""
        self._require_open()
        with self._con("rewrite") as con:
            wait_ms = int(self._pool.timeout * 1000)
            con.execute("SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)",
                        [f"{wait_ms}ms", f"{REWRITE_SECONDS}s"])
            try:
                with longer(con, grace(REWRITE_SECONDS)):
                    con.execute(f"VACUUM (FULL) {self.table}")
                    resample_statistics(con, [self.table])  # pg_statistic keeps sampled values of deleted points
            finally:
                con.execute("RESET lock_timeout; RESET statement_timeout")  # the pool's own bounds again

    def drop(self) -> None:
        """Delete the whole collection (its table, record and schema steps), then close."""
        self._require_open()
        with self._con("drop the collection", transaction=True) as con:
            con.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
            con.execute(f"DROP TABLE IF EXISTS {self.table}")
            con.execute(f"DELETE FROM {CATALOG} WHERE collection = %s", [self.collection])
            con.execute(f"DELETE FROM {MIGRATIONS_TABLE} WHERE component = %s", [f"vectors:{self.collection}"])
        self.close()

    def _release(self) -> None:
        if self._owns_pool:
            self._pool.close()


def _hits(rows: list[tuple]) -> list[tuple[str, float, dict]]:
    # relaxed_order may return rows slightly out of order: best first again, ties by id for a stable answer.
    hits = [(str(pid), float(score), payload) for pid, score, payload in rows]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits
