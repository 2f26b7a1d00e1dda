"""Exports and imports in the audit log (stores.audit): a user's whole memory leaving or entering is recorded like
an erasure or a forgotten memory, with counts and the user as a keyed hash, never content."""

from __future__ import annotations

import json
import time
from typing import Any

from lumina_memory.stores.factory import open_audit_log
from lumina_memory.stores.secret import memory_secret

EXPORTED, IMPORTED = "memory_exported", "memory_imported"


def audit_log(services):
    return open_audit_log(services.stores.archive, memory_secret(services.settings))


def record(services, event: str, actor: str, user_id: str, detail: dict[str, Any]) -> None:
    audit_log(services).append(event, actor, user_id, json.dumps({**detail, "at": time.time()}, sort_keys=True))
