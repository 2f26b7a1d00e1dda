"""The ``maintenance`` graph: the operational steps a LangGraph server runs on a cron (langgraph.json),
and `lumina-memory maintain` runs by hand or from cron.

    record_settings → idle_segments → lifecycle_owed → lifecycle_days → lifecycle_reembed
      → lifecycle_relations → lifecycle_deletions → lifecycle_summary → knowledge_daily → knowledge_weekly
      → knowledge_monthly → vector_indexes → scheduled_backups → prune_backups → retention → store_upkeep → END

Each step is a plain node (state in, a report entry out); the lifecycle's are graphs.maintenance_lifecycle,
knowledge's graphs.maintenance_knowledge.
Per-run inputs come as typed context (``MaintenanceContext``: optional ``user_id`` and ``now``, what a
LangGraph server's cron passes) or, as before, in the input state; the context wins. What the steps last
did is kept in ``<data_dir>/maintenance-state.json``: a backup group runs when its schedule
(``backup_redis_seconds``, ``backup_archive_seconds``, ``backup_vectors_seconds``) has passed since its last
run, or when ``force`` is set. A backup reads the run's LangGraph store (``runtime.store``: on a LangGraph
server, the one it serves) rather than opening the data directory's store a second time.
Each step runs under its job's lease (``STEP_LEASES``, stores.leases), so workers running maintenance at once
(replicas' crons, a CLI beside a server) do each job once; a step another worker is running reports ``skipped``.
"""

from __future__ import annotations

import importlib
import json
import logging
import time
from contextlib import nullcontext
from datetime import datetime
from typing import Any, Callable

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, field_validator

from lumina_memory.nodes.costs_graph import GraphOperations
from lumina_memory.nodes.services import Services, default_services
from lumina_memory.stores.backup import GROUPS, prune
from lumina_memory.stores.backup_location import open_location
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.langgraph_store import LuminaStore
from lumina_memory.stores.leases import leases_of, skipped

from .erase import audit_log, backup_now, default_backup_location
from .maintenance_knowledge import KNOWLEDGE_STEPS
from .maintenance_state import MaintenanceState, load_state, update_state
from .maintenance_lifecycle import LIFECYCLE_STEPS, lifecycle_summary

log = logging.getLogger("lumina.maintenance")
SCHEDULE = {"redis": "backup_redis_seconds", "archive": "backup_archive_seconds", "vectors": "backup_vectors_seconds"}
_SECRET_WORDS = ("key", "password", "secret", "token")


class MaintenanceContext(BaseModel):
    """Per-run inputs, e.g. a LangGraph cron's ``context``: ``{"user_id": "kana", "now": "2026-06-01T04:00+09:00"}``."""

    model_config = ConfigDict(frozen=True, extra="ignore")  # a server may add its own keys (assistant_id...)
    user_id: str | None = Field(default=None, description="Only this user's lifecycle (the other steps are per data directory).")
    now: datetime | float | None = Field(default=None, description="The time to run as: ISO-8601 or epoch seconds (default: the clock).")

    @field_validator("user_id")
    @classmethod
    def _valid_user(cls, value: str | None) -> str | None:
        return None if value is None else validate_id(value, "user_id")

    def epoch(self) -> float | None:
        if self.now is None:
            return None
        return self.now.timestamp() if isinstance(self.now, datetime) else float(self.now)


def _public_settings(services: Services) -> dict[str, Any]:
    """Settings without secrets, as JSON values (what the audit log may show)."""
    raw = json.loads(services.settings.model_dump_json())
    return {k: v for k, v in raw.items() if not any(w in k.lower() for w in _SECRET_WORDS)}


def record_settings(state: MaintenanceState, services: Services) -> dict:
    """Audit a settings change since the last maintenance run (names and values, never secrets)."""
    saved = load_state(services)
    current = _public_settings(services)
    before = saved.get("settings")
    changed = sorted(k for k in current if before is not None and before.get(k) != current[k])
    if changed:
        detail = json.dumps({k: {"from": before.get(k), "to": current[k]} for k in changed}, sort_keys=True, default=str)
        audit_log(services).append("settings_changed", "maintenance", None, detail)
    update_state(services, "settings", current, replace=True)
    return {"report": {"record_settings": {"changed": changed}}}


def scheduled_backups(state: MaintenanceState, services: Services, store=None) -> dict:
    """The backup groups whose schedule has passed. ``store``: the run's LangGraph store (a server's
    ``runtime.store``), which the backup reads instead of opening the data directory's store again.
    Run under the ``backup`` lease (``STEP_LEASES``): what is due is read inside it, so a worker that waited
    for another's backup does not take the same groups again."""
    now = state.get("now") or time.time()
    saved = load_state(services)
    last = saved.get("last_backup", {})
    due = [g for g in GROUPS if state.get("force") or now - float(last.get(g, 0)) >= getattr(services.settings, SCHEDULE[g])]
    if not due:
        return {"report": {"scheduled_backups": {"due": [], "snapshot": None}}}
    manifest = backup_now(services, groups=due, actor="maintenance", store=store)
    update_state(services, "last_backup", {g: now for g in due})
    return {"report": {"scheduled_backups": {"due": due, "snapshot": manifest["id"]}}}


def prune_backups(state: MaintenanceState, services: Services) -> dict:
    settings = services.settings
    location = open_location(default_backup_location(services), settings)
    deleted = prune(location, settings.backup_keep, settings.retention_backups_days, now=state.get("now"))
    if deleted:
        audit_log(services).append("backups_pruned", "maintenance", None, json.dumps({"location": location.url, "snapshots": deleted}))
    return {"report": {"prune_backups": {"deleted": deleted}}}


def retention(state: MaintenanceState, services: Services) -> dict:
    """lumina_memory.nodes.retention.enforce_retention, when this version has it."""
    try:
        module = importlib.import_module("lumina_memory.nodes.retention")
    except ModuleNotFoundError as exc:
        if exc.name != "lumina_memory.nodes.retention":
            raise
        return {"report": {"retention": "not available in this version"}}
    return {"report": {"retention": module.enforce_retention(services, now=state.get("now"))}}


def store_upkeep(state: MaintenanceState, services: Services) -> dict:
    """After retention's deletions: the archive file compacted, the archive and the graph checked against each
    other (nodes.store_upkeep), once ``upkeep_interval_seconds`` has passed since the last time (or when ``force``
    is set): the check reads the whole graph. Run under its lease, so what is due is read inside it."""
    from lumina_memory.nodes.store_upkeep import store_upkeep as upkeep

    now = state.get("now") or time.time()
    last = float(load_state(services).get("store_upkeep", {}).get("last", 0))
    if not state.get("force") and now - last < services.settings.upkeep_interval_seconds:
        return {"report": {"store_upkeep": {"due": False, "last": last}}}
    report = upkeep(services)
    update_state(services, "store_upkeep", {"last": now})
    return {"report": {"store_upkeep": {"due": True, **report}}}


def vector_indexes(state: MaintenanceState, services: Services) -> dict:
    """The embedded vector store's indexes, once enough points wait unindexed (graphs.vector_indexes); after the
    lifecycle and knowledge steps, which re-embed points."""
    from .vector_indexes import build_due_indexes

    return {"report": {"vector_indexes": build_due_indexes(services, force=bool(state.get("force")))}}


def idle_segments(state: MaintenanceState, services: Services) -> dict:
    """A5: quiet conversations' open segments encoded now (graphs.idle_segments)."""
    from .idle_segments import flush_idle_threads

    return {"report": {"idle_segments": flush_idle_threads(services, state.get("now"))}}


STEPS: tuple[Callable[[MaintenanceState, Services], dict], ...] = (
    record_settings, idle_segments, *LIFECYCLE_STEPS, *KNOWLEDGE_STEPS, vector_indexes, scheduled_backups, prune_backups,
    retention, store_upkeep)

NEEDS_STORE = frozenset({scheduled_backups})
"""Steps that read the LangGraph store: they get the run's (``runtime.store``) when it is a LuminaStore."""

STEP_LEASES: dict[str, str] = {
    "record_settings": "maintenance:settings", "idle_segments": "maintenance:idle-segments",
    # One lease for the daily batch and its catch-up, whole or for one user: a day runs every user due on it in
    # one transaction, and a lease per user would hold one server lock per user at once.
    **{step.__name__: "lifecycle" for step in LIFECYCLE_STEPS if step is not lifecycle_summary},
    "knowledge_daily": "knowledge:consolidation", "knowledge_weekly": "knowledge:review",
    "knowledge_monthly": "knowledge:forgetting", "vector_indexes": "vector-indexes",
    "scheduled_backups": "backup", "prune_backups": "backup", "retention": "retention",
    "store_upkeep": "store-upkeep",
}
"""The lease (stores.leases) each step runs under, so that processes running maintenance at once (replicas'
crons, a CLI) do each job once: a step reads what is already done inside its lease. A step whose lease another
worker holds past ``LEASE_WAIT`` reports ``skipped`` with the reason instead of running."""
LEASE_WAIT = 60.0

MAINTENANCE_OPERATIONS = GraphOperations({step.__name__: "maintain" for step in STEPS}, {STEPS[0].__name__},
                                         {STEPS[-1].__name__})

StepProgress = Callable[[str, int, int | None], None]
"""(step, done, total) as steps stream it; total None: the step started and counts nothing."""


def _inputs(state: MaintenanceState, context: MaintenanceContext | None) -> MaintenanceState:
    """The state a step sees: the context's ``now``/``user_id`` over the state's, the clock as the last resort."""
    resolved: dict[str, Any] = dict(state)
    if context is not None and context.user_id is not None:
        resolved["user_id"] = context.user_id
    if context is not None and context.epoch() is not None:
        resolved["now"] = context.epoch()
    if resolved.get("user_id") is not None:
        resolved["user_id"] = validate_id(resolved["user_id"], "user_id")
    if resolved.get("now") is None:  # not pinned in the state: a cron on a thread would keep a stale time
        resolved["now"] = time.time()
    return resolved  # type: ignore[return-value]


def _lumina_store(store):
    """The run's store when it is one the registry can walk (a LuminaStore); None lets the registry find or
    open the data directory's own."""
    return store if isinstance(store, LuminaStore) else None


def build_maintenance_graph(services: Callable[[], Services] = default_services):
    builder = StateGraph(MaintenanceState, context_schema=MaintenanceContext)
    previous = START
    for step in STEPS:
        def node(state: MaintenanceState, runtime: Runtime[MaintenanceContext], step=step) -> dict:
            name = step.__name__
            runtime.stream_writer({"step": name, "done": 0, "total": None})
            inputs = _inputs(state, runtime.context)
            started = time.perf_counter()
            lease = STEP_LEASES.get(name)

            def run_step() -> dict:
                with leases_of(services()).hold(lease, wait=LEASE_WAIT) if lease else nullcontext(True) as got:
                    if not got:
                        log.warning("maintenance step=%s skipped: lease %r held by another worker", name, lease)
                        return {"report": {name: skipped(lease, LEASE_WAIT)}}
                    if step in NEEDS_STORE:
                        return step(inputs, services(), store=_lumina_store(runtime.store))
                    return step(inputs, services())

            # Issue 49: a run is one `maintain` operation, each step a stage with its model calls.
            out = MAINTENANCE_OPERATIONS.run_node(name, services(), inputs.get("user_id") or "", "maintenance", run_step)
            log.info("maintenance step=%s seconds=%.2f", name, time.perf_counter() - started)
            return out

        builder.add_node(step.__name__, node)
        builder.add_edge(previous, step.__name__)
        previous = step.__name__
    builder.add_edge(previous, END)
    return builder.compile()


def run_maintenance(services: Services, *, force: bool = False, now: float | None = None,
                    user_id: str | None = None, progress: StepProgress | None = None) -> dict[str, Any]:
    """Every step once; ``now``/``user_id`` travel as the typed context. ``progress`` gets each step's
    (step, done, total) from the graph's custom stream (the CLI's bars); it never enters the state."""
    if user_id is not None:
        validate_id(user_id, "user_id")  # InvalidInput (the CLI's exit 2), before the context's own check
    context = MaintenanceContext(user_id=user_id, now=now or time.time())
    graph = build_maintenance_graph(lambda: services)
    state: dict[str, Any] = {"force": force, "report": {}}
    if progress is None:
        return graph.invoke(state, context=context)["report"]
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(state, context=context, stream_mode=["custom", "values"]):
        if mode == "custom":
            progress(chunk["step"], chunk["done"], chunk["total"])
        else:
            final = chunk
    return final["report"]


graph = build_maintenance_graph()  # langgraph.json: services open on the first run, not at import
