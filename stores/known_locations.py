"""Every backup location this memory ever wrote to, and the erasures still owed to any of them.

``backup-locations.json``, a document of the memory's shared state (stores.shared_state: a 0600 file in the
data directory, or a row on the server mode's PostgreSQL that every process updates atomically): a location is
added when a backup to it starts, before any byte goes out, and when a restore reads from it (the restored
users' data is there too), so an erasure can reach every copy this memory made or came from. A location an
erasure could not reach is listed under ``owed`` with the users still to scrub there; the next erasure and the
next backup (maintenance runs backups) retry it. Those ids stay in clear until then, like the
erasure-in-progress mark: scrubbing a backup needs the id its files hold.
"""

from __future__ import annotations

import time
from typing import Any

from .shared_state import as_shared_state

LOCATIONS_FILE = "backup-locations.json"


def _normal(data: dict[str, Any] | None) -> dict[str, Any]:
    data = data or {}
    return {"locations": dict(data.get("locations", {})), "owed": {k: list(v) for k, v in data.get("owed", {}).items()}}


def _change(where, fn) -> None:
    """Read, change (``fn`` edits the normal form in place) and write the document in one atomic update."""

    def apply(current):
        data = _normal(current)
        fn(data)
        data["owed"] = {k: sorted(set(v)) for k, v in data["owed"].items() if v}
        return {"format": 1, **data}

    as_shared_state(where).update(LOCATIONS_FILE, apply)


def remember(where, url: str, why: str = "backup") -> None:
    """Record ``url`` (a folder's resolved path or an s3:// URL) as a place this memory's users may be;
    ``where`` the memory's SharedState or its data dir."""
    now = time.time()

    def add(data):
        entry = data["locations"].setdefault(url, {"first_at": now, "why": why})
        if entry.get("last_at") is None or why == "backup":
            entry["last_at"] = now

    _change(where, add)


def known(where) -> list[str]:
    """Every location remembered (and every one still owed an erasure), in a stable order."""
    data = _normal(as_shared_state(where).read(LOCATIONS_FILE))
    return sorted(set(data["locations"]) | set(data["owed"]))


def owed(where) -> dict[str, list[str]]:
    """location -> users whose erasure could not reach it yet."""
    return _normal(as_shared_state(where).read(LOCATIONS_FILE))["owed"]


def owe(where, url: str, user_id: str) -> None:
    def add(data):
        data["owed"].setdefault(url, []).append(user_id)
        data["locations"].setdefault(url, {"first_at": time.time(), "why": "erasure"})

    _change(where, add)


def paid(where, url: str, user_id: str) -> None:
    def drop(data):
        data["owed"][url] = [u for u in data["owed"].get(url, []) if u != user_id]

    if user_id in owed(where).get(url, []):
        _change(where, drop)
