"""A10: the activity log — append-only JSONL of what happened, one file per user, in ``<data_dir>/activity/``.

Each line is one event: ``{"at": <wall-clock epoch>, "event": "turns"|"segment_closed"|"recall"|"reply"|
"reply_interrupted"|"maintenance"|"erasure"|..., "user": <id>, ...}`` with ids, counts and times, and only
text that was already redacted (S7). It feeds recent-activity context (``recent``) and tells an operator
what the memory did for a user.

File names are a hash of the user id (``lumina_memory.stores.ids.user_file_stem``), never the id. A file is rotated
when it reaches ``activity_log_max_bytes`` (``<stem>.jsonl`` → ``<stem>.1.jsonl`` → …), keeping
``activity_log_keep`` rotated files. A line torn by a crash is skipped when read. The log is a
UserDataPlace: erasure deletes the user's files, backups export and restore them.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from .ids import user_file_stem

FOLDER = "activity"
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(folder: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(folder, threading.Lock())


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The events of one file; a torn or unreadable line (a crash mid-write) is skipped."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        for raw in handle:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict):
                yield event


def append_line(path: Path, line: dict[str, Any], fsync: bool = False) -> None:
    """One JSON line appended in one write (O_APPEND), in a file only its owner can read."""
    data = (json.dumps(line, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


class ActivityLog:
    """The activity log of a data directory (see the module docstring)."""

    name = "activity_log"

    def __init__(self, folder: Path, max_bytes: int = 5_000_000, keep: int = 5):
        self.folder = Path(folder)
        self.max_bytes, self.keep = max_bytes, keep
        self._lock = _lock_for(self.folder.resolve())
        self._checked: set[Path] = set()  # files whose last line was checked for a tear in this process

    @classmethod
    def for_settings(cls, settings) -> "ActivityLog":
        return cls(settings.resolved_data_dir() / FOLDER, settings.activity_log_max_bytes, settings.activity_log_keep)

    # --- writing -----------------------------------------------------------------------------------
    def path_of(self, user_id: str, generation: int = 0) -> Path:
        stem = user_file_stem(user_id)
        return self.folder / (f"{stem}.jsonl" if generation == 0 else f"{stem}.{generation}.jsonl")

    def files_of(self, user_id: str) -> list[Path]:
        """The user's files, newest first (the current one, then .1, .2, …)."""
        return [p for p in (self.path_of(user_id, g) for g in range(self.keep + 1)) if p.exists()]

    def append(self, user_id: str, event: str, *, at: float | None = None, **fields: Any) -> dict[str, Any]:
        line = {"at": round(time.time() if at is None else at, 3), "event": event, "user": user_id, **fields}
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = self.path_of(user_id)
            if path.exists() and path.stat().st_size >= self.max_bytes:
                self._rotate(user_id)
            if path not in self._checked:
                self._end_torn_line(path)
                self._checked.add(path)
            append_line(path, line)
        return line

    @staticmethod
    def _end_torn_line(path: Path) -> None:
        """A line torn by a crash would swallow the next event: end it first (it stays unreadable)."""
        try:
            with path.open("rb") as handle:
                handle.seek(-1, os.SEEK_END)
                torn = handle.read(1) != b"\n"
        except (FileNotFoundError, OSError):
            return
        if torn:
            with path.open("ab") as handle:
                handle.write(b"\n")

    def _rotate(self, user_id: str) -> None:
        oldest = self.path_of(user_id, self.keep)
        if oldest.exists():
            oldest.unlink()
        for generation in range(self.keep - 1, -1, -1):
            path = self.path_of(user_id, generation)
            if path.exists():
                path.rename(self.path_of(user_id, generation + 1))

    # --- reading -----------------------------------------------------------------------------------
    def events(self, user_id: str) -> list[dict[str, Any]]:
        """Every event of the user still kept, oldest first."""
        out: list[dict[str, Any]] = []
        for path in reversed(self.files_of(user_id)):
            out += [e for e in read_jsonl(path) if e.get("user") == user_id]
        return out

    def recent(self, user_id: str, limit: int = 20, events: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """The user's last ``limit`` events (of the kinds ``events``, default all), oldest first."""
        out: list[dict[str, Any]] = []
        for path in self.files_of(user_id):  # newest file first: older files only when needed
            found = [e for e in read_jsonl(path) if e.get("user") == user_id and (events is None or e.get("event") in events)]
            out = found + out
            if len(out) >= limit:
                break
        return out[-limit:] if limit > 0 else []

    def prune(self, older_than: float) -> int:
        """Retention: drop every event older than ``older_than`` (epoch seconds); returns how many went."""
        dropped = 0
        with self._lock:
            for path in sorted(self.folder.glob("*.jsonl")) if self.folder.exists() else []:
                events = list(read_jsonl(path))
                kept = [e for e in events if float(e.get("at", 0)) >= older_than]
                if len(kept) == len(events):
                    continue
                dropped += len(events) - len(kept)
                if kept:
                    tmp = path.with_suffix(".tmp")
                    tmp.unlink(missing_ok=True)
                    for event in kept:
                        append_line(tmp, event)
                    tmp.replace(path)
                else:
                    path.unlink()
        return dropped

    # --- UserDataPlace ----------------------------------------------------------------------------
    def count(self, user_id: str) -> int:
        return len(self.events(user_id))

    def erase(self, user_id: str) -> int:
        with self._lock:
            gone = self.count(user_id)
            for path in self.files_of(user_id):
                path.unlink()
        return gone

    def scrub(self) -> None:
        """Nothing to rewrite: an erased user's files are deleted, and no file holds two users."""

    def raw_paths(self) -> list[Path]:
        return [self.folder]

    def export(self, dest: Path) -> int:
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True, mode=0o700)
        total = 0
        with self._lock:
            for path in sorted(self.folder.glob("*.jsonl")) if self.folder.exists() else []:
                shutil.copy2(path, dest / path.name)
                total += sum(1 for _ in read_jsonl(path))
        return total

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        loaded = 0
        src = Path(src)
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            for path in sorted(src.glob("*.jsonl")) if src.exists() else []:
                events = [e for e in read_jsonl(path) if isinstance(e.get("user"), str) and not is_erased(e["user"])]
                target = self.folder / path.name
                target.unlink(missing_ok=True)
                for event in events:
                    append_line(target, event)
                loaded += len(events)
        return loaded

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return forget_in_export(src, user_id)


def forget_in_export(src: Path, user_id: str) -> int:
    """Remove the user's files from an export of the activity log (one file per user stem, as ``export`` and
    the server mode's log write them); the events removed."""
    stem = user_file_stem(user_id)
    removed = 0
    for path in sorted(Path(src).glob(f"{stem}.*")) if Path(src).exists() else []:
        removed += sum(1 for _ in read_jsonl(path))
        path.unlink()
    return removed


def user_data_places(settings) -> list:
    """For stores.places (the registry): the data directory's activity log."""
    return [ActivityLog.for_settings(settings)]
