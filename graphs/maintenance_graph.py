"""The ``maintenance`` graph: the operational steps a LangGraph server runs on a cron (langgraph.json),
and `lumina-memory maintain` runs by hand or from cron.

    record_settings → idle_segments → lifecycle → scheduled_backups → prune_backups → retention → END

Each step is a plain node (state in, a report entry out), so later issues add theirs (the lifecycle's
daily steps) as more nodes. What the steps last did is kept in ``<data_dir>/maintenance-state.json``:
a backup group runs when its schedule (``backup_redis_seconds``, ``backup_archive_seconds``,
``backup_vectors_seconds``) has passed since its last run, or when ``force`` is set.
"""

from __future__ import annotations

import importlib
import json
import logging
import operator
import time
from typing import Annotated, Any, Callable

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from nodes.services import Services, default_services
from stores.backup import GROUPS, prune
from stores.backup_location import LocalLocation, open_location
from stores.ids import validate_id

from .erase import audit_log, backup_now, default_backup_location

log = logging.getLogger("lumina.maintenance")
STATE_FILE = "maintenance-state.json"
SCHEDULE = {"redis": "backup_redis_seconds", "archive": "backup_archive_seconds", "vectors": "backup_vectors_seconds"}
_SECRET_WORDS = ("key", "password", "secret", "token")


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


class MaintenanceState(TypedDict, total=False):
    force: bool
    """Run every backup group now, whatever the schedules say."""
    now: float
    user_id: str
    """Only this user's lifecycle (the other steps are per data directory)."""
    report: Annotated[dict[str, Any], _merge]
    """What each step did, by step name."""
    log: Annotated[list[str], operator.add]


def _load_state(services: Services) -> dict[str, Any]:
    text = LocalLocation(services.settings.resolved_data_dir()).read_text(STATE_FILE)
    return json.loads(text) if text else {}


def _save_state(services: Services, state: dict[str, Any]) -> None:
    LocalLocation(services.settings.resolved_data_dir()).write_text(STATE_FILE, json.dumps(state, indent=1, sort_keys=True))


def _public_settings(services: Services) -> dict[str, Any]:
    """Settings without secrets, as JSON values (what the audit log may show)."""
    raw = json.loads(services.settings.model_dump_json())
    return {k: v for k, v in raw.items() if not any(w in k.lower() for w in _SECRET_WORDS)}


def record_settings(state: MaintenanceState, services: Services) -> dict:
    """Audit a settings change since the last maintenance run (names and values, never secrets)."""
    saved = _load_state(services)
    current = _public_settings(services)
    before = saved.get("settings")
    changed = sorted(k for k in current if before is not None and before.get(k) != current[k])
    if changed:
        detail = json.dumps({k: {"from": before.get(k), "to": current[k]} for k in changed}, sort_keys=True, default=str)
        audit_log(services).append("settings_changed", "maintenance", None, detail)
    _save_state(services, {**saved, "settings": current})
    return {"report": {"record_settings": {"changed": changed}}}


def scheduled_backups(state: MaintenanceState, services: Services) -> dict:
    now = state.get("now") or time.time()
    saved = _load_state(services)
    last = saved.get("last_backup", {})
    due = [g for g in GROUPS if state.get("force") or now - float(last.get(g, 0)) >= getattr(services.settings, SCHEDULE[g])]
    if not due:
        return {"report": {"scheduled_backups": {"due": [], "snapshot": None}}}
    manifest = backup_now(services, groups=due, actor="maintenance")
    _save_state(services, {**saved, "last_backup": {**last, **{g: now for g in due}}})
    return {"report": {"scheduled_backups": {"due": due, "snapshot": manifest["id"]}}}


def prune_backups(state: MaintenanceState, services: Services) -> dict:
    settings = services.settings
    location = open_location(default_backup_location(services), settings)
    deleted = prune(location, settings.backup_keep, settings.retention_backups_days, now=state.get("now"))
    if deleted:
        audit_log(services).append("backups_pruned", "maintenance", None, json.dumps({"location": location.url, "snapshots": deleted}))
    return {"report": {"prune_backups": {"deleted": deleted}}}


def retention(state: MaintenanceState, services: Services) -> dict:
    """nodes.retention.enforce_retention, when this version has it."""
    try:
        module = importlib.import_module("nodes.retention")
    except ModuleNotFoundError as exc:
        if exc.name != "nodes.retention":
            raise
        return {"report": {"retention": "not available in this version"}}
    return {"report": {"retention": module.enforce_retention(services, now=state.get("now"))}}


def idle_segments(state: MaintenanceState, services: Services) -> dict:
    """A5: quiet conversations' open segments encoded now (graphs.idle_segments)."""
    from .idle_segments import flush_idle_threads

    return {"report": {"idle_segments": flush_idle_threads(services, state.get("now"))}}


def lifecycle(state: MaintenanceState, services: Services) -> dict:
    """F9: the forgetting lifecycle's daily batch, every missed day once (nodes.lifecycle.run)."""
    from nodes.lifecycle.run import run_lifecycle

    report = run_lifecycle(services, now=state.get("now") or time.time(), user_id=state.get("user_id"))
    return {"report": {"lifecycle": report}}


STEPS: tuple[Callable[[MaintenanceState, Services], dict], ...] = (
    record_settings, idle_segments, lifecycle, scheduled_backups, prune_backups, retention)


def build_maintenance_graph(services: Callable[[], Services] = default_services):
    builder = StateGraph(MaintenanceState)
    previous = START
    for step in STEPS:
        def node(state: MaintenanceState, step=step) -> dict:
            started = time.perf_counter()
            out = step(state, services())
            log.info("maintenance step=%s seconds=%.2f", step.__name__, time.perf_counter() - started)
            return out

        builder.add_node(step.__name__, node)
        builder.add_edge(previous, step.__name__)
        previous = step.__name__
    builder.add_edge(previous, END)
    return builder.compile()


def run_maintenance(services: Services, *, force: bool = False, now: float | None = None,
                    user_id: str | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {"force": force, "now": now or time.time(), "report": {}}
    if user_id is not None:
        state["user_id"] = validate_id(user_id, "user_id")
    out = build_maintenance_graph(lambda: services).invoke(state)
    return out["report"]


graph = build_maintenance_graph()  # langgraph.json: services open on the first run, not at import
