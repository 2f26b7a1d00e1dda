"""doctor's check of the graph's user boundary: no edge may join two users' nodes (a leak the stores never
write; store upkeep removes any it finds, stores.cypher_repair). Read-only, on each graph backend."""

from __future__ import annotations

from collections import Counter

from lumina_memory.stores import cypher
from lumina_memory.stores.cypher_repair import CROSS_USER_EDGES

from .doctor_check import FAIL, OK, TIMEOUT, Check, DoctorState

CHECK = ("graph", "user boundary")


def boundary_row(where: str, crossing: Counter) -> Check:
    if not crossing:
        return Check(*CHECK, OK, f"{where}: no edge joins two users' nodes")
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(crossing.items()))
    return Check(*CHECK, FAIL, f"{where}: {sum(crossing.values())} edge(s) join two users' nodes ({kinds}), "
                 "one user's memory reachable from another's: `lumina-memory maintain --force` removes them "
                 "(store upkeep, with LUMINA_UPKEEP_REPAIR_GRAPH on)")


class BoundaryChecks(DoctorState):
    def graph_boundary_checks(self) -> list[Check]:
        if self.settings.neo4j_uri:
            return [self._neo4j_boundary()]
        if self.settings.database_url:
            return [self._postgres_boundary()]
        return [self._ladybug_boundary()]

    def _ladybug_boundary(self) -> Check:
        import ladybug

        path = self.data_dir / "graph"
        if not path.exists():
            return Check(*CHECK, OK, "graph not created yet")
        if self.locked_by:
            return self._skip_locked(*CHECK)
        db = ladybug.Database(str(path), read_only=True)
        try:
            conn = ladybug.Connection(db)
            tables = {r["name"] for r in conn.execute(cypher.LADYBUG_SHOW_TABLES).rows_as_dict().get_all()}
            crossing = Counter({edge: len(conn.execute(query).get_all()) for edge, query in CROSS_USER_EDGES.items()
                                if edge in tables})
            conn.close()
        finally:
            db.close()
        return boundary_row(f"ladybug at {path}", +crossing)

    def _neo4j_boundary(self) -> Check:
        import neo4j

        s = self.settings
        auth = (s.neo4j_user, s.neo4j_password.get_secret_value() if s.neo4j_password else "") if s.neo4j_user else None
        driver = neo4j.GraphDatabase.driver(s.neo4j_uri, auth=auth, connection_timeout=TIMEOUT)
        try:
            with driver.session(database=s.neo4j_database) as session:
                crossing = Counter({edge: len(list(session.run(query))) for edge, query in CROSS_USER_EDGES.items()})
        finally:
            driver.close()
        return boundary_row(s.neo4j_uri, +crossing)

    def _postgres_boundary(self) -> Check:
        from lumina_memory.stores.graph_pg_repair import FIND_SQL

        where = self.pg_where()
        with self._pg() as con:  # type: ignore[attr-defined]
            tables = self._tables(con)  # type: ignore[attr-defined]
            if "graph_segments" not in tables:
                return Check(*CHECK, OK, f"postgres at {where}: graph not created yet")
            crossing = Counter({edge: len(con.execute(sql).fetchall()) for edge, (needs, sql) in FIND_SQL.items()
                                if set(needs) <= tables})
        return boundary_row(f"postgres at {where}", +crossing)
