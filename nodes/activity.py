"""A10 for the nodes: record events in the activity log, read the recent ones back.

Recording never breaks a turn: a log that cannot be written (disk full, read-only data dir) is
reported in the process log, and the turn goes on. Events carry ids, counts and times; any text in
them is text the tiers already hold, redacted (S7).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from lumina_memory.stores.factory import open_activity_log
from lumina_memory.stores.protocols_files import ActivityLogStore

log = logging.getLogger("lumina.activity")
_LOGS: dict[tuple, ActivityLogStore] = {}
_GUARD = threading.Lock()
QUERY_CHARS = 200  # a recall's question, as far as recent-activity context needs it


def activity_log(settings) -> ActivityLogStore:
    key = (settings.database_url or str(settings.resolved_data_dir()), settings.activity_log_max_bytes,
           settings.activity_log_keep)
    with _GUARD:
        if key not in _LOGS:
            _LOGS[key] = open_activity_log(settings)
        return _LOGS[key]


def record(services, user_id: str, event: str, **fields: Any) -> None:
    try:
        activity_log(services.settings).append(user_id, event, **fields)
    except OSError as exc:
        log.warning("activity log not written event=%s error=%s", event, exc)


def recent_activity(services, user_id: str, limit: int = 20, events: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The user's last ``limit`` events, oldest first (recent-activity context: "what happened lately")."""
    return activity_log(services.settings).recent(user_id, limit, events)
