"""doctor's checks of the server mode (DATABASE_URI): the PostgreSQL server, the archive's tables, the pgvector
collections and the graph's tables, read with plain queries: nothing is created or migrated."""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from typing import Iterator

from lumina_memory.stores import ids
from lumina_memory.stores.archive_counts import archive_counts

from .doctor_check import FAIL, OK, TIMEOUT, Check, DoctorState

ARCHIVE_TABLES = (ids.TURNS_TABLE, ids.SEGMENTS_TABLE, ids.AUDIT_TABLE)
GRAPH_TABLES = ("graph_users", "graph_characters", "graph_segments", "graph_concepts", "graph_participated",
                "graph_mentions", "graph_associated")


class PostgresChecks(DoctorState):
    @contextmanager
    def _pg(self) -> Iterator[object]:
        import psycopg

        from lumina_memory.stores.pg_connection import PgExecutor

        con = psycopg.connect(self.settings.database_url, connect_timeout=int(TIMEOUT), autocommit=True,
                              options=f"-c statement_timeout={int(TIMEOUT * 1000)} -c default_transaction_read_only=on")
        try:
            yield PgExecutor(con, self.pg_where(), "archive")
        finally:
            con.close()

    def pg_where(self) -> str:
        from lumina_memory.stores.pg_connection import describe

        return describe(self.settings.database_url)

    def _tables(self, con) -> set[str]:
        return {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()").fetchall()}

    def postgres_archive_checks(self) -> list[Check]:
        import psycopg

        where = self.pg_where()
        try:
            with self._pg() as con:
                version = con.execute("SHOW server_version").fetchone()[0]
                vector = con.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
                out = [Check("archive", "reachable", OK, f"PostgreSQL {version} at {where}, pgvector "
                             + (vector[0] if vector else "not installed yet (created on first open)"))]
                tables = self._tables(con)
                if not any(t in tables for t in ARCHIVE_TABLES):
                    return [*out, Check("archive", "schema", OK, "archive tables not created yet")]
                missing = [t for t in ARCHIVE_TABLES if t not in tables]
                if missing:
                    return [*out, Check("archive", "schema", FAIL, f"{where} lacks tables {', '.join(missing)}")]
                turns = con.execute(f"SELECT count(*) FROM {ids.TURNS_TABLE}").fetchone()[0]
                segs = con.execute(f"SELECT count(*) FROM {ids.SEGMENTS_TABLE}").fetchone()[0]
                self.seen.update(archive_turns=turns, archive_segments=segs)
                self.seen["archive_per_user"] = archive_counts(con)
                self.seen["outbox"] = con.execute(
                    f"SELECT user_id, segment_id, stages FROM {ids.OUTBOX_TABLE} ORDER BY seq").fetchall()
                self.seen["archived_within_ttl"] = con.execute(
                    f"SELECT count(*) FROM {ids.SEGMENTS_TABLE} WHERE archived_at > extract(epoch FROM now()) - ?",
                    [self.settings.midterm_ttl_seconds]).fetchone()[0]
                return [*out, Check("archive", "schema", OK, f"postgres: {turns} turns, {segs} segments")]
        except psycopg.Error as exc:
            return [Check("archive", "reachable", FAIL, f"cannot read PostgreSQL at {where}: {exc}".strip())]

    def postgres_vector_checks(self, wanted: list[str]) -> list[Check]:
        import psycopg

        from lumina_memory.stores.vectors_pg_sql import CATALOG

        where = self.pg_where()
        try:
            with self._pg() as con:
                if CATALOG not in self._tables(con):
                    return [Check("long-term", "collection", OK, f"pgvector at {where}: no collection created yet")]
                out = []
                for collection in wanted:
                    row = con.execute(f"SELECT table_name, lumina_embedder, lumina_dim FROM {CATALOG} "
                                      "WHERE collection = ?", [collection]).fetchone()
                    if row is None:
                        out.append(Check("long-term", "collection", OK, f"{collection} not created yet"))
                        continue
                    out.append(self._dimension_row(collection, row[1], row[2]))
                    if out[-1].status == OK:
                        points = con.execute(f'SELECT count(*) FROM "{row[0]}"').fetchone()[0]
                        self.seen[f"points:{collection.split('_')[1]}"] = points
                        out.append(Check("long-term", "collection", OK, f"{collection} (pgvector), {points} points"))
                return out
        except psycopg.Error as exc:
            return [Check("long-term", "reachable", FAIL, f"cannot read PostgreSQL at {where}: {exc}".strip())]

    def postgres_graph_checks(self) -> list[Check]:
        import psycopg

        where = self.pg_where()
        try:
            with self._pg() as con:
                tables = self._tables(con)
                if not any(t in tables for t in GRAPH_TABLES):
                    return [Check("graph", "schema", OK, f"postgres at {where}: graph not created yet")]
                missing = [t for t in GRAPH_TABLES if t not in tables]
                if missing:
                    return [Check("graph", "schema", FAIL, f"{where} lacks tables {', '.join(missing)}")]
                per_user = Counter({user: int(n) for user, n in con.execute(
                    "SELECT user_id, count(*) FROM graph_segments GROUP BY user_id").fetchall()})
                concepts = con.execute("SELECT count(*) FROM graph_concepts").fetchone()[0]
                self.seen["graph_segments"] = sum(per_user.values())
                self.seen["per_user:graph"] = per_user
                return [Check("graph", "schema", OK, f"postgres at {where}: {sum(per_user.values())} segments, "
                              f"{concepts} concepts")]
        except psycopg.Error as exc:
            return [Check("graph", "schema", FAIL, f"cannot read PostgreSQL at {where}: {exc}".strip())]
