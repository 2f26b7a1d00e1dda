"""What the maintenance steps last did, kept in ``<data_dir>/maintenance-state.json`` (one process owns a data dir)."""

from __future__ import annotations

import json
from typing import Any

from lumina_memory.stores.backup_location import LocalLocation

STATE_FILE = "maintenance-state.json"


def load_state(services) -> dict[str, Any]:
    text = LocalLocation(services.settings.resolved_data_dir()).read_text(STATE_FILE)
    return json.loads(text) if text else {}


def save_state(services, state: dict[str, Any]) -> None:
    LocalLocation(services.settings.resolved_data_dir()).write_text(STATE_FILE, json.dumps(state, indent=1, sort_keys=True))
