"""Which erasure ledgers a restore applies, and what they cannot promise (graphs.erase's restore)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lumina_memory.nodes.services import Services
from lumina_memory.stores import known_locations
from lumina_memory.stores.backup_location import open_location
from lumina_memory.stores.ledger import LEDGER_FILE, Ledger, memory_ledger, read_file_ledger
from lumina_memory.stores.shared_state import shared_state_of


def where_db(services: Services) -> str:
    """The server mode's database, without its password (messages, reports)."""
    from lumina_memory.stores.pg_connection import describe

    return describe(services.settings.database_url)


def failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:300]


def restore_ledgers(services: Services, location, manifests: Sequence[dict]) -> dict[str, Any]:
    """Every erasure ledger a restore can reach: the target data dir's, the location's, those of every
    location the target remembers, and (from the manifests) the data dir that took the snapshots and the
    locations it knew. ``applied``: (where, Ledger) of those found; ``unreachable``: where -> why."""
    data_dir = services.settings.resolved_data_dir()
    applied: list[tuple[str, Any]] = []
    unreachable: dict[str, str] = {}
    seen: set[str] = set()

    def from_data_dir(path: Path) -> None:
        key = f"data dir {Path(path).resolve()}"
        if key in seen:
            return
        seen.add(key)
        if (Path(path) / LEDGER_FILE).exists():
            applied.append((key, read_file_ledger(Path(path))))

    def from_location(where: str) -> None:
        try:
            other = location if where == location.url else open_location(where, services.settings)
            if other.url in seen:
                return
            seen.add(other.url)
            text = other.read_text(LEDGER_FILE)
        except Exception as exc:  # noqa: BLE001 - reported in the restore's report
            unreachable[where] = failure(exc)
            return
        if text is not None:
            applied.append((other.url, Ledger(text)))

    state = shared_state_of(services)
    if state.shared:  # server mode: the memory's ledger is PostgreSQL's row, shared by every process
        applied.append((f"memory on {where_db(services)}", memory_ledger(state)))
    from_data_dir(data_dir)  # embedded: the memory's own; server mode: one left from before the switch, if any
    from_location(location.url)
    for where in known_locations.known(state):
        from_location(where)
    for manifest in manifests:
        source = manifest.get("source") or {}
        if source.get("data_dir") and Path(source["data_dir"]).is_dir():
            from_data_dir(Path(source["data_dir"]))
        for where in source.get("locations", []):
            from_location(where)
    return {"applied": applied, "unreachable": unreachable}


def restore_warnings(services: Services, location, manifests: Sequence[dict], applied: Sequence) -> list[str]:
    """What the ledgers found cannot promise. A snapshot whose source data dir is neither the target nor
    reachable here may hold users erased there after it was taken, whose erasure never reached this
    location (a copy of a backup location made before the erasure): nothing here can know them. A snapshot of
    a server-mode memory names its database: its ledger is reachable only when that is the target's."""
    data_dir = services.settings.resolved_data_dir().resolve()
    here = where_db(services) if services.settings.database_url else None
    newest = max((ledger.latest_at or 0.0 for _, ledger in applied), default=0.0)
    warnings = []
    for manifest in manifests:
        database = (manifest.get("source") or {}).get("database")
        source = (manifest.get("source") or {}).get("data_dir")
        if database is not None:
            vouched, source = database == here, f"the memory on {database}"
        else:
            vouched = source is not None and (Path(source).resolve() == data_dir or Path(source).is_dir())
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(manifest["created_at"])))
        if not vouched:
            latest = (time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(newest)) if newest else "none")
            warnings.append(
                f"snapshot {manifest['id']} (taken {when}) comes from "
                f"{source or 'a data dir the manifest does not name'}, whose erasure ledger is not reachable here: "
                f"users erased there after the snapshot stay out only if that erasure reached the ledgers applied "
                f"(latest erasure they know: {latest}). A copy of a backup location made before an erasure cannot "
                f"know it: restore from the original location, or next to the data dir that erased.")
    return warnings
