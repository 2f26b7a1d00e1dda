"""Whether a process id still names a running process (lock holders, writers of staged backups, our Redis,
the reply journal's writers)."""

from __future__ import annotations

import os
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first); None where it cannot be read."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), to tell a live process from a new one
    that reuses a dead one's pid; None where /proc is absent."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None


def pid_alive(pid: int, started: str | None = None) -> bool:
    """True while ``pid`` runs (and, given ``started``, is the process that started then). A zombie (exited,
    not yet reaped by its parent) counts as gone: it writes nothing more; a process we may not signal counts
    as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat_fields(pid)
    if fields is None:
        return True
    if fields[0] == "Z":
        return False
    return started is None or len(fields) <= 19 or fields[19] == started
