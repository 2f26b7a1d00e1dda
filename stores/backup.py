"""Backups of every place of the registry (L10): versioned snapshots with a manifest of counts and
sha256 checksums, restore that verifies them, erasure that reaches into them, pruning.

A snapshot holds a folder per place (``<place name>/``, written by the place's ``export``); the manifest
is written last, so an interrupted backup is never listed. A partial snapshot (only the places of one
schedule group: Redis every 30 min, vectors weekly, the rest daily) is allowed: a restore without a
snapshot id takes each place from the newest snapshot that has it.
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


def take_backup(places: Sequence, location, *, groups: Sequence[str] | None = None, meta: dict | None = None) -> dict:
    """Export every place (or those of ``groups``) into a new snapshot; returns its manifest."""
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


def restore_backup(places: Sequence, location, is_erased: Callable[[str], bool], snapshot_id: str | None = None) -> dict:
    """Restore each place from ``snapshot_id``, or (None) from the newest snapshot holding it. Every
    snapshot used is verified against its manifest before any place is written."""
    known = location.snapshots()
    if not known:
        raise InvalidInput("backup_location", f"no complete backup in {location.url}")
    if snapshot_id is not None and snapshot_id not in known:
        raise InvalidInput("snapshot", f"{snapshot_id!r} is not a complete backup in {location.url}")
    chosen: dict[str, str] = {}
    for sid in ([snapshot_id] if snapshot_id else reversed(known)):
        for name in json.loads(location.manifest_text(sid))["places"]:
            chosen.setdefault(name, sid)
    by_name = {p.name: p for p in places}
    report: dict[str, Any] = {"snapshots": sorted(set(chosen.values())), "restored": {}, "not_restored": []}
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
            report["restored"][name] = place.restore(fetched[sid] / name, is_erased)
    return report


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
