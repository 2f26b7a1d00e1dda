"""Backups of every place of the registry (L10): versioned snapshots with a manifest of counts and
sha256 checksums, restore that verifies them, erasure that reaches into them, pruning.

A snapshot holds a folder per place (``<place name>/``, written by the place's ``export``); the manifest
is written last, so an interrupted backup is never listed. A partial snapshot (only the places of one
schedule group: Redis every 30 min, vectors weekly, the rest daily) is allowed: a restore without a
snapshot id takes each place from the newest snapshot that has it.

A killed backup leaves a stale partial (stores.backup_location): ``clean_partials`` removes it, and
erasure scrubs or removes every partial (``forget_in_partials``). A restore writes ``restore-in-progress.json``
in the target data directory before its first write and removes it at the end; a restore killed half-way
is resumed from that mark (places already restored are skipped, the one in flight is cleared and redone).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .backup_location import MANIFEST
from .errors import InvalidInput, LuminaError
from .shared_state import as_shared_state

FORMAT = 1
# Schedule groups: which places each backup schedule (settings.backup_*_seconds) covers.
GROUPS: dict[str, Callable[[str], bool]] = {
    "redis": lambda name: name.startswith("midterm."),
    "vectors": lambda name: name.startswith("vectors."),
    "archive": lambda name: not name.startswith(("midterm.", "vectors.")),
}


class BackupCorrupt(LuminaError):
    """A snapshot's files do not match its manifest; nothing was restored."""


def new_snapshot_id(now: float | None = None) -> str:
    now = now if now is not None else time.time()
    # Microseconds in the id: ids sort in the order snapshots were taken, even several in a second.
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1e6) % 1_000_000:06d}Z"
    return f"{stamp}-{secrets.token_hex(3)}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksums(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        str(p.relative_to(folder)): {"sha256": _sha256(p), "bytes": p.stat().st_size}
        for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _selected(places: Sequence, groups: Sequence[str] | None) -> list:
    if groups is None:
        return list(places)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise InvalidInput("groups", f"unknown {unknown}; expected some of {sorted(GROUPS)}")
    return [p for p in places if any(GROUPS[g](p.name) for g in groups)]


def clean_partials(location) -> list[str]:
    """Remove the partials whose writer is gone (killed backups); returns their ids."""
    stale = [sid for sid in location.partials() if not location.partial_live(sid)]
    for sid in stale:
        location.remove_partial(sid)
    return stale


def forget_in_partials(location, user_id: str) -> dict[str, Any]:
    """Erasure's reach into partial backups: stale ones are removed, one still being written has its
    staged files rewritten without the user (by format) and any parts already uploaded removed."""
    removed, scrubbed = clean_partials(location), {}
    for sid in location.partials():
        folder = location.partial_folder(sid)
        n = 0
        if folder is not None and folder.is_dir():
            n = sum(_forget_by_format(sub, user_id) for sub in sorted(folder.iterdir()) if sub.is_dir())
        if location.remote:
            location.delete(sid)  # remote parts (S3): the upload that follows cannot be trusted to hold no one erased
        scrubbed[sid] = n
    return {"removed": removed, "scrubbed": scrubbed}


def take_backup(places: Sequence, location, *, groups: Sequence[str] | None = None, meta: dict | None = None) -> dict:
    """Export every place (or those of ``groups``) into a new snapshot; returns its manifest. Partials
    left by killed backups are removed first."""
    clean_partials(location)
    snapshot_id = new_snapshot_id()
    staged = location.stage(snapshot_id)
    try:
        entries: dict[str, Any] = {}
        for place in _selected(places, groups):
            folder = staged / place.name
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            count = place.export(folder)
            entries[place.name] = {"count": int(count), "files": checksums(folder)}
        manifest = {
            "format": FORMAT, "id": snapshot_id, "created_at": time.time(),
            "groups": list(groups) if groups is not None else sorted(GROUPS), "places": entries, **(meta or {}),
        }
        location.commit(snapshot_id, staged, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    except BaseException:
        location.abandon(staged)
        raise
    return manifest


def manifests(location) -> list[dict]:
    """The manifests of complete snapshots, oldest first."""
    return [json.loads(location.manifest_text(sid)) for sid in location.snapshots()]


def verify(folder: Path, manifest: dict) -> list[str]:
    """What does not match the manifest (empty: the snapshot is intact)."""
    problems = []
    for name, entry in manifest["places"].items():
        for rel, want in entry["files"].items():
            path = folder / name / rel
            if not path.exists():
                problems.append(f"{name}/{rel}: missing")
            elif _sha256(path) != want["sha256"]:
                problems.append(f"{name}/{rel}: checksum differs")
    return problems


RESTORE_MARK = "restore-in-progress.json"
"""The mark of an unfinished restore: a document of the memory's shared state (stores.shared_state), so in
server mode a restore killed in one process is seen, refused or resumed by every other."""


def restore_mark(where) -> dict | None:
    """The mark of an unfinished restore (None: no restore is half-done). ``where``: the memory's SharedState,
    or a data dir's path (its file)."""
    return as_shared_state(where).read(RESTORE_MARK)


def write_restore_mark(where, mark: dict) -> None:
    as_shared_state(where).write(RESTORE_MARK, mark)


def clear_restore_mark(where) -> None:
    as_shared_state(where).write(RESTORE_MARK, None)


def restore_state(where) -> list[tuple[str, str]]:
    """(status, detail) rows for ``doctor``: FAIL while a restore is half-done, else OK. ``where``: as for
    ``restore_mark``."""
    mark = restore_mark(where)
    if mark is None:
        return [("OK", "no restore in progress")]
    done, chosen = mark.get("done", []), mark.get("chosen", {})
    return [("FAIL", f"half-restored from {mark.get('location')} ({len(done)}/{len(chosen)} places done): run "
                     f"`lumina-memory restore --from {mark.get('location')}"
                     + (f" --snapshot {mark['requested']}" if mark.get("requested") else "") + "` again to finish it")]


def choose_snapshots(location, snapshot_id: str | None = None) -> dict[str, str]:
    """place name -> the snapshot it is restored from: ``snapshot_id``, or the newest snapshot holding it."""
    known = location.snapshots()
    if not known:
        raise InvalidInput("backup_location", f"no complete backup in {location.url}")
    if snapshot_id is not None and snapshot_id not in known:
        raise InvalidInput("snapshot", f"{snapshot_id!r} is not a complete backup in {location.url}")
    chosen: dict[str, str] = {}
    for sid in ([snapshot_id] if snapshot_id else reversed(known)):
        for name in json.loads(location.manifest_text(sid))["places"]:
            chosen.setdefault(name, sid)
    return chosen


def restore_backup(places: Sequence, location, is_erased: Callable[[str], bool], snapshot_id: str | None = None, *,
                   chosen: dict[str, str] | None = None, done: Sequence[str] = (), redo: Sequence[str] = (),
                   on_place: Callable[[str, str], None] | None = None) -> dict:
    """Restore each place from ``snapshot_id``, or (None) from the newest snapshot holding it. Every
    snapshot used is verified against its manifest before any place is written.

    Resuming a killed restore: ``chosen`` (its choice of snapshots), ``done`` (places it finished: skipped)
    and ``redo`` (the place it was writing: the snapshot's users are removed from it first, so rows of a
    table without a key are not doubled). ``on_place(name, "started" | "done")`` lets the caller keep its mark."""
    chosen = dict(chosen) if chosen is not None else choose_snapshots(location, snapshot_id)
    by_name = {p.name: p for p in places}
    report: dict[str, Any] = {"snapshots": sorted(set(chosen.values())), "restored": {}, "not_restored": [],
                              "resumed": sorted(done)}
    fetched = {}
    with contextlib.ExitStack() as stack:
        for sid in report["snapshots"]:
            folder = stack.enter_context(location.fetch(sid))
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            problems = verify(folder, {"places": {n: e for n, e in manifest["places"].items() if chosen.get(n) == sid}})
            if problems:
                raise BackupCorrupt(f"snapshot {sid} in {location.url} does not match its manifest: {problems[:5]}")
            fetched[sid] = folder
        for name, sid in chosen.items():
            place = by_name.get(name)
            if place is None:
                report["not_restored"].append(name)  # a place this configuration does not have
                continue
            if name in done:
                continue
            if on_place is not None:
                on_place(name, "started")
            if name in redo:
                for user in users_in(fetched[sid] / name):
                    place.erase(user)
            report["restored"][name] = place.restore(fetched[sid] / name, is_erased)
            if on_place is not None:
                on_place(name, "done")
    return report


def users_in(folder: Path) -> set[str]:
    """The users a place's exported files name (tagged JSONL, Parquet with a user_id column)."""
    from .places import jsonl

    users: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")):
        try:
            users |= {u for u, _record in jsonl.read_rows(path) if isinstance(u, str)}
        except (KeyError, TypeError, ValueError):
            continue
    for path in sorted(folder.glob("*.parquet")):
        import duckdb

        try:
            users |= {r[0] for r in duckdb.connect().execute(
                "SELECT DISTINCT user_id FROM read_parquet(?)", [str(path)]).fetchall() if isinstance(r[0], str)}
        except duckdb.Error:  # no user_id column: no one's rows
            continue
    return users


def forget_in_backups(places: Sequence, location, user_id: str) -> dict[str, int]:
    """Rewrite every snapshot without the user (erasure); returns records removed per snapshot."""
    by_name = {p.name: p for p in places}
    out: dict[str, int] = {}
    for sid in location.snapshots():
        with location.fetch(sid) as folder:
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            removed_total, changed = 0, []
            for name, entry in manifest["places"].items():
                place = by_name.get(name)
                # A place this configuration lacks (the store was never opened here, turn vectors off...)
                # is still rewritten through its files' formats: no backup may keep an erased user.
                forget = place.forget_in_export if place is not None else _forget_by_format
                removed = forget(folder / name, user_id)
                new_files = checksums(folder / name)
                if removed or new_files != entry["files"]:
                    entry["count"] = max(0, int(entry["count"]) - int(removed))
                    changed += [f"{name}/{rel}" for rel, f in new_files.items() if entry["files"].get(rel) != f]
                    entry["files"] = new_files
                removed_total += removed
            if changed:
                manifest["rewritten_at"] = time.time()
                location.rewrite(sid, folder, changed, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
            out[sid] = removed_total
    return out


def _forget_by_format(folder: Path, user_id: str) -> int:
    """Tagged JSONL and Parquet with a user_id column, the formats of stores.places."""
    from .places import jsonl
    from .places.archive import filter_parquet

    removed = 0
    for path in sorted(folder.glob("*.jsonl")):
        try:
            removed += jsonl.forget(path, user_id)
        except (KeyError, TypeError, ValueError):  # not the tagged format: another module's own files
            continue
    for path in sorted(folder.glob("*.parquet")):
        try:
            removed += filter_parquet(path, user_id)
        except Exception:  # noqa: BLE001 - a Parquet file without a user_id column holds no one's rows
            continue
    return removed


def prune(location, keep: int, max_age_days: float | None, now: float | None = None) -> list[str]:
    """Delete snapshots beyond the newest ``keep`` and those older than ``max_age_days`` (the newest
    snapshot always stays); returns the ids deleted."""
    now = now if now is not None else time.time()
    found = manifests(location)
    doomed = {m["id"] for m in found[:-keep]} if keep and len(found) > keep else set()
    if max_age_days is not None:
        doomed |= {m["id"] for m in found[:-1] if now - float(m["created_at"]) > max_age_days * 86_400}
    for sid in sorted(doomed):
        location.delete(sid)
    return sorted(doomed)
