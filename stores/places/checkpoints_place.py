"""The CLI's LangGraph checkpoints as a UserDataPlace: ``<data_dir>/checkpoints.sqlite`` when embedded, the
server mode's PostgreSQL otherwise (stores.places.checkpoints_pg; stores.places.checkpoints_open chooses).

A thread is the user's when its id is ``user:<id>`` (the CLI's threads, graphs.replay.thread_config) or
when its latest state's ``owner`` is the user (threads a LangGraph server runs, whose ids are uuids).
Erasing deletes every checkpoint and pending write of those threads: the open segment's turns live there,
and the next flush would otherwise archive them again. ``secure_delete`` + ``VACUUM`` rewrite the file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

THREAD_PREFIX = "user:"
FILE = "checkpoints.sqlite"


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, check_same_thread=False, timeout=30)
    con.execute("PRAGMA secure_delete=ON")  # freed pages are zeroed, not left holding the text
    return con


def sqlite_threads(con: sqlite3.Connection) -> list[str]:
    """Every thread id with a checkpoint in the SQLite database ([] before anything was ever checkpointed)."""
    try:
        return [r[0] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    except sqlite3.OperationalError:  # no table yet
        return []


def thread_owners(threads: list[str], saver) -> dict[str, str | None]:
    """thread id -> the user it belongs to (None when neither its id nor its latest state says); ``saver`` the
    checkpointer holding ``threads``."""
    out: dict[str, str | None] = {}
    for thread in threads:
        if thread.startswith(THREAD_PREFIX):
            out[thread] = thread[len(THREAD_PREFIX):]
            continue
        state = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        owner = (state.checkpoint.get("channel_values") or {}).get("owner") if state else None
        out[thread] = owner if isinstance(owner, str) and owner else None
    return out


def thread_users(con: sqlite3.Connection) -> dict[str, str | None]:
    """thread id -> the user it belongs to, in a SQLite checkpoint database."""
    return thread_owners(sqlite_threads(con), SqliteSaver(con))


def copy_threads(source, target, threads: list[str]) -> None:
    """Copy every checkpoint and pending write of ``threads`` from one checkpointer to another (a backup between
    SQLite and PostgreSQL), oldest first so each checkpoint's parent is there before it."""
    for thread in threads:
        for tup in reversed(list(source.list({"configurable": {"thread_id": thread}}))):
            conf = tup.config["configurable"]
            parent = ((tup.parent_config or {}).get("configurable") or {}).get("checkpoint_id")
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": conf.get("checkpoint_ns", ""),
                                       **({"checkpoint_id": parent} if parent else {})}}
            saved = target.put(config, tup.checkpoint, tup.metadata, dict(tup.checkpoint.get("channel_versions") or {}))
            by_task: dict[str, list] = {}
            for task_id, channel, value in tup.pending_writes or []:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                target.put_writes(saved, writes, task_id)


def delete_threads(con: sqlite3.Connection, threads: list[str]) -> None:
    saver = SqliteSaver(con)
    for thread in threads:
        saver.delete_thread(thread)
    con.commit()


def compact(con: sqlite3.Connection) -> None:
    con.commit()
    con.execute("VACUUM")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the WAL still held the deleted pages' old images


class CheckpointsPlace:
    name = "checkpoints"

    def __init__(self, path: Path):
        self.path = Path(path)
        self._dirty = False

    def _users(self) -> dict[str, str | None]:
        if not self.path.exists():
            return {}
        con = _connect(self.path)
        try:
            return thread_users(con)
        finally:
            con.close()

    def threads_of(self, user_id: str) -> list[str]:
        return sorted(t for t, u in self._users().items() if u == user_id)

    def count(self, user_id: str) -> int:
        return len(self.threads_of(user_id))

    def erase(self, user_id: str) -> int:
        threads = self.threads_of(user_id)
        if threads:
            con = _connect(self.path)
            try:
                delete_threads(con, threads)
            finally:
                con.close()
            self._dirty = True
        return len(threads)

    def scrub(self) -> None:
        if self._dirty and self.path.exists():
            con = _connect(self.path)
            try:
                compact(con)
            finally:
                con.close()
            self._dirty = False

    def raw_paths(self) -> list[Path]:
        return [self.path.with_name(self.path.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]

    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / FILE
        if not self.path.exists():
            return 0
        source, target = _connect(self.path), sqlite3.connect(out)
        try:
            source.backup(target)  # a consistent copy while writers may be active
            target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file in the backup
        finally:
            target.close()
            source.close()
        os.chmod(out, 0o600)
        return len(self._users())

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        backup = src / FILE
        if not backup.exists():
            return 0
        source, target = sqlite3.connect(backup), _connect(self.path)
        try:
            source.backup(target)
            users = thread_users(target)
            delete_threads(target, [t for t, u in users.items() if u is not None and is_erased(u)])
            compact(target)
            kept = sum(1 for u in users.values() if u is None or not is_erased(u))
        finally:
            target.close()
            source.close()
        os.chmod(self.path, 0o600)
        return kept

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return forget_in_file(src / FILE, user_id)


def forget_in_file(backup: Path, user_id: str) -> int:
    """Rewrite a SQLite checkpoint file of a snapshot without the user's threads; how many went."""
    if not backup.exists():
        return 0
    con = _connect(backup)
    try:
        threads = [t for t, u in thread_users(con).items() if u == user_id]
        if threads:
            delete_threads(con, threads)
            compact(con)
    finally:
        con.close()
    return len(threads)


class SqliteCheckpoints:
    """An open SqliteSaver on the data dir's file, for a graph (the CLI) or a sweep (idle segments)."""

    def __init__(self, path: Path):
        self.con = _connect(path)
        self.saver = SqliteSaver(self.con)

    def threads(self) -> list[str]:
        return sqlite_threads(self.con)

    def close(self) -> None:
        self.con.close()
