"""A11: the streaming journal — a write-ahead log of replies being generated, in ``<data_dir>/journal/``.

One file per reply (``<user hash>.<reply hash>.jsonl``): a ``start`` line (user, reply id, character,
the writing process), then ``text`` lines, each flushed with fsync every ``journal_flush_seconds`` or
``journal_flush_chars`` of new text. A reply that completes deletes its file. A file left behind by a
process that died (kill -9, OOM, power loss) is an orphan: ``recover_orphans`` reads what it holds (a torn
last line is skipped), returns it, and removes the file. Files of replies still being written by a
live process are left alone.

The journal is a UserDataPlace: erasure deletes the user's files; backups carry none (a reply in
flight is not yet memory), so export writes nothing and restore loads nothing.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from .activity_log import append_line, read_jsonl
from .ids import NAMESPACE, user_file_stem
from .processes import pid_alive, process_start

FOLDER = "journal"


_PID = os.getpid()
_STARTED = process_start(_PID)


class JournalEntry:
    """One reply being journalled: ``write`` its text as it streams, ``finish`` when complete."""

    def __init__(self, path: Path, flush_seconds: float, flush_chars: int, redact: Callable[[str], str] | None):
        self.path = path
        self.flush_seconds, self.flush_chars = flush_seconds, flush_chars
        self._redact = redact
        self._buffer: list[str] = []
        self._buffered = 0
        self._last_flush = time.monotonic()
        self.chars = 0
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._buffer.append(text)
            self._buffered += len(text)
            self.chars += len(text)
            if self._buffered >= self.flush_chars or time.monotonic() - self._last_flush >= self.flush_seconds:
                self._flush()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._buffer:
            return
        text = "".join(self._buffer)
        self._buffer, self._buffered = [], 0
        self._append(self._redact(text) if self._redact else text)

    def _append(self, text: str) -> None:
        append_line(self.path, {"event": "text", "text": text}, fsync=True)

    def _remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def finish(self) -> None:
        """The reply is complete (and handed on): its journal goes."""
        with self._lock:
            self._buffer, self._buffered = [], 0
            self._remove()


class Journal:
    """The streaming journal of a data directory (see the module docstring)."""

    name = "journal"

    def __init__(self, folder: Path, flush_seconds: float = 1.0, flush_chars: int = 500):
        self.folder = Path(folder)
        self.flush_seconds, self.flush_chars = flush_seconds, flush_chars

    @classmethod
    def for_settings(cls, settings) -> "Journal":
        return cls(settings.resolved_data_dir() / FOLDER, settings.journal_flush_seconds, settings.journal_flush_chars)

    def _path(self, user_id: str, reply_id: str) -> Path:
        return self.folder / f"{user_file_stem(user_id)}.{uuid.uuid5(NAMESPACE, f'reply|{reply_id}').hex[:24]}.jsonl"

    def open(self, user_id: str, reply_id: str, redact: Callable[[str], str] | None = None, **meta: Any) -> JournalEntry:
        """Start journalling a reply: the ``start`` line is on disk (fsync) before the first chunk."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self._path(user_id, reply_id)
        path.unlink(missing_ok=True)  # a retried reply starts over
        start = {"event": "start", "user": user_id, "reply_id": reply_id, "pid": _PID, "proc_start": _STARTED,
                 "at": round(time.time(), 3), **meta}
        append_line(path, start, fsync=True)
        return JournalEntry(path, self.flush_seconds, self.flush_chars, redact)

    def _files(self, stem: str = "*") -> list[Path]:
        return sorted(self.folder.glob(f"{stem}.*.jsonl")) if self.folder.exists() else []

    def read(self, path: Path) -> dict[str, Any] | None:
        """What a journal file holds: its start line's fields, the text so far and how many chunks."""
        events = list(read_jsonl(path))
        start = next((e for e in events if e.get("event") == "start"), None)
        if start is None:
            return None
        texts = [e["text"] for e in events if e.get("event") == "text" and isinstance(e.get("text"), str)]
        return {**{k: v for k, v in start.items() if k != "event"}, "text": "".join(texts), "chunks": len(texts)}

    def orphans(self) -> list[Path]:
        """Files of replies whose process is gone (or that have no readable start line)."""
        out = []
        for path in self._files():
            entry = self.read(path)
            if entry is None or not (
                (entry.get("pid") == _PID and entry.get("proc_start") == _STARTED)
                or pid_alive(int(entry.get("pid", 0)), entry.get("proc_start"))
            ):
                out.append(path)
        return out

    def recover_orphans(self) -> list[dict[str, Any]]:
        """The interrupted replies (user, reply_id, character, text so far, chunks, at), their files removed."""
        recovered = []
        for path in self.orphans():
            entry = self.read(path)
            if entry is not None:
                recovered.append(entry)
            path.unlink(missing_ok=True)
        return recovered

    # --- UserDataPlace ----------------------------------------------------------------------------
    def count(self, user_id: str) -> int:
        return len(self._files(user_file_stem(user_id)))

    def erase(self, user_id: str) -> int:
        files = self._files(user_file_stem(user_id))
        for path in files:
            path.unlink(missing_ok=True)
        return len(files)

    def scrub(self) -> None:
        """Nothing to rewrite: a file holds one reply of one user and goes whole."""

    def raw_paths(self) -> list[Path]:
        return [self.folder]

    def export(self, dest: Path) -> int:
        Path(dest).mkdir(parents=True, exist_ok=True, mode=0o700)
        return 0  # a reply in flight is not memory yet; an orphan becomes an activity-log event

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        return 0

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return 0


def user_data_places(settings) -> list:
    """For stores.places (the registry): the data directory's streaming journal."""
    return [Journal.for_settings(settings)]
