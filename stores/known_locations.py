"""Every backup location a data directory ever wrote to, and the erasures still owed to any of them.

``backup-locations.json`` in the data directory (0600): a location is added when a backup to it starts,
before any byte goes out, and when a restore reads from it (the restored users' data is there too), so
an erasure can reach every copy this data directory made or came from. A location an erasure could not
reach is listed under ``owed`` with the users still to scrub there; the next erasure and the next backup
(maintenance runs backups) retry it. Those ids stay in clear until then, like the erasure-in-progress
mark: scrubbing a backup needs the id its files hold.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

LOCATIONS_FILE = "backup-locations.json"


def _read(data_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((Path(data_dir) / LOCATIONS_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    return {"locations": dict(data.get("locations", {})), "owed": {k: list(v) for k, v in data.get("owed", {}).items()}}


def _write(data_dir: Path, data: dict[str, Any]) -> None:
    from .backup_location import LocalLocation

    data["owed"] = {k: sorted(set(v)) for k, v in data["owed"].items() if v}
    LocalLocation(Path(data_dir)).write_text(LOCATIONS_FILE, json.dumps({"format": 1, **data}, indent=1, sort_keys=True) + "\n")


def remember(data_dir: Path, where: str, why: str = "backup") -> None:
    """Record ``where`` (a folder's resolved path or an s3:// URL) as a place this data dir's users may be."""
    data = _read(data_dir)
    now = time.time()
    entry = data["locations"].setdefault(where, {"first_at": now, "why": why})
    if entry.get("last_at") is None or why == "backup":
        entry["last_at"] = now
    _write(data_dir, data)


def known(data_dir: Path) -> list[str]:
    """Every location remembered (and every one still owed an erasure), in a stable order."""
    data = _read(data_dir)
    return sorted(set(data["locations"]) | set(data["owed"]))


def owed(data_dir: Path) -> dict[str, list[str]]:
    """location -> users whose erasure could not reach it yet."""
    return _read(data_dir)["owed"]


def owe(data_dir: Path, where: str, user_id: str) -> None:
    data = _read(data_dir)
    data["owed"].setdefault(where, []).append(user_id)
    data["locations"].setdefault(where, {"first_at": time.time(), "why": "erasure"})
    _write(data_dir, data)


def paid(data_dir: Path, where: str, user_id: str) -> None:
    data = _read(data_dir)
    if user_id in data["owed"].get(where, []):
        data["owed"][where] = [u for u in data["owed"][where] if u != user_id]
        _write(data_dir, data)
