"""doctor's engine checks: the mid-term server, the archive's and the graph's files or server, each
reachable and shaped as the adapters write them, read without opening a store."""

from __future__ import annotations

import subprocess
from collections import Counter

from lumina_memory.stores import cypher, ids
from lumina_memory.stores.archive_counts import archive_counts
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.midterm_records import SCHEMA_VERSION, redact_url

from .doctor_check import FAIL, OK, TIMEOUT, WARN, Check, package_version
from .doctor_postgres import PostgresChecks
from .tier_match import GRAPH_SEGMENTS_PER_USER

GRAPH_NODE_TABLES = ("User", "Character", "Segment", "Concept")
GRAPH_REL_TABLES = ("HAD", "PARTICIPATED", "MENTIONS", "ASSOCIATED")
ARCHIVE_TABLES = (ids.TURNS_TABLE, ids.SEGMENTS_TABLE, ids.AUDIT_TABLE)


class EngineChecks(PostgresChecks):
    # --- mid-term --------------------------------------------------------------------------------
    def midterm_checks(self) -> list[Check]:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        from lumina_memory.stores.redis_server import redis_binary, server_status
        from lumina_memory.stores.redis_tls import tls_failure, tls_options

        s = self.settings
        common = {"socket_timeout": TIMEOUT, "socket_connect_timeout": TIMEOUT, "retry": Retry(NoBackoff(), 0)}
        if s.redis_url:
            where = redact_url(s.redis_url)
            try:
                common.update(tls_options(s, s.redis_url))
            except InvalidInput as exc:
                return [Check("mid-term", "reachable", FAIL, str(exc))]
            client = redis.Redis.from_url(s.redis_url, **common)
        else:
            status = server_status(s)
            if not status["running"]:
                binary = redis_binary(s)
                done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=TIMEOUT)
                if done.returncode != 0:
                    return [Check("mid-term", "reachable", FAIL, f"{binary} --version failed: {done.stderr[:200]}")]
                version = done.stdout.split("v=")[1].split()[0] if "v=" in done.stdout else done.stdout.strip()
                return [Check("mid-term", "reachable", OK,
                              f"embedded redis {version}: not running, starts on first use ({binary})")]
            where = f"unix://{status['socket']}"
            client = redis.Redis(unix_socket_path=status["socket"], **common)
        try:
            try:
                info = client.info("server")
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                tls = tls_failure(exc)
                return [Check("mid-term", "reachable", FAIL, f"cannot reach {where}: {tls + ' ' if tls else ''}{exc}")]
            name = "valkey" if "valkey_version" in info else "redis"
            version = info.get("valkey_version") or info.get("redis_version")
            out = [Check("mid-term", "reachable", OK, f"{name} {version} at {where}")]
            self.seen["midterm_segments"] = sum(1 for _ in client.scan_iter(match=ids.redis_segment_key("*", "*"), count=1000))
            keys = client.scan(0, match=ids.redis_segment_key("*", "*"), count=1000)[1]
            if not keys:
                out.append(Check("mid-term", "schema", OK, "no segment records yet"))
            else:
                found = client.hget(keys[0], "_v")
                found = found.decode() if isinstance(found, bytes) else found
                ok = found == SCHEMA_VERSION
                out.append(Check("mid-term", "schema", OK if ok else FAIL,
                                 f"segment record version {found!r}" + ("" if ok else f", expected {SCHEMA_VERSION!r}")))
            return out
        finally:
            client.close()

    # --- archive ---------------------------------------------------------------------------------
    def archive_checks(self) -> list[Check]:
        if self.settings.database_url:
            return self.postgres_archive_checks()
        import duckdb

        path = self.data_dir / "archive.duckdb"
        if not path.exists():
            return [Check("archive", "schema", OK, f"duckdb {duckdb.__version__}: {path.name} not created yet")]
        if self.locked_by:
            return [self._skip_locked("archive", "schema")]
        con = duckdb.connect(str(path), read_only=True)
        try:
            tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            missing = [t for t in ARCHIVE_TABLES if t not in tables]
            version = con.execute("SELECT version()").fetchone()[0]
            if missing:
                return [Check("archive", "schema", FAIL, f"duckdb {version}: {path} lacks tables {', '.join(missing)}")]
            turns = con.execute(f"SELECT count(*) FROM {ids.TURNS_TABLE}").fetchone()[0]
            segs = con.execute(f"SELECT count(*) FROM {ids.SEGMENTS_TABLE}").fetchone()[0]
            self.seen.update(archive_turns=turns, archive_segments=segs)
            self.seen["archive_per_user"] = archive_counts(con)
            if ids.OUTBOX_TABLE in tables:
                self.seen["outbox"] = con.execute(
                    f"SELECT user_id, segment_id, stages FROM {ids.OUTBOX_TABLE} ORDER BY seq").fetchall()
            ttl = self.settings.midterm_ttl_seconds
            self.seen["archived_within_ttl"] = con.execute(
                f"SELECT count(*) FROM {ids.SEGMENTS_TABLE} WHERE archived_at > epoch(now()) - ?", [ttl]).fetchone()[0]
            return [Check("archive", "schema", OK, f"duckdb {version}: {turns} turns, {segs} segments")]
        finally:
            con.close()

    # --- graph -----------------------------------------------------------------------------------
    def graph_checks(self) -> list[Check]:
        if self.settings.neo4j_uri:
            return self._neo4j()
        if self.settings.database_url:
            return self.postgres_graph_checks()
        import ladybug

        path = self.data_dir / "graph"
        version = f"ladybug {package_version('ladybug')}"
        if not path.exists():
            return [Check("graph", "schema", OK, f"{version}: graph not created yet")]
        if self.locked_by:
            return [self._skip_locked("graph", "schema")]
        db = ladybug.Database(str(path), read_only=True)
        try:
            conn = ladybug.Connection(db)
            rows = conn.execute(cypher.LADYBUG_SHOW_TABLES).rows_as_dict().get_all()
            tables = {r["name"] for r in rows}
            missing = [t for t in (*GRAPH_NODE_TABLES, *GRAPH_REL_TABLES) if t not in tables]
            if missing:
                return [Check("graph", "schema", FAIL, f"{version}: {path} lacks tables {', '.join(missing)}")]
            counts = {t: conn.execute(cypher.COUNT_NODES_ALL[t]).get_all()[0][0] for t in ("Segment", "Concept")}
            self.seen["graph_segments"] = counts["Segment"]
            rows = conn.execute(GRAPH_SEGMENTS_PER_USER).rows_as_dict().get_all()
            self.seen["per_user:graph"] = Counter({r["user_id"]: int(r["n"]) for r in rows})
            conn.close()
            return [Check("graph", "schema", OK,
                          f"{version}: 8 tables; {counts['Segment']} segments, {counts['Concept']} concepts")]
        finally:
            db.close()

    def _neo4j(self) -> list[Check]:
        import neo4j

        s = self.settings
        auth = None
        if s.neo4j_user:
            auth = (s.neo4j_user, s.neo4j_password.get_secret_value() if s.neo4j_password else "")
        driver = neo4j.GraphDatabase.driver(s.neo4j_uri, auth=auth, connection_timeout=TIMEOUT)
        try:
            try:
                agent = driver.get_server_info().agent
            except Exception as exc:  # noqa: BLE001 - ServiceUnavailable, AuthError, DNS...
                return [Check("graph", "reachable", FAIL, f"cannot reach {s.neo4j_uri}: {exc}")]
            out = [Check("graph", "reachable", OK, f"{agent} at {s.neo4j_uri}")]
            with driver.session(database=s.neo4j_database) as session:
                labels = {r[0] for r in session.run(cypher.NEO4J_LABELS)}
                try:
                    constraints = {r["name"] for r in session.run(cypher.NEO4J_SHOW_CONSTRAINTS)}
                except neo4j.exceptions.Neo4jError:
                    constraints = None  # FalkorDB and other Bolt servers without SHOW CONSTRAINTS
            present = [label for label in GRAPH_NODE_TABLES if label in labels]
            detail = f"labels present: {', '.join(present) or 'none yet'}"
            if constraints is None:
                out.append(Check("graph", "schema", OK, detail + "; server has no SHOW CONSTRAINTS"))
            else:
                want = {f"lumina_{label.lower()}_id" for label in GRAPH_NODE_TABLES}
                missing = sorted(want - constraints)
                status = OK if not missing else (OK if not present else WARN)
                out.append(Check("graph", "schema", status,
                                 detail + (f"; missing constraints {', '.join(missing)} (created on first open)"
                                           if missing else "; constraints present")))
            return out
        finally:
            driver.close()
