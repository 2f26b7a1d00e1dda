"""One process per data directory: an advisory ``flock`` on ``<data_dir>/.lock``.

Why flock: the kernel drops it when the holding process exits, however it exits (crash, SIGKILL,
``os._exit``), so there is never a stale lock to clean up by hand. The file's *content* is only a
description of the holder (pid, command line, start time) for the error message; the lock itself
is the flock, never the file's existence — so the file is never deleted (deleting a flock'ed file
lets two processes lock two different inodes of the "same" path).

Re-entrant within a process: the embedded engines of one data directory are opened by several
objects of the same process (archive, graph, vector shard), and each may take the lock. A per-process
registry keyed by the resolved path shares one file descriptor and counts references.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
import shlex
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from .errors import DataDirLocked
from .private_files import make_private, private_umask

LOCK_FILENAME = ".lock"
_MAX_HOLDER_CHARS = 1000  # the holder text ends up in an error message; keep it readable


@dataclass
class _Held:
    fd: int
    refs: int
    pid: int  # the process that took the flock; a forked child must not reuse or release it


_registry: dict[str, _Held] = {}
_registry_lock = threading.Lock()


def lock_path(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir).expanduser().resolve() / LOCK_FILENAME


def read_holder(data_dir: str | os.PathLike[str]) -> str:
    """Who holds (or last held) the data directory, as written into the lock file; '' if unknown."""
    try:
        text = lock_path(data_dir).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text.strip()[:_MAX_HOLDER_CHARS]


def _describe_self() -> str:
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    cmd = shlex.join(sys.argv) if sys.argv and sys.argv != [""] else sys.executable
    # One line: newlines in argv would make the holder text ambiguous in logs.
    cmd = cmd.replace("\n", " ").replace("\r", " ")
    return f"pid={os.getpid()} cmd={cmd} started={started}\n"


class DataDirLock:
    """Process lock of one data directory.

    ``acquire()`` raises :class:`DataDirLocked` (naming the holder) when another process holds it;
    it never blocks. Each instance holds at most one reference: acquiring an instance twice is a
    no-op, as is releasing one that is not held. Use as a context manager or call ``release()``.
    """

    def __init__(self, data_dir: str | os.PathLike[str]):
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.path = self.data_dir / LOCK_FILENAME
        self._key = str(self.path)
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def acquire(self) -> Self:
        if self._held:
            return self
        with _registry_lock:
            entry = _registry.get(self._key)
            if entry is not None and entry.pid != os.getpid():
                # Inherited through fork(): the descriptor shares the parent's flock, so unlocking
                # it here would release the parent's lock. Forget it; this process must lock anew
                # (and will find the parent holding it).
                del _registry[self._key]
                entry = None
            if entry is None:
                entry = _Held(fd=self._lock_new(), refs=0, pid=os.getpid())
                _registry[self._key] = entry
            entry.refs += 1
            self._held = True
        return self

    def _lock_new(self) -> int:
        private_umask()  # the engines opened after the lock create their files private (stores.private_files)
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # No O_TRUNC: the current holder's description must survive until we own the lock.
        # os.open descriptors are non-inheritable, so child programs do not keep the lock alive.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = read_holder(self.data_dir) or (
                "another process (it has not written its pid yet; retry in a moment)"
            )
            raise DataDirLocked(str(self.data_dir), holder) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, _describe_self().encode("utf-8", errors="replace"), 0)
        except OSError:
            pass  # the description is a courtesy; the flock alone is the lock
        make_private(self.data_dir)  # ours now: repair a directory created world-readable before issue 16
        return fd

    def release(self) -> None:
        if not self._held:
            return
        with _registry_lock:
            self._held = False
            entry = _registry.get(self._key)
            if entry is None or entry.pid != os.getpid():
                return
            entry.refs -= 1
            if entry.refs > 0:
                return
            del _registry[self._key]
            try:
                # Clear the description first so nobody reads a stale holder after we let go.
                os.ftruncate(entry.fd, 0)
                fcntl.flock(entry.fd, fcntl.LOCK_UN)
            except OSError:
                pass  # closing the descriptor below releases the flock anyway
            finally:
                os.close(entry.fd)

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"DataDirLock({str(self.data_dir)!r}, held={self._held})"
