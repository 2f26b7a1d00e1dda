"""Erase a user everywhere (L11), and the backup/restore operations (L10), on an opened Services.

    plan = erase_plan(services, "alice")                  # counts per place + a confirmation token
    report = erase_user(services, "alice", plan["token"]) # every place, scrubbed, backups rewritten
    manifest = backup_now(services, "s3://bucket/site")   # the location is remembered before any byte goes out
    report = restore_from(services, "/mnt/usb/backups")   # every reachable ledger applied; a killed one resumed

Both walk the registry (graphs.registry), so a place added later is covered without changes here.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from lumina_memory.nodes.services import Services
from lumina_memory.stores import backup as backups
from lumina_memory.stores.factory import open_audit_log
from lumina_memory.stores.protocols_files import AuditTrail
from lumina_memory.stores import known_locations
from lumina_memory.stores.backup_location import open_location
from lumina_memory.stores.erasure import (
    check_token, erase_places, erasures_in_progress, make_token, mark_erasure_finished, mark_erasure_started, plan,
)
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.leases import LeaseBusy, leases_of
from lumina_memory.stores.ledger import (
    LEDGER_FILE, location_ledger, record_erasure,
)
from lumina_memory.stores.secret import memory_secret
from lumina_memory.stores.shared_state import shared_state_of

from .registry import open_registry
from .restore_ledgers import failure, restore_ledgers, restore_warnings, where_db

log = logging.getLogger("lumina.erase")
ERASE_WAIT = 60.0
"""Seconds an erasure waits for the lease ``erase:<user>`` (another worker erasing the same user) at most."""
BACKUP_WAIT = 300.0
"""Seconds a backup waits for the lease ``backup`` (another worker's backup or pruning) at most."""


def default_backup_location(services: Services) -> str:
    settings = services.settings
    if settings.backup_location:
        return settings.backup_location
    data_dir = settings.resolved_data_dir()
    return str(data_dir.parent / f"{data_dir.name}-backups")


def open_backup_location(services: Services, where: str):
    """A backup location; an S3 one stages its files in the data directory (found again if killed)."""
    location = open_location(where, services.settings)
    if location.remote:
        location.staging_root = services.settings.resolved_data_dir() / "backup-staging"
    return location


def erasure_locations(services: Services, explicit: Sequence[str] | None = None) -> list[str]:
    """Every location an erasure must reach: the configured one, each this data dir ever wrote to or
    restored from (stores.known_locations), and any passed explicitly."""
    wanted = [default_backup_location(services), *known_locations.known(shared_state_of(services)),
              *(explicit or [])]
    out: list[str] = []
    for where in wanted:
        try:
            url = open_location(where, services.settings).url
        except Exception:  # noqa: BLE001 - a malformed remembered entry: kept as written, reported when tried
            url = where
        if url not in out:
            out.append(url)
    return out


def ledger_to_location(services: Services, where: str, user_id: str):
    """Record the erasure in the location's ledger; the opened location. A remembered folder that is gone
    (an unmounted disk) is unreachable, not created anew: only the configured default is created."""
    location = open_backup_location(services, where)
    if not location.remote and not Path(location.url).is_dir() and where != open_location(
            default_backup_location(services), services.settings).url:
        from lumina_memory.stores.errors import StoreUnavailable

        raise StoreUnavailable("backups", f"folder {location.url} is missing (an unmounted disk?)")
    remote = location_ledger(location)
    remote.add(user_id)
    location.write_text(LEDGER_FILE, remote.text())
    return location


def scrub_location(services: Services, places, where: str, user_id: str) -> dict[str, Any]:
    """Ledger, every snapshot and every partial of one location, for one erased user. Raises when the
    location cannot be reached."""
    location = ledger_to_location(services, where, user_id)
    snapshots = backups.forget_in_backups(places, location, user_id)
    partials = backups.forget_in_partials(location, user_id)
    return {"snapshots": snapshots, "partials": partials}


def retry_owed(services: Services, places, *, skip: Sequence[str] = ()) -> dict[str, Any]:
    """Retry the erasures an unreachable location is still owed; returns what was done and what is still owed."""
    state = shared_state_of(services)
    done: dict[str, int] = {}
    still: dict[str, str] = {}
    for where, users in known_locations.owed(state).items():
        for user_id in users:
            if user_id in skip:  # erased just now, this location included
                continue
            try:
                scrub_location(services, places, where, user_id)
            except Exception as exc:  # noqa: BLE001 - still unreachable: stays owed and is said so
                still[where] = failure(exc)
                break
            known_locations.paid(state, where, user_id)
            done[where] = done.get(where, 0) + 1
    return {"retried": done, "still_owed": still}


def audit_log(services: Services) -> AuditTrail:
    return open_audit_log(services.stores.archive, memory_secret(services.settings))


def erase_plan(services: Services, user_id: str, *, store=None, checkpoints: Path | None = None,
               extra_places: Sequence = ()) -> dict[str, Any]:
    validate_id(user_id, "user_id")
    with open_registry(services, store=store, checkpoints=checkpoints, extra_places=extra_places) as places:
        counts = plan(places, user_id)
    key = memory_secret(services.settings)
    token, expiry = make_token(key, user_id, services.settings.erase_token_ttl_seconds)
    return {"user_id": user_id, "counts": counts, "token": token, "expires_at": expiry}


def erase_user(
    services: Services, user_id: str, token: str, *, actor: str = "api", store=None,
    checkpoints: Path | None = None, backup_locations: list[str] | None = None, extra_places: Sequence = (),
) -> dict[str, Any]:
    """Erase every trace of the user: every place, scrubbed; every snapshot and partial backup rewritten or
    removed at every location this data dir ever backed up to or restored from, the configured one and
    ``backup_locations``; the ledgers (the data dir's and every location's) record the erasure so no
    restore brings the user back; the audit log records it (counts, no content, the user as a keyed hash).
    The report's ``unreachable`` names each location that could not be reached: owed, and retried by the
    next erasure or backup."""
    validate_id(user_id, "user_id")
    lease = f"erase:{user_id}"
    with leases_of(services).hold(lease, wait=ERASE_WAIT) as got:
        if not got:  # before the token is spent: the caller may try again with it
            raise LeaseBusy(lease, ERASE_WAIT, "erasing this user")
        check_token(memory_secret(services.settings), user_id, token,
                    consume_in=shared_state_of(services))  # a token erases once, whichever process presents it
        return _erase_everywhere(services, [user_id], actor=actor, store=store, checkpoints=checkpoints,
                                 backup_locations=backup_locations, extra_places=extra_places)


def erase_decided(services: Services, user_ids: Sequence[str], *, actor: str = "api") -> dict[str, Any]:
    """Erase several ids everywhere in one pass (each place erases them all, then rewrites its files once),
    with no token: for a caller that has decided already (graphs.agents_erase erases a run's agents so). Every
    id gets what ``erase_user`` gives one: its lease, marks, ledgers, backups rewritten, its own audit entry."""
    users = sorted({validate_id(u, "user_id") for u in user_ids})
    if not users:
        return {"removed": {}, "backups": {}, "partials": {}, "unreachable": {}, "owed_retried": None}
    with ExitStack() as held:
        for user in users:  # in order: two erasures of overlapping sets never wait on each other in a cycle
            lease = f"erase:{user}"
            if not held.enter_context(leases_of(services).hold(lease, wait=ERASE_WAIT)):
                raise LeaseBusy(lease, ERASE_WAIT, "erasing this user")
        return _erase_everywhere(services, users, actor=actor)


def _erase_everywhere(services: Services, user_ids: Sequence[str], *, actor: str, store=None,
                      checkpoints: Path | None = None, backup_locations: list[str] | None = None,
                      extra_places: Sequence = ()) -> dict[str, Any]:
    if isinstance(user_ids, str):  # a lone id would be read letter by letter
        raise TypeError("user_ids is a list of ids")
    state = shared_state_of(services)
    # Marked before anything goes: until the mark is cleared nothing is ingested for the id, and the next
    # open finishes the erasure (finish_interrupted_erasures).
    for user_id in user_ids:
        mark_erasure_started(state, user_id)
    # The ledgers first: an erasure that dies half-way must still keep restores from resurrecting the user.
    for user_id in user_ids:
        record_erasure(state, user_id)
    wheres = erasure_locations(services, backup_locations)
    # Owed first: were the process to die below, the next erasure or backup retries every location.
    for where in wheres:
        for user_id in user_ids:
            known_locations.owe(state, where, user_id)
    # Each location's ledger before anything is scrubbed: a restore from it keeps the user out even if
    # this process dies half-way.
    unreachable: dict[str, str] = {}
    for where in wheres:
        try:
            for user_id in user_ids:
                ledger_to_location(services, where, user_id)
        except Exception as exc:  # noqa: BLE001 - reported and retried, never skipped in silence
            unreachable[where] = failure(exc)
    in_backups: dict[str, dict[str, int]] = {}
    partials: dict[str, Any] = {}
    with open_registry(services, store=store, checkpoints=checkpoints, extra_places=extra_places) as places:
        removed = erase_places(places, *user_ids)
        for where in wheres:
            if where in unreachable:
                continue
            try:
                for user_id in user_ids:
                    scrubbed = scrub_location(services, places, where, user_id)
                    _add_counts(in_backups.setdefault(where, {}), scrubbed["snapshots"])
                    partials[where] = scrubbed["partials"]
                    known_locations.paid(state, where, user_id)
            except Exception as exc:  # noqa: BLE001 - reported and retried, never skipped in silence
                unreachable[where] = failure(exc)
                in_backups.pop(where, None)
                partials.pop(where, None)
        retried = retry_owed(services, places, skip=user_ids)
    if unreachable:
        log.warning("erasure could not reach %d backup location(s); owed and retried by the next erasure or "
                    "backup: %s", len(unreachable), sorted(unreachable))
    for user_id in user_ids:
        detail = json.dumps({"removed": {k: v for k, v in removed.items() if v},
                             "backups": {url: sum(v.values()) for url, v in in_backups.items()},
                             "unreachable": sorted(unreachable)}, sort_keys=True)
        audit_log(services).append("user_erased", actor, user_id, detail)
        mark_erasure_finished(state, user_id)
    return {"removed": removed, "backups": in_backups, "partials": partials, "unreachable": unreachable,
            "owed_retried": retried}


def _add_counts(into: dict[str, int], counts: dict[str, int]) -> None:
    for name, n in counts.items():
        into[name] = into.get(name, 0) + int(n)


def finish_interrupted_erasures(services: Services, *, store=None, checkpoints: Path | None = None) -> list[str]:
    """Complete every erasure a dead process left half-done (its confirmation was given then); the users
    finished here. One another worker is finishing (it holds ``erase:<user>``) is left to it."""
    state = shared_state_of(services)
    finished = []
    for user_id in erasures_in_progress(state):
        with leases_of(services).hold(f"erase:{user_id}", wait=False) as got:
            if not got:
                log.warning("an interrupted erasure is being finished by another worker: left to it")
                continue
            if user_id not in erasures_in_progress(state):  # finished by that worker meanwhile
                continue
            log.warning("finishing the interrupted erasure of a user (audit log has the keyed id)")
            _erase_everywhere(services, [user_id], actor="recovery: interrupted erasure", store=store,
                              checkpoints=checkpoints)
            finished.append(user_id)
    return finished


def backup_now(services: Services, where: str | None = None, *, groups=None, actor: str = "api", store=None,
               checkpoints: Path | None = None) -> dict[str, Any]:
    """A snapshot of every place (or ``groups``). The location is remembered in the data dir before any
    byte goes out (erasure reaches it), and erasures owed to unreachable locations are retried first."""
    location = open_backup_location(services, where or default_backup_location(services))
    data_dir = services.settings.resolved_data_dir()
    state = shared_state_of(services)
    known_locations.remember(state, location.url)
    meta = {"backends": services.stores.backends,
            "source": {"data_dir": str(data_dir.resolve()), "locations": known_locations.known(state)}}
    if state.shared:  # the memory's ledger is its database's, not the data dir's: a restore checks it is there
        meta["source"]["database"] = where_db(services)
    with leases_of(services).hold("backup", wait=BACKUP_WAIT) as got:
        if not got:  # one snapshot at a time: two at once would write and prune the same location
            raise LeaseBusy("backup", BACKUP_WAIT, "taking a backup")
        with open_registry(services, store=store, checkpoints=checkpoints) as places:
            retried = retry_owed(services, places) if known_locations.owed(state) else None
            manifest = backups.take_backup(places, location, groups=groups, meta=meta)
    counts = {name: entry["count"] for name, entry in manifest["places"].items()}
    audit_log(services).append("backup", actor, None, json.dumps({"location": location.url, "snapshot": manifest["id"],
                                                                  "counts": counts, "owed_retried": retried}, sort_keys=True))
    return manifest


def restore_from(services: Services, where: str, snapshot_id: str | None = None, *, actor: str = "api",
                 store=None, checkpoints: Path | None = None, allow_non_empty: bool = False) -> dict[str, Any]:
    """Restore into this Services' backends (an empty data directory, or production servers), filtered by
    every erasure ledger reachable. A restore killed half-way is resumed by running it again. Under the lease
    ``backup``: no snapshot is taken of a memory half-restored, nor two restores run at once."""
    with leases_of(services).hold("backup", wait=BACKUP_WAIT) as got:
        if not got:
            raise LeaseBusy("backup", BACKUP_WAIT, "restoring a backup")
        return _restore_from(services, where, snapshot_id, actor=actor, store=store, checkpoints=checkpoints,
                             allow_non_empty=allow_non_empty)


def _restore_from(services: Services, where: str, snapshot_id: str | None, *, actor: str, store,
                  checkpoints: Path | None, allow_non_empty: bool) -> dict[str, Any]:
    from lumina_memory.stores.errors import InvalidInput

    location = open_backup_location(services, where)
    data_dir, state = services.settings.resolved_data_dir(), shared_state_of(services)
    target = "the memory on " + where_db(services) if state.shared else str(data_dir)
    mark = backups.restore_mark(state)
    if mark is not None:
        if mark.get("location") != location.url or (snapshot_id is not None and snapshot_id != mark.get("requested")):
            again = f"--from {mark.get('location')}" + (f" --snapshot {mark['requested']}" if mark.get("requested") else "")
            raise InvalidInput("restore target", f"{target} is half-restored from {mark.get('location')}; "
                               f"run `lumina-memory restore {again}` to finish that restore first")
        redo = [n for n in mark.get("started", []) if n not in mark.get("done", [])]
    else:
        if not allow_non_empty:
            held = services.stores.archive.counts()
            if held["turns"] or held["segments"]:
                raise InvalidInput("restore target", f"{target} already holds "
                                   f"{held['turns']} turns; restore into an empty data directory")
        mark = {"location": location.url, "requested": snapshot_id, "at": time.time(), "started": [], "done": [],
                "chosen": backups.choose_snapshots(location, snapshot_id)}
        redo = []
    backups.write_restore_mark(state, mark)  # before the first write: a killed restore is seen and resumed
    manifests = [json.loads(location.manifest_text(sid)) for sid in sorted(set(mark["chosen"].values()))]
    # The restored users' data is at the location (and at the source's): erasures here must reach them.
    known_locations.remember(state, location.url, "restore")
    for manifest in manifests:
        for other in (manifest.get("source") or {}).get("locations", []):
            known_locations.remember(state, other, "restore source")
    ledgers = restore_ledgers(services, location, manifests)
    is_erased = lambda user_id: any(user_id in ledger for _, ledger in ledgers["applied"])  # noqa: E731

    def on_place(name: str, phase: str) -> None:
        if name not in mark[phase]:
            mark[phase].append(name)
            backups.write_restore_mark(state, mark)

    try:
        with open_registry(services, store=store, checkpoints=checkpoints, open_store=True) as places:
            report = backups.restore_backup(places, location, is_erased, chosen=mark["chosen"], done=mark["done"],
                                            redo=redo, on_place=on_place)
    except BaseException:
        if not mark["started"]:
            backups.clear_restore_mark(state)  # nothing was written (a corrupt snapshot is refused first)
        raise
    report["ledgers_applied"] = [ledger.summary(w) for w, ledger in ledgers["applied"]]
    report["ledgers_unreachable"] = ledgers["unreachable"]
    report["warnings"] = restore_warnings(services, location, manifests, ledgers["applied"])
    for warning in report["warnings"]:
        log.warning("restore: %s", warning)
    audit_log(services).append("restore", actor, None, json.dumps({"location": location.url, **report}, sort_keys=True))
    backups.clear_restore_mark(state)
    return report
