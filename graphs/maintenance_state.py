"""The maintenance graph's run state, and what its steps last did: the document ``maintenance-state.json`` of
the memory's shared state (stores.shared_state: the data dir's file, or a row on the server mode's PostgreSQL
that every worker reads and updates atomically)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from lumina_memory.stores.shared_state import shared_state_of

STATE_FILE = "maintenance-state.json"


def load_state(services) -> dict[str, Any]:
    return dict(shared_state_of(services).read(STATE_FILE) or {})


def save_state(services, state: dict[str, Any]) -> None:
    shared_state_of(services).write(STATE_FILE, state)


def update_state(services, key: str, changes: dict[str, Any], *, replace: bool = False) -> dict[str, Any]:
    """Merge ``changes`` into the saved ``key`` entry (``replace``: put them in its place) in one atomic
    read-modify-write of the shared state: steps and workers that run at once change different entries, and none
    writes back another's older copy. The whole state after the change."""

    def change(state: dict[str, Any] | None) -> dict[str, Any]:
        state = dict(state or {})
        state[key] = dict(changes) if replace else {**state.get(key, {}), **changes}
        return state

    return shared_state_of(services).update(STATE_FILE, change)


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
