"""The maintenance graph's run state, and what its steps last did, kept in ``<data_dir>/maintenance-state.json``
(one process owns a data dir)."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from lumina_memory.stores.backup_location import LocalLocation

STATE_FILE = "maintenance-state.json"


def load_state(services) -> dict[str, Any]:
    text = LocalLocation(services.settings.resolved_data_dir()).read_text(STATE_FILE)
    return json.loads(text) if text else {}


def save_state(services, state: dict[str, Any]) -> None:
    LocalLocation(services.settings.resolved_data_dir()).write_text(STATE_FILE, json.dumps(state, indent=1, sort_keys=True))


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


class MaintenanceState(TypedDict, total=False):
    force: bool
    """Run every backup group now, whatever the schedules say."""
    now: float
    """The time to run as (epoch seconds); the context's wins; the clock when neither has it."""
    user_id: str
    """Only this user's lifecycle; the context's wins."""
    report: Annotated[dict[str, Any], _merge]
    """What each step did, by step name."""
    log: Annotated[list[str], operator.add]
