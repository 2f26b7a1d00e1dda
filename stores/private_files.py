"""A data directory is private to its owner: 0700 directories, 0600 files (issue 16).

Everything in it is what users said. The embedded engines (DuckDB, qdrant-edge, ladybug, SQLite, the
private Redis server) create their files themselves, with the process umask, and go on creating new ones
(WAL files, segments, snapshots) while they run: no mode can be passed to them. So opening a data
directory (stores.datadir_lock, which every embedded engine's opener goes through first) makes the
process umask private — 077 added to whatever it was, for the rest of the process, child processes
(redis-server) included — and repairs the modes of a data directory created before that was so.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("lumina.stores")

PRIVATE_BITS = 0o077  # group and other: none


def _current_umask() -> int:
    # /proc gives it without changing it (os.umask can only read by setting, a race with other threads).
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o077)
    os.umask(old)
    return old


def private_umask() -> None:
    """Files and directories this process creates from now on are its owner's only."""
    current = _current_umask()
    if current & PRIVATE_BITS != PRIVATE_BITS:
        os.umask(current | PRIVATE_BITS)


def make_private(directory: str | os.PathLike[str]) -> None:
    """Create ``directory`` (0700) if needed, set the private umask, and take group/other bits off every
    directory and file already under it (symlinks are left alone: they may point outside)."""
    private_umask()
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths = [root]
    for folder, dirs, files in os.walk(root):  # does not follow symlinked directories
        paths += [Path(folder, name) for name in (*dirs, *files)]
    for path in paths:
        try:
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not mode & PRIVATE_BITS:
                continue
            os.chmod(path, stat.S_IMODE(mode) & ~PRIVATE_BITS)
        except FileNotFoundError:
            continue  # an engine removed it meanwhile
        except PermissionError:
            log.warning("cannot make %s private (owned by another user?)", path)
