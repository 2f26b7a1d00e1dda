"""A11: replies whose process died while generating them, recovered from their journal files.

``recover_replies_once`` runs when a process opens a data directory (nodes.services.open_services) and
before its first reply (nodes.respond): every orphaned journal becomes a ``reply_interrupted`` event in the
user's activity log.
"""

from __future__ import annotations

import logging
import threading

from lumina_memory.stores.factory import open_journal

from .activity import record

log = logging.getLogger("lumina.respond")

_recovered: set[str] = set()
_recover_lock = threading.Lock()


def recover_replies(services) -> list[dict]:
    """A11: replies whose process died while generating them, read from their journal files (a torn
    last line skipped), recorded as ``reply_interrupted`` in the user's activity log; files removed."""
    journal = open_journal(services.settings)
    found = journal.recover_orphans()
    for entry in found:
        record(services, entry["user"], "reply_interrupted", reply_id=entry.get("reply_id"),
               character=entry.get("character"), chars=len(entry["text"]), chunks=entry["chunks"],
               started=entry.get("at"), text=entry["text"][:2_000])
    if found:
        log.warning("recovered interrupted replies count=%d", len(found))
    return found


def recover_replies_once(services) -> None:
    """``recover_replies`` the first time a process asks for a memory (at start-up: open_services): its data
    directory, or its database in server mode (where any process takes the replies of one that died)."""
    key = services.settings.database_url or str(services.settings.resolved_data_dir())
    with _recover_lock:
        if key in _recovered:
            return
        _recovered.add(key)
    try:
        recover_replies(services)
    except OSError as exc:
        log.warning("journal recovery failed error=%s", exc)
