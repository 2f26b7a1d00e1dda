"""Crash-safe replacement of an engine's files by a rebuilt copy (the rewrites that scrub erased bytes, L11).

An engine's files are a *live* path ``P`` (a file such as ``archive.duckdb`` or ``graph``, or a directory such
as a qdrant-edge shard) plus companions named ``P`` + suffix (``archive.duckdb.wal``). A rewrite

1. builds the complete new copy in ``P.swap-new/`` (under the same names) while the live files stay as they
   are, and fsyncs it (``staging`` / ``Swap.commit``);
2. writes the journal ``P.swap`` (write, fsync, rename, fsync the directory): the commit point;
3. drops the companions the new copy lacks (an old WAL must never be replayed onto the new file), moves each
   new entry over the live one (a file by ``os.replace``; a directory via ``P.swap-old/``), then removes
   ``P.swap-old/``, ``P.swap-new/`` and the journal.

``recover(P)`` runs before an engine opens its files: with a journal it redoes step 3 (every step of it can be
redone after a kill at any point), without one it removes the unfinished copy. A kill therefore leaves the old
files or the new ones, and the next open removes every leftover, so no stale copy keeps erased text.

``owe_rewrite(P)`` records that deleted data may linger in the live files (written before the delete is);
``rewrite_owed(P)`` is true until a rewrite's swap completes, so an open after a kill can run the rewrite that
the dead process never finished.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

log = logging.getLogger("lumina.file_swap")

NEW, OLD, JOURNAL, OWED = ".swap-new", ".swap-old", ".swap", ".rewrite-owed"
# Copies made by earlier rewrites that switched files without a journal: nothing can finish them, and they may
# hold erased text, so recovery removes them (a live file always exists beside them; see ``recover``).
LEGACY = (".rewrite", ".rewrite.wal")
SWAP_SUFFIXES = (NEW, OLD, JOURNAL, JOURNAL + ".tmp", OWED, *LEGACY)


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def fsync_path(path: Path) -> None:
    """fsync a file, or a directory and everything under it (files first, each directory after its entries)."""
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            fsync_path(child)
    elif not path.is_file():
        return
    fsync_dir(path)


def fsync_dir(path: Path) -> None:
    """fsync one file or directory entry itself (a directory: its list of names, after a rename or create)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _write_durably(path: Path, text: str) -> None:
    tmp = _sibling(path, ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def staging(live: Path) -> Path:
    """An empty ``P.swap-new/`` to build the new copy in (an earlier unfinished one is removed first)."""
    live = Path(live)
    folder = _sibling(live, NEW)
    remove(folder)
    _sibling(live, JOURNAL + ".tmp").unlink(missing_ok=True)
    folder.mkdir(mode=0o700)
    return folder


def commit(live: Path, companions: tuple[str, ...] = ()) -> None:
    """Switch to the copy built in ``staging(live)``: every entry there replaces the live one of its name, and
    each companion suffix (``".wal"``) whose file the new copy lacks is removed. Returns when the switch is
    durable and every swap file is gone."""
    live = Path(live)
    folder = _sibling(live, NEW)
    names = sorted(p.name for p in folder.iterdir())
    if live.name not in names:
        raise FileNotFoundError(f"{folder} holds no {live.name}: refusing to switch to an incomplete copy")
    fsync_path(folder)
    fsync_dir(live.parent)
    drop = [live.name + s for s in companions if live.name + s not in names]
    _write_durably(_sibling(live, JOURNAL), json.dumps({"replace": names, "drop": drop}))
    _roll_forward(live)


def _roll_forward(live: Path) -> None:
    """Step 3 of the module docstring; each action checks what is already done, so it can be rerun."""
    journal = json.loads(_sibling(live, JOURNAL).read_text(encoding="utf-8"))
    new, old, parent = _sibling(live, NEW), _sibling(live, OLD), live.parent
    for name in journal["drop"]:
        remove(parent / name)
    for name in journal["replace"]:
        src, dest = new / name, parent / name
        if not src.exists():
            continue  # moved before the kill
        if src.is_dir():
            if dest.exists():
                old.mkdir(mode=0o700, exist_ok=True)
                remove(old / name)
                os.replace(dest, old / name)
            os.replace(src, dest)
        else:
            os.replace(src, dest)
    fsync_dir(parent)
    remove(old)
    remove(new)
    _sibling(live, OWED).unlink(missing_ok=True)
    _sibling(live, JOURNAL).unlink(missing_ok=True)
    fsync_dir(parent)


def recover(live: Path) -> str | None:
    """Finish or undo a swap a dead process left (call before the engine opens ``live``); what was done:
    "finished" (the new copy is live), "rolled back" (the old files stay), or None (nothing was left)."""
    live = Path(live)
    journal, tmp = _sibling(live, JOURNAL), _sibling(live, JOURNAL + ".tmp")
    done = None
    if journal.exists():
        try:
            json.loads(journal.read_text(encoding="utf-8"))
        except ValueError:
            journal.unlink()  # cannot happen (written by rename); treated as never committed
        else:
            _roll_forward(live)
            done = "finished"
    for suffix in (NEW, OLD):
        if _sibling(live, suffix).exists():
            remove(_sibling(live, suffix))
            done = done or "rolled back"
    tmp.unlink(missing_ok=True)
    for suffix in LEGACY:
        if _sibling(live, suffix).exists() and live.exists():
            remove(_sibling(live, suffix))
            done = done or "rolled back"
    if done:
        fsync_dir(live.parent) if live.parent.exists() else None
        log.warning("an interrupted rewrite of %s was %s", live, done)
    return done


def recover_pending(live: Path) -> bool:
    """True when a swap of ``live`` was left unfinished (``recover`` has something to do): an engine that cannot
    have its files switched under it while open checks this first, then closes them and recovers."""
    live = Path(live)
    return any(_sibling(live, s).exists() for s in (JOURNAL, JOURNAL + ".tmp", NEW, OLD)) or (
        live.exists() and any(_sibling(live, s).exists() for s in LEGACY))


def owe_rewrite(live: Path) -> None:
    """Record, durably and before a delete, that ``live`` must be rewritten for the deleted bytes to go."""
    live = Path(live)
    if live.parent.exists() and not _sibling(live, OWED).exists():
        _write_durably(_sibling(live, OWED), "")


def rewrite_owed(live: Path) -> bool:
    return _sibling(Path(live), OWED).exists()


def leftovers(root: Path) -> list[Path]:
    """Swap files under ``root`` (a data dir) that an open has not cleaned up yet (for doctor and stats), and the
    ``.old`` shard folders an earlier, journal-less rewrite could leave."""
    root = Path(root)
    if not root.exists():
        return []
    found = []
    for path in root.rglob("*"):
        name = path.name
        if name.endswith(SWAP_SUFFIXES) or (name.endswith(".old") and path.is_dir()):
            found.append(path)
    # Inside a leftover folder only the folder itself is reported.
    return sorted(p for p in found if not any(q != p and q in p.parents for q in found))


def staging_entries(live: Path) -> list[Path]:
    folder = _sibling(Path(live), NEW)
    return sorted(folder.iterdir()) if folder.is_dir() else []
