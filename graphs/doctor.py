"""`lumina-memory doctor`: is every configured backend reachable, current and shaped as we expect?

Read-mostly: it never creates a table, collection or constraint, and it does not start the embedded Redis
(it runs the binary's ``--version`` instead). It holds the data directory's lock while it looks, so it
cannot race a writer; when another process holds it, the embedded files are reported as SKIP with the
holder named, and what can be checked from outside (Redis over its socket, the collection record) still is.

Statuses: OK, WARN (works, but look), SKIP (not configured or not checkable now), FAIL (exit code 1).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from lumina_memory.stores.backup import restore_state
from lumina_memory.stores.datadir_lock import DataDirLock
from lumina_memory.stores.errors import DataDirLocked
from lumina_memory.stores.file_swap import leftovers
from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.shared_state import open_shared_state

from .doctor_boundary import BoundaryChecks
from .doctor_check import FAIL, OK, SKIP, TIMEOUT, WARN, Check
from .doctor_derived import DerivationChecks
from .doctor_engines import EngineChecks
from .doctor_vectors import VectorChecks

__all__ = ["FAIL", "OK", "SKIP", "WARN", "Check", "doctor_command", "failed", "print_checks", "run_doctor"]


def _guarded(component: str, check: str, fn: Callable[[], Iterable[Check]]) -> list[Check]:
    """A check that raises becomes one FAIL row naming the exception, never a traceback."""
    try:
        return list(fn())
    except Exception as exc:  # noqa: BLE001 - the report is the handler
        return [Check(component, check, FAIL, f"{type(exc).__name__}: {exc}".strip()[:400])]


class _Doctor(EngineChecks, VectorChecks, DerivationChecks, BoundaryChecks):
    """Every check; the engine, vector and derivation groups live in their own modules."""

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
    server = bool(settings.database_url)
    checks = [Check("settings", "valid", OK, f"server mode on {doc.pg_where()}: no data-dir lock; data dir "
                    f"{doc.data_dir}" if server else f"data dir {doc.data_dir}")]
    checks += _guarded("data dir", "writable", doc.data_dir_checks)
    checks += _guarded("data dir", "restore", lambda: [Check("data dir", "restore", status, detail)
                                                       for status, detail in restore_state(open_shared_state(settings))])
    lock = DataDirLock(doc.data_dir)
    if doc.data_dir.exists() and not server:
        checks.append(doc.lock_check(lock))
    try:
        checks += _guarded("embedder", "active", doc.embedder_checks)
        checks += _guarded("llm", "path", doc.llm_checks)
        checks += _guarded("mid-term", "reachable", doc.midterm_checks)
        checks += _guarded("archive", "schema", doc.archive_checks)
        checks += _guarded("long-term", "collection", doc.vector_checks)
        checks += _guarded("graph", "schema", doc.graph_checks)
        checks += _guarded("graph", "user boundary", doc.graph_boundary_checks)
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
