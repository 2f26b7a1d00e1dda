"""The per-user turn indexes of one process (nodes.retrieval.user_turns), kept in step with the archive.

Built from the archive on first use (or loaded from the user's snapshot, nodes.retrieval.index_snapshot) and
topped up with the turns archived since, or rebuilt when the user's history changed otherwise (an erase, turns that
arrived out of order), so it costs one tokenisation per turn per process. The archive stays the source of truth.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from lumina_memory.stores.models import Turn
from lumina_memory.stores.recall_snapshots import TURNS

from . import index_snapshot
from .turn_reads import TurnReads, keep_reads, read_turns, reader, stored_reads
from .turn_search import unified_search
from .turn_table import IndexedTurn, TurnTable, speaker_labels
from .user_locks import UserLocks
from .user_turns import UserTurns

# Callers reach the turn index, what it holds and its searches through this module.
__all__ = ["IndexedTurn", "TurnIndex", "TurnTable", "UserTurns", "speaker_labels", "unified_search", "write_stamp"]

log = logging.getLogger("lumina.recall")


def write_stamp(archive, user_id: str) -> int | None:
    """What an in-process index of ``user_id`` compares to know nothing was written since it last looked:
    the archive's per-user stamp, else its global write generation, else None (always look)."""
    if hasattr(archive, "generation_of"):
        return archive.generation_of(user_id)
    return getattr(archive, "generation", None)


def _vectors_key(turn_vectors) -> str:
    """Which vectors a snapshot's matrix holds: the turn-vector collection (named by embedder and size)."""
    if turn_vectors is None:
        return ""
    return f"{getattr(turn_vectors, 'collection', '')}/{getattr(turn_vectors, 'dim', 0)}"


# A top-up of more new turns than this looks for reads the archive kept (another process archived them).
_LOOK_UP_FROM = 64


class TurnIndex:
    """The per-user indexes of one process, at most ``max_users`` of them (least recently used go
    first: at 10,000 turns a user's index holds ~15 MB, and a server sees many users)."""

    def __init__(self, max_users: int = 128, passage_cut: tuple[int, int] = (0, 0), snapshots=None,
                 snapshot_min_turns: int = 0) -> None:
        """``passage_cut``: (window tokens, least turn tokens) of long turns' passages; (0, 0) for none.
        ``snapshots``: the data directory's stores.recall_snapshots.SnapshotFiles, where users' built indexes are
        kept (``keep_snapshot``) and loaded by a build; ``snapshot_min_turns``: the least turns worth a snapshot
        (0: none are written)."""
        self.passage_cut = passage_cut
        self.snapshots = snapshots
        self.snapshot_min_turns = snapshot_min_turns
        self._snapshot_turns: dict[str, int] = {}  # user -> turns in their snapshot, as last written or read
        self.snapshots_loaded = 0
        self.snapshots_written = 0
        self.snapshots_dropped = 0  # found stale or unreadable, removed
        self._users: OrderedDict[str, UserTurns] = OrderedDict()
        self._lock = threading.Lock()  # the table of users; held for lookups only
        # One lock per user for building or topping up that user's index: a cold build of a user with long
        # replies takes seconds, and must not hold up the other users' recalls meanwhile.
        self._user_locks = UserLocks()
        self.max_users = max_users
        self.rebuilds = 0  # full builds from the archive (a new user, an erase, turns that arrived out of order)
        self.extensions = 0  # top-ups with the turns archived since
        # Turns read from their text (then kept in the archive), and turns whose kept read was decoded instead:
        # what a fresh process's first builds cost (nodes.retrieval.turn_reads).
        self.reads_made = 0
        self.reads_decoded = 0
        self.kept_reads = True  # False: read every text, as before reads were kept (bench.cold_start's baseline)

    def get(self, archive, user_id: str, turn_vectors=None) -> UserTurns:
        """``turn_vectors``: the turn-vector store; when given, the index also holds the turns' vectors."""
        with self._user_locks.hold(user_id):
            with self._lock:
                index = self._users.get(user_id)
            # Read before counting: a write landing meanwhile leaves an older stamp, so the next call re-checks.
            generation = write_stamp(archive, user_id)
            if index is None or generation is None or index.generation != generation:
                count = archive.counts(user_id, which=("turns",))["turns"]
                if index is None or len(index.turns) != count:
                    index = self._refreshed(archive, user_id, turn_vectors, index, count)
                index.generation = generation
            if turn_vectors is not None and index.vectors is None:
                index.load_vectors(turn_vectors, user_id)
            with self._lock:
                self._users[user_id] = index
                self._users.move_to_end(user_id)
                while len(self._users) > self.max_users:
                    gone, _ = self._users.popitem(last=False)
                    self._user_locks.drop(gone)  # kept while someone holds it
            return index

    def _refreshed(self, archive, user_id: str, turn_vectors, index: UserTurns | None, count: int) -> UserTurns:
        incremental = hasattr(archive, "turns_since")
        if index is not None and incremental and count > len(index.turns):
            new, last = archive.turns_since(user_id, index.last_seq)
            # Appending is exact when nothing went (the counts add up) and the new turns come after every
            # indexed one in conversation order; a back-filled history or an erase rebuilds.
            if len(index.turns) + len(new) == count and (not index.turns or not new or new[0].ts >= index.turns[-1].ts):
                # A top-up after a write reads its few turns and keeps the reads; one that catches up on many
                # (archived by another process) looks for reads kept there first.
                reads = self._reads(archive, user_id, new, only_these=None if len(new) <= _LOOK_UP_FROM else True)
                extended = index.extended(new, turn_vectors, user_id, reads)
                extended.last_seq = last
                with self._lock:
                    self.extensions += 1
                return extended
        if hasattr(archive, "turn_columns"):
            columns, last = archive.turn_columns(user_id)
            turns = TurnTable(tuple(tuple(columns[f]) for f in IndexedTurn._fields))
        elif incremental:
            turns, last = archive.turns_since(user_id, 0)
        else:
            turns, last = archive.all_turns(user_id), 0
        rebuilt = self._from_snapshot(archive, user_id, turns, turn_vectors) if index is None else None
        if rebuilt is None:
            rebuilt = UserTurns.build(turns, self.passage_cut, self._reads(archive, user_id, turns))
            with self._lock:
                self.rebuilds += 1
        rebuilt.last_seq = last
        if turn_vectors is not None and rebuilt.vectors is None:
            rebuilt.load_vectors(turn_vectors, user_id, index)
        return rebuilt

    def _from_snapshot(self, archive, user_id: str, turns: list[Turn], turn_vectors) -> UserTurns | None:
        """The user's index from their snapshot (nodes.retrieval.index_snapshot) and the turns archived after it;
        None when there is none that fits ``turns`` (a stale or unreadable one is removed and logged)."""
        path = self.snapshots.existing(user_id) if self.snapshots is not None and turns else None
        if path is None:
            return None
        table = TurnTable.of(turns)
        try:
            loaded = index_snapshot.load(path, user_id, reader(self.passage_cut), table, self.passage_cut,
                                         _vectors_key(turn_vectors))
        except index_snapshot.UNREADABLE as exc:
            log.warning("recall index snapshot of a user unreadable, building from the archive: %s", exc)
            loaded = None
        if loaded is None:
            self.snapshots.remove(user_id, (TURNS,))
            with self._lock:
                self.snapshots_dropped += 1
                self._snapshot_turns.pop(user_id, None)
            return None
        kept = len(loaded.turns)
        rest = turns[kept:]
        if rest:  # archived since the snapshot was written: added as a top-up adds them
            loaded = loaded.extended(rest, turn_vectors if loaded.vectors is not None else None, user_id,
                                     self._reads(archive, user_id, rest, only_these=True))
        with self._lock:
            self.snapshots_loaded += 1
            self._snapshot_turns[user_id] = kept
        return loaded

    def worth_a_snapshot(self, index: UserTurns) -> bool:
        return self.snapshots is not None and bool(self.snapshot_min_turns) and len(index.turns) >= self.snapshot_min_turns

    def keep_snapshot(self, user_id: str, index: UserTurns, turn_vectors=None) -> bool:
        """Write ``index`` (the user's current one) as their snapshot when it is worth one: at least
        ``snapshot_min_turns`` turns, and none kept yet or a tenth more turns than the one kept. Called at write
        time (nodes.retrieval.warm), never inside a recall. True when written."""
        files, n = self.snapshots, len(index.turns)
        if not self.worth_a_snapshot(index):
            return False
        removals = files.removals  # before the check below: an erasure after it makes the write a no-op
        with self._lock:
            if self._users.get(user_id) is not index:  # forgotten (erased) or replaced since
                return False
            kept = self._snapshot_turns.get(user_id)
        wanted, kept = index_snapshot.due(files.existing(user_id), n, kept, "turns")
        if not wanted:
            with self._lock:
                self._snapshot_turns[user_id] = kept
            return False
        arrays = index_snapshot.arrays_of(index, user_id, reader(self.passage_cut), _vectors_key(turn_vectors))
        try:
            if not files.write(user_id, lambda handle: index_snapshot.write(handle, arrays), removals):
                return False
        except OSError as exc:  # a full disk: the index is built as before next time
            log.warning("recall index snapshot not written: %s", exc)
            return False
        with self._lock:
            self.snapshots_written += 1
            self._snapshot_turns[user_id] = n
        return True

    def _reads(self, archive, user_id: str, turns: list[Turn], only_these: bool | None = False) -> TurnReads:
        """``turns`` read: from the reads the archive keeps where it has them (``only_these``: asking for these
        turns only; None: not asking), the rest read now and kept for the next process."""
        ids = [t.turn_id for t in turns]
        texts = [t.text for t in turns]
        stored = {} if only_these is None or not self.kept_reads else stored_reads(archive, user_id, ids, self.passage_cut, only_these)
        reads = read_turns(texts, self.passage_cut, stored)
        keep_reads(archive, user_id, ids, texts, self.passage_cut, reads)
        with self._lock:
            self.reads_made += len(reads.fresh)
            self.reads_decoded += len(turns) - len(reads.fresh)
        return reads

    def summary(self) -> dict:
        """What this process's index holds and what building it cost (graphs.inspect.tier_stats)."""
        with self._lock:
            return {"users": len(self._users), "rebuilds": self.rebuilds, "top_ups": self.extensions,
                    "turns_read": self.reads_made, "reads_decoded": self.reads_decoded,
                    "snapshots_loaded": self.snapshots_loaded, "snapshots_written": self.snapshots_written,
                    "snapshots_dropped": self.snapshots_dropped}

    def holds(self, user_id: str) -> bool:
        """Whether this process keeps an index of ``user_id`` (graphs.registry counts it for erasure)."""
        with self._lock:
            return user_id in self._users

    def forget(self, user_id: str) -> None:
        """Drop ``user_id``'s index (erasure): after any build of it in progress, so none puts it back."""
        with self._user_locks.hold(user_id):
            with self._lock:
                self._users.pop(user_id, None)
                self._snapshot_turns.pop(user_id, None)
            # Its id goes too (an erased user leaves nothing here); a get() already waiting on this lock
            # takes the user's next one and reads the archive after the erase, like any later one.
            self._user_locks.drop(user_id, held=True)
