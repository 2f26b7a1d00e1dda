"""Files holding each user's built recall indexes (nodes.retrieval.index_snapshot), one per user and index in
``<data_dir>/recall_snapshots/``, named by a hash of the user id (stores.ids.user_file_stem).

A snapshot is derived state: the archive is the source of truth, and a snapshot is only ever used after it was
checked against the user's current turns (their ids and texts). So a lost, torn or stale file costs a rebuild,
never a wrong answer. Writes go to a temporary file that is renamed into place; erasure removes the user's file;
backups leave the folder out and a restore empties it (the restored archive is what the next build reads).

Writers and erasers of one folder in a process share a lock and a count of removals: a write that began before
a removal (an erasure while the flush's last stage was writing that user's snapshot) is dropped instead of
putting the file back.

Server mode (``settings.database_url``) keeps no snapshots: ``SnapshotFiles.for_settings`` gives None, and the
indexes are built from the archive (from the turns' kept reads, nodes.retrieval.turn_reads) by each process that
needs them. A file is a tier of one host: a replica elsewhere neither reads it nor, when it runs an erasure,
reaches it to remove it, so an erased user's index would outlive the erasure there. Keeping the snapshots in
PostgreSQL instead would reach every process and every erasure; what it saves was measured with
``python -m bench.cold_start --memories 2000`` (2,000-turn users, half the replies long, a 2-core machine shared
with other loaded jobs, so the figures are noisy): building a user's turn index from the kept reads took 0.9 s
(Japanese) to 6.0 s (English), from a snapshot 0.4-0.6 s; the first recall 1.5 s / 8.3 s against 1.1 s / 4.6 s.
That is paid once per user and process (the index then stays in memory, topped up by stamps), and a long-running
process warms its most recent users at start (nodes.retrieval.warm); it is not worth a second copy of every user's
index in the database, with its own erasure and backup rules.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from .ids import user_file_stem, validate_id
from .user_data import NothingToBackUp

FOLDER = "recall_snapshots"
SUFFIX = ".npz"
TURNS, SEGMENTS = "turns", "segments"  # the turn index (nodes.retrieval.turn_index), the segment keyword index
KINDS = (TURNS, SEGMENTS)


class _FolderState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.removals = 0


_states: dict[Path, _FolderState] = {}
_states_lock = threading.Lock()


def _state_for(folder: Path) -> _FolderState:
    with _states_lock:
        return _states.setdefault(folder, _FolderState())


class SnapshotFiles:
    """The snapshot files of one data directory."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder).expanduser().resolve()
        self._state = _state_for(self.folder)

    @classmethod
    def for_settings(cls, settings) -> "SnapshotFiles | None":
        """The data directory's snapshot files; None in server mode (see the module docstring)."""
        if getattr(settings, "database_url", None):
            return None
        return cls(settings.resolved_data_dir() / FOLDER)

    def path_of(self, user_id: str, kind: str = TURNS) -> Path:
        """``kind``: which index (``TURNS``, ``SEGMENTS``)."""
        validate_id(user_id, "user_id")
        if kind not in KINDS:
            raise ValueError(f"unknown snapshot kind {kind!r}")
        return self.folder / (user_file_stem(user_id) + ("" if kind == TURNS else f".{kind}") + SUFFIX)

    def existing(self, user_id: str, kind: str = TURNS) -> Path | None:
        path = self.path_of(user_id, kind)
        return path if path.exists() else None

    @property
    def removals(self) -> int:
        """Changes whenever a file is removed; ``write`` takes the value its caller saw before deciding to write."""
        return self._state.removals

    def write(self, user_id: str, fill: Callable[[object], None], seen_removals: int, kind: str = TURNS) -> bool:
        """Write the user's snapshot through ``fill(binary file)``; False (nothing written) when a file was removed
        since ``seen_removals`` was read. The old file stays in place until the new one is complete."""
        path = self.path_of(user_id, kind)
        tmp = path.with_name(path.name + ".tmp")
        with self._state.lock:
            if self._state.removals != seen_removals:
                return False
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    fill(handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        return True

    def remove(self, user_id: str, kinds: tuple[str, ...] = KINDS) -> int:
        """Remove the user's snapshots (of ``kinds``, by default all); how many there were."""
        paths = [self.path_of(user_id, kind) for kind in kinds]
        with self._state.lock:
            self._state.removals += 1
            existed = sum(p.exists() for p in paths)
            for path in paths:
                path.unlink(missing_ok=True)
                path.with_name(path.name + ".tmp").unlink(missing_ok=True)
        return existed

    def clear(self) -> int:
        """Remove every snapshot of the folder (a restore); how many went."""
        with self._state.lock:
            self._state.removals += 1
            if not self.folder.exists():
                return 0
            files = [p for p in self.folder.iterdir() if p.is_file()]
            for p in files:
                p.unlink(missing_ok=True)
        return sum(1 for p in files if p.suffix == SUFFIX)


class RecallSnapshotPlace(NothingToBackUp):
    """The recall index snapshots as a UserDataPlace: erased with the user, never backed up (derived from the
    archive, rebuilt from it), and emptied by a restore, so no snapshot of data from before it survives."""

    name = "recall_snapshots"

    def __init__(self, files: SnapshotFiles | None):
        """``files``: None in server mode, where no snapshot is kept (the place then holds nothing)."""
        self.files = files

    def count(self, user_id: str) -> int:
        if self.files is None:
            return 0
        return sum(self.files.existing(user_id, kind) is not None for kind in KINDS)

    def erase(self, user_id: str) -> int:
        return 0 if self.files is None else self.files.remove(user_id)

    def scrub(self) -> None:
        return None  # the file is removed, not rewritten: nothing of it stays in a file we keep

    def raw_paths(self) -> list[Path]:
        return [] if self.files is None else [self.files.folder]

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        if self.files is not None:
            self.files.clear()
        return 0
