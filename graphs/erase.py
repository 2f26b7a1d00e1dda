"""Erase a user everywhere (L11), and the backup/restore operations (L10), on an opened Services.

    plan = erase_plan(services, "alice")                  # counts per place + a confirmation token
    report = erase_user(services, "alice", plan["token"]) # every place, scrubbed, backups rewritten

Both walk the registry (graphs.registry), so a place added later is covered without changes here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nodes.services import Services
from stores import backup as backups
from stores.audit import AuditLog
from stores.backup_location import open_location
from stores.erasure import (
    check_token, erase_places, erasures_in_progress, make_token, mark_erasure_finished, mark_erasure_started, plan,
)
from stores.ids import validate_id
from stores.ledger import location_ledger, read_file_ledger, write_file_ledger, LEDGER_FILE
from stores.secret import data_dir_secret

from .registry import open_registry

log = logging.getLogger("lumina.erase")


def default_backup_location(services: Services) -> str:
    settings = services.settings
    if settings.backup_location:
        return settings.backup_location
    data_dir = settings.resolved_data_dir()
    return str(data_dir.parent / f"{data_dir.name}-backups")


def audit_log(services: Services) -> AuditLog:
    return AuditLog(services.stores.archive, data_dir_secret(services.settings.resolved_data_dir()))


def erase_plan(services: Services, user_id: str, *, store=None, checkpoints: Path | None = None,
               extra_places: Sequence = ()) -> dict[str, Any]:
    validate_id(user_id, "user_id")
    with open_registry(services, store=store, checkpoints=checkpoints, extra_places=extra_places) as places:
        counts = plan(places, user_id)
    key = data_dir_secret(services.settings.resolved_data_dir())
    token, expiry = make_token(key, user_id, services.settings.erase_token_ttl_seconds)
    return {"user_id": user_id, "counts": counts, "token": token, "expires_at": expiry}


def erase_user(
    services: Services, user_id: str, token: str, *, actor: str = "api", store=None,
    checkpoints: Path | None = None, backup_locations: list[str] | None = None, extra_places: Sequence = (),
) -> dict[str, Any]:
    """Erase every trace of the user: every place, scrubbed; every backup at ``backup_locations``
    (default: the configured one) rewritten; the ledgers record the erasure so no restore brings the user
    back; the audit log records it (counts, no content, the user as a keyed hash)."""
    validate_id(user_id, "user_id")
    data_dir = services.settings.resolved_data_dir()
    check_token(data_dir_secret(data_dir), user_id, token, consume_in=data_dir)  # a token erases once
    return _erase_everywhere(services, user_id, actor=actor, store=store, checkpoints=checkpoints,
                             backup_locations=backup_locations, extra_places=extra_places)


def _erase_everywhere(services: Services, user_id: str, *, actor: str, store=None, checkpoints: Path | None = None,
                      backup_locations: list[str] | None = None, extra_places: Sequence = ()) -> dict[str, Any]:
    data_dir = services.settings.resolved_data_dir()
    # Marked before anything goes: until the mark is cleared nothing is ingested for the id, and the next
    # open finishes the erasure (finish_interrupted_erasures).
    mark_erasure_started(data_dir, user_id)
    # The ledgers first: an erasure that dies half-way must still keep restores from resurrecting the user.
    ledger = read_file_ledger(data_dir)
    ledger.add(user_id)
    write_file_ledger(data_dir, ledger)
    locations = [open_location(w, services.settings) for w in (backup_locations or [default_backup_location(services)])]
    for location in locations:
        remote = location_ledger(location)
        remote.add(user_id)
        location.write_text(LEDGER_FILE, remote.text())
    with open_registry(services, store=store, checkpoints=checkpoints, extra_places=extra_places) as places:
        removed = erase_places(places, user_id)
        in_backups = {loc.url: backups.forget_in_backups(places, loc, user_id) for loc in locations}
    detail = json.dumps({"removed": {k: v for k, v in removed.items() if v},
                         "backups": {url: sum(v.values()) for url, v in in_backups.items()}}, sort_keys=True)
    audit_log(services).append("user_erased", actor, user_id, detail)
    mark_erasure_finished(data_dir, user_id)
    return {"removed": removed, "backups": in_backups}


def finish_interrupted_erasures(services: Services, *, store=None, checkpoints: Path | None = None) -> list[str]:
    """Complete every erasure a dead process left half-done (its confirmation was given then); the users."""
    users = erasures_in_progress(services.settings.resolved_data_dir())
    for user_id in users:
        log.warning("finishing the interrupted erasure of a user (audit log has the keyed id)")
        _erase_everywhere(services, user_id, actor="recovery: interrupted erasure", store=store, checkpoints=checkpoints)
    return users


def is_erased_for(services: Services, location=None):
    """The restore filter: erased per the data dir's ledger or the location's."""
    ledgers = [read_file_ledger(services.settings.resolved_data_dir())]
    if location is not None:
        ledgers.append(location_ledger(location))
    return lambda user_id: any(user_id in ledger for ledger in ledgers)


def backup_now(services: Services, where: str | None = None, *, groups=None, actor: str = "api", store=None,
               checkpoints: Path | None = None) -> dict[str, Any]:
    location = open_location(where or default_backup_location(services), services.settings)
    with open_registry(services, store=store, checkpoints=checkpoints) as places:
        manifest = backups.take_backup(places, location, groups=groups, meta={"backends": services.stores.backends})
    counts = {name: entry["count"] for name, entry in manifest["places"].items()}
    audit_log(services).append("backup", actor, None, json.dumps({"location": location.url, "snapshot": manifest["id"],
                                                                  "counts": counts}, sort_keys=True))
    return manifest


def restore_from(services: Services, where: str, snapshot_id: str | None = None, *, actor: str = "api",
                 store=None, checkpoints: Path | None = None, allow_non_empty: bool = False) -> dict[str, Any]:
    """Restore into this Services' backends (an empty data directory, or production servers)."""
    location = open_location(where, services.settings)
    if not allow_non_empty:
        held = services.stores.archive.counts()
        if held["turns"] or held["segments"]:
            from stores.errors import InvalidInput

            raise InvalidInput("restore target", f"{services.settings.resolved_data_dir()} already holds "
                               f"{held['turns']} turns; restore into an empty data directory")
    with open_registry(services, store=store, checkpoints=checkpoints, open_store=True) as places:
        report = backups.restore_backup(places, location, is_erased_for(services, location), snapshot_id)
    audit_log(services).append("restore", actor, None, json.dumps({"location": location.url, **report}, sort_keys=True))
    return report
