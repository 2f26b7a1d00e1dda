"""How a backup is staged, for every location (stores.backup_location, stores.s3).

A snapshot is a folder ``<snapshot id>/`` with ``manifest.json`` written last; it is staged in
``.partial-<id>/`` with a ``.writer`` file naming its process (host and pid), so a partial whose writer is
gone (a killed backup) is known to be stale.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from .processes import pid_alive

MANIFEST = "manifest.json"
PARTIAL = ".partial-"
WRITER = ".writer"
# A partial written from another host cannot be probed: it is taken as stale once this old.
FOREIGN_STALE_SECONDS = 6 * 3600


def write_writer(folder: Path) -> None:
    """Name this process as the writer of the staged ``folder``."""
    write_private(folder / WRITER, json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "at": time.time()}))


def writer_alive(folder: Path) -> bool:
    """Whether the process that staged ``folder`` may still be writing it."""
    try:
        writer = json.loads((folder / WRITER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # no writer named: staged by a process that died before naming itself
    if writer.get("host") != socket.gethostname():
        return time.time() - float(writer.get("at", 0)) < FOREIGN_STALE_SECONDS
    pid = int(writer.get("pid", 0))
    return pid == os.getpid() or (pid > 0 and pid_alive(pid))


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only this user may read, flushed to disk before returning."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
