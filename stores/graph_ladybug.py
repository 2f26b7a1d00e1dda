"""GraphStore on an embedded ladybug database (the maintained fork of Kùzu): in-process, one file.

ladybug facts this adapter relies on (ladybug 0.22):
- ``ladybug.Database(path)`` creates/opens a single database *file* at ``path`` (plus ``path.wal``
  while writing); ``ladybug.Connection(db).execute(query, params)`` binds ``$name`` parameters (lists
  and lists of maps included) and returns a ``QueryResult`` (``rows_as_dict().get_all()``).
- Schema first: MERGE on a label or edge type that is not a NODE/REL table is an error.
- ``BEGIN TRANSACTION`` / ``COMMIT`` / ``ROLLBACK`` are plain statements on the connection.
- Its header, catalog and metadata pages are written from heap buffers it does not clear, so the unused end
  of each page holds whatever the process freed before (seen: a user id from an earlier query's parameters,
  still there after that user's erasure and the file's rewrite). ``wipe_freed_memory`` below prevents it.
- A second *process* opening the file fails with "Could not set lock on file ... (Lock is held by
  PID n)"; a second ``Database`` on the same file in the *same* process opens without error but does
  not see the first one's writes, so this module refuses that itself.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

import ladybug

from . import cypher, file_swap
from .errors import DataDirLocked, StoreUnavailable
from .graph_base import CypherGraph, Rows, Step
from .settings import LuminaSettings

log = logging.getLogger("lumina.graph")

_LOCK_HELD = re.compile(r"Could not set lock on file(?:.*?held by PID (\d+))?", re.S)

# Database files open in this process; see the module docstring for why two handles must not coexist.
_open_paths: set[str] = set()
_open_paths_lock = threading.Lock()


_M_PERTURB = -6  # glibc mallopt(): fill freed memory with a byte, and new (non-calloc) memory with its complement
_PERTURB_BYTE = 0x5A


def wipe_freed_memory() -> bool:
    """Make the C allocator fill every block it hands out, and every block freed (glibc's M_PERTURB; it holds for
    the whole process).

    ladybug writes pages from uninitialised heap buffers (see the module docstring); with this a buffer holds
    the fill byte or what ladybug itself wrote, never bytes of an earlier query, so an erased user's id cannot
    come back into a rewritten file. Idempotent; False where the C library has no mallopt (not glibc), where
    ladybug's unused page space may still hold stale bytes of this process."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        log.warning("no glibc mallopt: ladybug may write stale heap bytes (erased ids) into its graph file")
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_PERTURB, _PERTURB_BYTE) == 1


# At import: before this process opens a graph, so every buffer ladybug allocates starts filled.
wipe_freed_memory()


class LadybugGraph(CypherGraph):
    backend = "ladybug"

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path).expanduser().resolve()
        self._key = str(self.path)
        with _open_paths_lock:
            if self._key in _open_paths:
                raise DataDirLocked(
                    str(self.path.parent), f"this process (pid {os.getpid()}): another LadybugGraph is open on it"
                )
            _open_paths.add(self._key)
        # One connection serves every thread; the lock keeps BEGIN..COMMIT of one caller from
        # interleaving with another caller's statements on that shared connection.
        self._lock = threading.RLock()
        self._closed = True  # until both handles exist
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A rewrite killed half-way is finished or undone before ladybug opens the file.
            file_swap.recover(self.path)
            self._db = self._open_database()
            try:
                self._conn = ladybug.Connection(self._db)
            except BaseException:
                self._db.close()
                raise
        except BaseException:
            self._release()
            raise
        self._closed = False
        try:
            for statement in cypher.LADYBUG_SCHEMA:  # IF NOT EXISTS: cheap and idempotent on reopen
                self._conn.execute(statement)
            # MERGE slows down with every uncheckpointed write still in the WAL: at the default 16 MB
            # threshold, upserting 1,000 segments took 5 s on an empty graph and 20 s by the 8th user's
            # thousand. Checkpointing every 2 MB keeps it near 5-9 s (see bench/README.md).
            self._conn.execute(cypher.LADYBUG_CHECKPOINT_THRESHOLD)
            if file_swap.rewrite_owed(self.path):
                # A process died between deleting a user's nodes and rewriting the file: their strings
                # are still in its freed pages.
                self.rewrite()
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_settings(cls, settings: LuminaSettings) -> "LadybugGraph":
        return cls(settings.resolved_data_dir() / "graph")

    def _open_database(self) -> ladybug.Database:
        try:
            return ladybug.Database(str(self.path))
        except RuntimeError as exc:
            match = _LOCK_HELD.search(str(exc))
            if match is None:
                raise
            holder = f"process {match.group(1)}" if match.group(1) else "another process"
            raise DataDirLocked(str(self.path.parent), f"{holder} (it has {self.path} open)") from exc

    def _release(self) -> None:
        with _open_paths_lock:
            _open_paths.discard(self._key)

    def _execute(self, query: str, params: Mapping[str, Any]) -> Rows:
        if self._closed:
            raise StoreUnavailable("graph", f"the ladybug graph at {self.path} is closed")
        result = self._conn.execute(query, dict(params))
        if isinstance(result, list):  # only multi-statement strings give a list; we never send those
            raise RuntimeError("one statement expected")
        try:
            # rows_as_dict() makes every row a dict keyed by the RETURN aliases
            return [cast(dict[str, Any], row) for row in result.rows_as_dict().get_all()]
        finally:
            result.close()

    create_new_edges = True  # one process owns the file, and _exclusive() serialises this process's writers

    def _exclusive(self) -> threading.RLock:
        return self._lock

    def _read(self, query: str, params: Mapping[str, Any]) -> Rows:
        with self._lock:
            return self._execute(query, params)

    def _neighbour_rows(self, seeds: list[str]) -> Rows:
        with self._lock:  # one lock for the seeds: their reads see one state of the graph
            return [row for seed in seeds
                    for row in self._execute(cypher.LADYBUG_ASSOCIATED_NEIGHBOURS_OF_ONE, {"segment_id": seed})]

    def _relation_rows(self, seeds: list[str]) -> Rows:
        with self._lock:
            return [row for seed in seeds
                    for query in (cypher.LADYBUG_RELATIONS_FROM_ONE, cypher.LADYBUG_RELATIONS_TO_ONE)
                    for row in self._execute(query, {"segment_id": seed})]

    def _write(self, steps: Sequence[Step]) -> list[Rows]:
        with self._lock:
            self._execute("BEGIN TRANSACTION", {})
            try:
                results = [self._execute(query, params) for query, params in steps]
            except BaseException:
                self._rollback_if_open()
                raise
            self._execute("COMMIT", {})
            return results

    def _rollback_if_open(self) -> None:
        try:
            self._execute("ROLLBACK", {})
        except RuntimeError as exc:
            # A statement that fails inside BEGIN..COMMIT makes ladybug roll back by itself; its
            # ROLLBACK then finds nothing to undo, and that must not hide the original error.
            if "No active transaction" not in str(exc):
                raise

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            # Connection before database (ladybug's advice); closing the database releases the file
            # lock so another process, or a new LadybugGraph here, can open it.
            try:
                self._conn.close()
                self._db.close()
            finally:
                self._release()

    def raw_paths(self) -> list[Path]:
        return [p for p in self.path.parent.glob(self.path.name + "*")]

    def delete_user(self, user_id: str) -> int:
        # Owed before the delete: a kill between the delete and the erasure's rewrite leaves the user's
        # strings in freed pages, and the next open must still rewrite the file (see __init__).
        if any(self.counts(user_id).nodes.values()):
            file_swap.owe_rewrite(self.path)
        return super().delete_user(user_id)

    def rewrite(self) -> None:
        """Dump the live graph and load it into a new database file built beside this one, then switch
        to it with stores.file_swap (L11): ladybug keeps deleted nodes' strings in the file's freed pages.
        A kill at any moment leaves the old file or the new one, never neither."""
        with self._lock:
            file_swap.owe_rewrite(self.path)  # until the switch: a kill before it leaves the next open to redo this
            rows = self.dump()
            self._execute("CHECKPOINT", {})
            fresh = LadybugGraph(file_swap.staging(self.path) / self.path.name)
            try:
                fresh.load(rows)
                fresh._execute("CHECKPOINT", {})
            finally:
                fresh.close()
            self.close()
            try:
                file_swap.commit(self.path, companions=(".wal", ".shadow"))
            finally:
                self.__init__(self.path)  # type: ignore[misc]  # the new file (or the old one if the switch failed)

    def __repr__(self) -> str:
        return f"LadybugGraph({str(self.path)!r})"
