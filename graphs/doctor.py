"""`lumina-memory doctor`: is every configured backend reachable, current and shaped as we expect?

Read-mostly: it never creates a table, collection or constraint, and it does not start the embedded Redis
(it runs the binary's ``--version`` instead). It holds the data directory's lock while it looks, so it
cannot race a writer; when another process holds it, the embedded files are reported as SKIP with the
holder named, and what can be checked from outside (Redis over its socket, the collection record) still is.

Statuses: OK, WARN (works, but look), SKIP (not configured or not checkable now), FAIL (exit code 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable

from lumina_memory.stores import cypher, ids
from lumina_memory.stores.archive_counts import archive_counts
from lumina_memory.stores.file_swap import leftovers
from lumina_memory.stores.backup import restore_state
from lumina_memory.stores.datadir_lock import DataDirLock
from lumina_memory.stores.errors import DataDirLocked
from lumina_memory.stores.settings import LuminaSettings

from .tier_match import GRAPH_SEGMENTS_PER_USER, distinct_per_user, edge_payloads, mismatches, suspicious

OK, WARN, SKIP, FAIL = "OK", "WARN", "SKIP", "FAIL"
TIMEOUT = 5.0
GRAPH_NODE_TABLES = ("User", "Character", "Segment", "Concept")
GRAPH_REL_TABLES = ("HAD", "PARTICIPATED", "MENTIONS", "ASSOCIATED")
ARCHIVE_TABLES = (ids.TURNS_TABLE, ids.SEGMENTS_TABLE, ids.AUDIT_TABLE)
VECTOR_KINDS = ("segments", "turns", "knowledge")  # stores.ids.collection_name kinds; a missing one is "not created yet"


@dataclass(frozen=True)
class Check:
    component: str
    """settings, data dir, mid-term, archive, long-term, graph, backups, embedder, llm, tracing."""
    check: str
    status: str
    detail: str = ""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def _guarded(component: str, check: str, fn: Callable[[], Iterable[Check]]) -> list[Check]:
    """A check that raises becomes one FAIL row naming the exception, never a traceback."""
    try:
        return list(fn())
    except Exception as exc:  # noqa: BLE001 - the report is the handler
        return [Check(component, check, FAIL, f"{type(exc).__name__}: {exc}".strip()[:400])]


class _Doctor:
    def __init__(self, settings: LuminaSettings):
        self.settings = settings
        self.data_dir = settings.resolved_data_dir()
        self.locked_by: str | None = None  # holder text when another process owns the data dir
        self.embedder_name: str | None = None
        self.embedder_dim: int | None = None
        # What the checks saw, compared by derivation_checks: the archive is the base every other
        # tier is derived from, so a tier holding less than the archive says is an incomplete derivation.
        self.seen: dict[str, object] = {}

    # --- data dir ---------------------------------------------------------------------------------
    def data_dir_checks(self) -> list[Check]:
        d = self.data_dir
        if not d.exists():
            parent = next((p for p in d.parents if p.exists()), Path("/"))
            ok = os.access(parent, os.W_OK)
            return [Check("data dir", "writable", OK if ok else FAIL,
                          f"{d} does not exist yet; {'it will be created' if ok else f'{parent} is not writable'}")]
        try:
            with tempfile.NamedTemporaryFile(dir=d, prefix=".doctor-"):
                pass
            out = [Check("data dir", "writable", OK, str(d))]
        except OSError as exc:
            out = [Check("data dir", "writable", FAIL, f"{d}: {exc}")]
        return out

    def lock_check(self, lock: DataDirLock) -> Check:
        try:
            lock.acquire()
        except DataDirLocked as exc:
            self.locked_by = exc.holder
            return Check("data dir", "lock", WARN,
                         f"in use by {exc.holder}; embedded files are checked only where that is safe")
        return Check("data dir", "lock", OK, "free (held by this doctor while it checks)")

    def _skip_locked(self, component: str, check: str) -> Check:
        return Check(component, check, SKIP, f"data dir in use by {self.locked_by}")

    # --- embedder and LLM ------------------------------------------------------------------------
    def embedder_checks(self) -> list[Check]:
        from lumina_memory.nodes.text.embedder import make_embedder

        embedder = make_embedder(self.settings)  # OpenAI: one real call (its dimension probe)
        self.embedder_name, self.embedder_dim = embedder.name, embedder.dim
        return [Check("embedder", "active", OK, f"{embedder.name}, {embedder.dim}-d ({embedder.path})")]

    def llm_checks(self) -> list[Check]:
        s = self.settings
        if s.llm == "offline" or (s.llm == "auto" and not s.use_openai):
            why = "LUMINA_LLM=offline" if s.llm == "offline" else "no OPENAI_API_KEY / OPENAI_BASE_URL"
            return [Check("llm", "path", OK, f"offline: extractive summaries, offline responder ({why})")]
        where = s.openai_base_url or "api.openai.com"
        key = "key set" if s.openai_api_key else "no key"
        return [Check("llm", "path", OK, f"openai {s.openai_chat_model} at {where} ({key}; not called by doctor)")]

    def tracing_checks(self) -> list[Check]:
        on = os.environ.get("LANGSMITH_TRACING", os.environ.get("LANGCHAIN_TRACING_V2", "")).lower() == "true"
        if not on:
            return [Check("tracing", "langsmith", OK, "off (LANGSMITH_TRACING unset): nothing is sent")]
        has_key = bool(os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY"))
        project = os.environ.get("LANGSMITH_PROJECT", "default")
        return [Check("tracing", "langsmith", OK if has_key else WARN,
                      f"on, project {project}" + ("" if has_key else "; LANGSMITH_API_KEY is not set"))]

    # --- mid-term --------------------------------------------------------------------------------
    def midterm_checks(self) -> list[Check]:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        from lumina_memory.stores.midterm_redis import SCHEMA_VERSION, _redact
        from lumina_memory.stores.redis_server import redis_binary, server_status

        s = self.settings
        common = {"socket_timeout": TIMEOUT, "socket_connect_timeout": TIMEOUT, "retry": Retry(NoBackoff(), 0)}
        if s.redis_url:
            where = _redact(s.redis_url)
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
                return [Check("mid-term", "reachable", FAIL, f"cannot reach {where}: {exc}")]
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

    # --- long-term -------------------------------------------------------------------------------
    def vector_checks(self) -> list[Check]:
        if self.embedder_name is None or self.embedder_dim is None:
            return [Check("long-term", "dimension", SKIP, "embedder unavailable (see embedder row)")]
        wanted = [ids.collection_name(kind, self.embedder_name, self.embedder_dim) for kind in VECTOR_KINDS]
        if self.settings.qdrant_url:
            return self._qdrant_server(wanted)
        return self._qdrant_edge(wanted)

    def _dimension_row(self, where: str, found_name: object, found_dim: object) -> Check:
        if found_dim == self.embedder_dim and found_name in (self.embedder_name, None):
            return Check("long-term", "dimension", OK, f"{where}: {found_dim}-d matches {self.embedder_name}")
        return Check("long-term", "dimension", FAIL,
                     f"{where} holds {found_name or '?'} {found_dim}-d vectors but the active embedder is "
                     f"{self.embedder_name} {self.embedder_dim}-d: re-embed into a new collection or restore "
                     "the embedder settings")

    def _qdrant_edge(self, wanted: list[str]) -> list[Check]:
        import qdrant_edge as qe

        from lumina_memory.stores.vectors_edge import META_FILE

        version = f"qdrant-edge {_version('qdrant-edge-py')}"
        root = self.data_dir / "qdrant"
        present = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        others = [name for name in present if name not in wanted]
        out: list[Check] = []
        for collection in wanted:
            shard = root / collection
            if not shard.exists():
                out.append(Check("long-term", "collection", OK, f"{version}: {collection} not created yet"))
                continue
            meta_path = shard / META_FILE
            if not meta_path.exists():
                out.append(Check("long-term", "collection", WARN, f"{shard} has no {META_FILE}; adopted on open"))
                continue
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            out.append(self._dimension_row(collection, meta.get("lumina_embedder"), meta.get("lumina_dim")))
            if out[-1].status == FAIL:
                continue
            if self.locked_by:
                out.append(self._skip_locked("long-term", "collection"))
                continue
            config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=self.embedder_dim, distance=qe.Distance.Cosine))
            engine = qe.EdgeShard.load(str(shard), config)  # verifies size and distance against the segments
            kind = collection.split('_')[1]
            key = {"segments": "segment_id", "turns": "turn_id"}.get(kind)
            try:
                points = int(engine.count(qe.CountRequest(exact=True)))
                fields = ["user_id"] + ([key] if key else [])
                self.seen[f"per_user:{kind}"] = distinct_per_user(edge_payloads(engine, fields), key)
            finally:
                engine.close()
            self.seen[f"points:{collection.split('_')[1]}"] = points
            out.append(Check("long-term", "collection", OK, f"{version}: {collection}, {points} points"))
        if others:
            out.append(Check("long-term", "other collections", OK,
                             f"not used by {self.embedder_name}: {', '.join(others)}"))
        return out

    def _qdrant_server(self, wanted: list[str]) -> list[Check]:
        from qdrant_client import QdrantClient, models

        s = self.settings
        key = s.qdrant_api_key.get_secret_value() if s.qdrant_api_key else None
        client = QdrantClient(url=s.qdrant_url, api_key=key, timeout=int(TIMEOUT), check_compatibility=False)
        try:
            try:
                version = client.info().version
            except Exception as exc:  # noqa: BLE001 - any transport error means unreachable
                return [Check("long-term", "reachable", FAIL, f"cannot reach Qdrant at {s.qdrant_url}: {exc}")]
            out = [Check("long-term", "reachable", OK, f"qdrant {version} at {s.qdrant_url}")]
            for collection in wanted:
                if not client.collection_exists(collection):
                    out.append(Check("long-term", "collection", OK, f"{collection} not created yet"))
                    continue
                info = client.get_collection(collection)
                meta = info.config.metadata or {}
                vectors = info.config.params.vectors
                size = vectors.size if isinstance(vectors, models.VectorParams) else None
                out.append(self._dimension_row(collection, meta.get("lumina_embedder"), meta.get("lumina_dim", size)))
                if out[-1].status == OK:
                    out.append(Check("long-term", "collection", OK, f"{collection}, {info.points_count} points"))
            return out
        finally:
            client.close()

    # --- graph -----------------------------------------------------------------------------------
    def graph_checks(self) -> list[Check]:
        if self.settings.neo4j_uri:
            return self._neo4j()
        import ladybug

        path = self.data_dir / "graph"
        version = f"ladybug {_version('ladybug')}"
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

    # --- derivations -----------------------------------------------------------------------------
    def derivation_checks(self) -> list[Check]:
        """Does every derived tier hold what the archive says it should? Pending outbox rows are work
        a crash or an outage left owed (completed when the data dir is next opened, or when the store is
        back); a tier holding fewer segments or turns than the archive, with nothing owed, lost them."""
        seen = self.seen
        if "archive_segments" not in seen:
            return [Check("derivations", "complete", SKIP, "archive not readable now (see archive row)")]
        out: list[Check] = []
        rows = seen.get("outbox") or []
        if rows:
            owed: dict[str, int] = {}
            for _user, _segment, stages in rows:
                for stage in stages:
                    owed[stage] = owed.get(stage, 0) + 1
            users = len({r[0] for r in rows})
            out.append(Check("derivations", "outbox", WARN,
                             f"{len(rows)} archived segment(s) of {users} user(s) still owe derived writes "
                             f"({', '.join(f'{k} {v}' for k, v in sorted(owed.items()))}): a crash or an outage "
                             "left them; they complete when the data dir is next opened (any command) or the store is back"))
        else:
            out.append(Check("derivations", "outbox", OK, "no derived writes owed"))
        archived, pending = int(seen["archive_segments"]), len(rows)
        short = []
        if "graph_segments" in seen and int(seen["graph_segments"]) + pending < archived:
            short.append(f"the graph holds {seen['graph_segments']} of {archived} archived segments")
        if "points:turns" in seen and int(seen["points:turns"]) < int(seen["archive_turns"]) and not pending:
            short.append(f"the turn vectors hold {seen['points:turns']} of {seen['archive_turns']} archived turns")
        if short:
            out.append(Check("derivations", "complete", FAIL, "; ".join(short) + " with nothing owed (a crash "
                             "before the outbox existed): rebuild them from the archive with "
                             "`lumina-memory recover --user ID --rederive` for each user"))
        elif "midterm_segments" in seen and int(seen["midterm_segments"]) < int(seen.get("archived_within_ttl", 0)):
            out.append(Check("derivations", "mid-term", WARN,
                             f"mid-term holds {seen['midterm_segments']} records, the archive has "
                             f"{seen['archived_within_ttl']} segments within the TTL: restored from the archive "
                             "when the data dir is next opened"))
        else:
            out.append(Check("derivations", "complete", OK, "every derived tier holds what the archive says"))
        return out

    def tier_match_checks(self) -> list[Check]:
        """Per user, does each derived tier hold what the archive says (graphs.tier_match)? Catches what the
        totals hide: one user's points lost while another's linger after an erasure."""
        archive = self.seen.get("archive_per_user")
        if archive is None:
            return [Check("derivations", "per user", SKIP, "archive not readable now (see archive row)")]
        names = {"per_user:segments": "segment points", "per_user:turns": "turn points",
                 "per_user:knowledge": "knowledge points", "per_user:graph": "graph segments"}
        tiers = {tier: self.seen[key] for key, tier in names.items() if key in self.seen}
        bad = mismatches(archive, tiers)  # type: ignore[arg-type]
        doubtful = suspicious(archive, tiers)  # type: ignore[arg-type]
        if doubtful and not bad:
            return [Check("derivations", "per user", WARN, "; ".join(doubtful))]
        if bad:
            return [Check("derivations", "per user", FAIL, "; ".join(bad + doubtful) + ": a crash or an interrupted rewrite "
                          "lost or left data; `lumina-memory recover --user ID --rederive` rebuilds a user's tiers "
                          "from the archive, `erase` again removes an erased user's rest")]
        counted = ", ".join(sorted(tiers)) or "no derived tier readable"
        return [Check("derivations", "per user", OK, f"{len(archive.users())} user(s): {counted} match the archive")]

    def swap_checks(self) -> list[Check]:
        """Files of an engine rewrite (stores.file_swap) left by a process that died during one."""
        found = leftovers(self.data_dir)
        if not found:
            return [Check("data dir", "rewrites", OK, "no unfinished rewrite of an engine's files")]
        names = ", ".join(str(p.relative_to(self.data_dir)) for p in found[:6])
        legacy = [p for p in found if p.name.endswith(".old")]
        if legacy:
            return [Check("data dir", "rewrites", FAIL,
                          f"{names}: a rewrite without a journal (an older version) was killed; the .old folder may "
                          "hold the only full copy of a shard, or erased text: compare it with the live one, then "
                          "remove it")]
        when = " (a rewrite may be running now)" if self.locked_by else ""
        return [Check("data dir", "rewrites", WARN,
                      f"{names}: an interrupted rewrite{when}; the next open of the data dir finishes or undoes it "
                      "and removes these (any command, e.g. `lumina-memory stats`)")]

    # --- backups ----------------------------------------------------------------------------------
    def s3_checks(self) -> list[Check]:
        s = self.settings
        if not s.s3_endpoint_url:
            return [Check("backups", "s3", SKIP, "LUMINA_S3_ENDPOINT_URL not set")]
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError

        client = boto3.client(
            "s3", endpoint_url=s.s3_endpoint_url,
            config=Config(s3={"addressing_style": "path"}, connect_timeout=TIMEOUT, read_timeout=TIMEOUT,
                          retries={"max_attempts": 1}),
        )
        try:
            head = client.head_bucket(Bucket=s.s3_bucket)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "?")
            why = "does not exist" if code in ("404", "NoSuchBucket") else f"answered {code}"
            return [Check("backups", "s3", FAIL, f"bucket {s.s3_bucket} at {s.s3_endpoint_url} {why}")]
        except BotoCoreError as exc:
            return [Check("backups", "s3", FAIL, f"cannot reach {s.s3_endpoint_url}: {exc}")]
        server = head.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("server", "s3")
        return [Check("backups", "s3", OK, f"bucket {s.s3_bucket} at {s.s3_endpoint_url} ({server})")]


def run_doctor(settings: LuminaSettings) -> list[Check]:
    """Every check, in the order the table shows them."""
    doc = _Doctor(settings)
    checks = [Check("settings", "valid", OK, f"data dir {doc.data_dir}")]
    checks += _guarded("data dir", "writable", doc.data_dir_checks)
    checks += _guarded("data dir", "restore", lambda: [Check("data dir", "restore", status, detail)
                                                       for status, detail in restore_state(doc.data_dir)])
    lock = DataDirLock(doc.data_dir)
    if doc.data_dir.exists():
        checks.append(doc.lock_check(lock))
    try:
        checks += _guarded("embedder", "active", doc.embedder_checks)
        checks += _guarded("llm", "path", doc.llm_checks)
        checks += _guarded("mid-term", "reachable", doc.midterm_checks)
        checks += _guarded("archive", "schema", doc.archive_checks)
        checks += _guarded("long-term", "collection", doc.vector_checks)
        checks += _guarded("graph", "schema", doc.graph_checks)
        checks += _guarded("derivations", "complete", doc.derivation_checks)
        checks += _guarded("derivations", "per user", doc.tier_match_checks)
        checks += _guarded("data dir", "rewrites", doc.swap_checks)
        checks += _guarded("backups", "s3", doc.s3_checks)
        checks += _guarded("tracing", "langsmith", doc.tracing_checks)
    finally:
        lock.release()
    return checks


def failed(checks: Iterable[Check]) -> list[Check]:
    return [c for c in checks if c.status == FAIL]


def print_checks(checks: list[Check], console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    style = {OK: "green", WARN: "yellow", SKIP: "dim", FAIL: "bold red"}
    table = Table(title="lumina-memory doctor")
    for column in ("component", "check", "status", "detail"):
        table.add_column(column, overflow="fold")
    for c in checks:
        table.add_row(c.component, c.check, f"[{style[c.status]}]{c.status}[/]", c.detail)
    console.print(table)
    bad = failed(checks)
    if bad:
        console.print(f"[bold red]{len(bad)} check(s) failed:[/] " + ", ".join(f"{c.component}/{c.check}" for c in bad))
    else:
        console.print("[green]all checks passed[/]")


def doctor_command(console=None) -> int:
    """What `lumina-memory doctor` runs: settings from the environment, the table, exit 1 on any FAIL."""
    from pydantic import ValidationError

    try:
        settings = LuminaSettings()
    except ValidationError as exc:
        checks = [Check("settings", "valid", FAIL, str(exc).replace("\n", " ")[:600])]
    else:
        checks = run_doctor(settings)
    print_checks(checks, console)
    return 1 if failed(checks) else 0
