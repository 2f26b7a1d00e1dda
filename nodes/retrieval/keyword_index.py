"""Per-user BM25 index over archived segments: the lexical candidate channel.

Built from the archive on first use and topped up with segments archived since, so it costs one
tokenisation per segment per process. Held in memory: the archive stays the source of truth.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter, OrderedDict

import numpy as np

from lumina_memory.stores.lexical import B, K1
from lumina_memory.stores.lexical_open import open_lexical
from lumina_memory.stores.protocols import LexicalIndex
from lumina_memory.stores.recall_snapshots import SEGMENTS

from ..text.tokenize import terms
from ..text.transliterate import index_keys, with_aliases
from . import segment_snapshot
from .index_snapshot import UNREADABLE, due, write
from .segment_terms import MIN_SEGMENTS, TurnTerms
from .turn_index import write_stamp
from .turn_reads import reader
from .user_locks import UserLocks

log = logging.getLogger("lumina.recall")


def doc_hash(text: str, keywords) -> bytes:
    """What a segment's document was read from (its text and keywords): a snapshot of the index is used only
    while every segment it holds still hashes the same (nodes.retrieval.segment_snapshot)."""
    h = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16)
    h.update(b"\x00" + "\x1f".join(keywords).encode("utf-8", "surrogatepass"))
    return h.digest()


class _UserIndex:
    """One user's segments as BM25 documents (stores.lexical), with what keeps it in step with the archive."""

    def __init__(self, lexical: LexicalIndex | None = None, ids: list[str] | None = None,
                 hashes: list[bytes] | None = None, archived_since: float = 0.0) -> None:
        self.lexical = lexical if lexical is not None else open_lexical()
        self.ids: list[str] = ids if ids is not None else []
        self.known: set[str] = set(self.ids)
        self.hashes: list[bytes] = hashes if hashes is not None else []  # each doc_hash, b"" when added from a text alone
        self.generation: int | None = None  # the archive's write generation last checked against
        self.archived_since = archived_since  # newest archived_at seen: segments archived later are the new ones
        # Documents added since the last search wait here and are posted together (a catch-up of 1,000 segments
        # is one numpy pass); a search or a refresh posts them.
        self._pending: list[tuple[list[str], tuple[str, ...]]] = []

    @property
    def lengths(self) -> list[int]:
        """Each document's length in terms, the pending ones included."""
        return [*map(int, self.lexical.lengths.tolist()), *(len(t) for t, _ in self._pending)]

    def add(self, segment_id: str, text: str, digest: bytes = b"") -> None:
        if segment_id not in self.known:
            self.add_counts(segment_id, Counter(terms(text)), index_keys(text), digest)

    def add_counts(self, segment_id: str, counts: Counter, keys: tuple[str, ...], digest: bytes = b"") -> None:
        """A document by its term counts and cross-script keys (nodes.retrieval.segment_terms sums them)."""
        if segment_id in self.known:
            return
        self.ids.append(segment_id)
        self.known.add(segment_id)
        self.hashes.append(digest)
        self._pending.append((list(counts.elements()), tuple(keys)))

    def _compiled(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The postings, every document added so far posted."""
        if self._pending:
            pending, self._pending = self._pending, []
            self.lexical = self.lexical.extended([t for t, _ in pending], [k for _, k in pending])
        return self.lexical.postings

    def search(self, query: str, limit: int, k1: float = K1, b: float = B,
               cross: bool = True) -> list[tuple[str, float]]:
        self._compiled()
        q_terms = terms(query)
        hits = self.lexical.search(list(with_aliases(query, q_terms)) if cross else q_terms, limit, k1, b)
        return [(self.ids[i], score) for i, score in hits]


def _document(text: str, keywords: list[str]) -> str:
    return text + "\n" + " ".join(keywords)


def _catch_up(index: _UserIndex, rows: list[tuple[str, str, list[str], float]], turns=None) -> None:
    """``turns``: the user's current turn index, to sum many segments' documents from (segment_terms)."""
    summed = TurnTerms(turns) if turns is not None and len(rows) >= MIN_SEGMENTS else None
    for segment_id, text, keywords, archived_at in rows:
        lines = summed.lines_of(segment_id) if summed is not None else None
        digest = doc_hash(text, keywords)
        if lines is not None and lines[1] == text:
            index.add_counts(segment_id, *summed.document(lines[0], keywords), digest)
        else:
            index.add(segment_id, _document(text, keywords), digest)
        index.archived_since = max(index.archived_since, archived_at)


class KeywordIndex:
    """At most ``max_users`` users' indexes, least recently used dropped first."""

    def __init__(self, max_users: int = 128, snapshots=None) -> None:
        """``snapshots``: the data directory's stores.recall_snapshots.SnapshotFiles (``keep_snapshot``)."""
        self.snapshots = snapshots
        self._snapshot_segments: dict[str, int] = {}  # user -> segments in their snapshot, as last written or read
        self.snapshots_loaded = 0
        self.snapshots_written = 0
        self.snapshots_dropped = 0
        self._users: OrderedDict[str, _UserIndex] = OrderedDict()
        self._lock = threading.Lock()  # the table of users; held for lookups only
        # One lock per user for building, topping up and searching that user's index: a cold build of a user
        # with 1,000 long segments takes seconds and must not hold up the other users' recalls meanwhile.
        self._user_locks = UserLocks()
        self.max_users = max_users

    def search(self, archive, user_id: str, query: str, limit: int, cross: bool = True, turns=None) -> list[tuple[str, float]]:
        """``cross``: also the other script's keys standing for the query's names (nodes.text.transliterate).
        ``turns``: the user's current turn index (nodes.retrieval.turn_index), which a build sums segments from."""
        with self._user_locks.hold(user_id):
            return self._current(archive, user_id, turns).search(query, limit, cross=cross)

    def refresh(self, archive, user_id: str, turns=None) -> None:
        """Bring the user's index up to the archive now (a flush's last stage calls it), so the next
        search finds nothing to catch up on and nothing to compile."""
        with self._user_locks.hold(user_id):
            self._current(archive, user_id, turns)._compiled()

    def _current(self, archive, user_id: str, turns=None) -> _UserIndex:
        """Under the user's lock."""
        with self._lock:
            index = self._users.get(user_id)
        if index is None:
            index = self._from_snapshot(archive, user_id, turns) or _UserIndex()
        with self._lock:
            self._users[user_id] = index
            self._users.move_to_end(user_id)
            while len(self._users) > self.max_users:
                gone, _ = self._users.popitem(last=False)
                self._user_locks.drop(gone)  # kept while someone holds it
        generation = write_stamp(archive, user_id)
        if generation is not None and index.generation == generation:
            return index
        index.generation = generation
        count = archive.counts(user_id, which=("segments",))["segments"]
        if len(index.ids) != count:
            if hasattr(archive, "segment_texts"):  # only what was archived since, without embeddings
                _catch_up(index, archive.segment_texts(user_id, index.archived_since), turns)
                if len(index.ids) != count:  # an erase, or a clock that went back: start over
                    index = self._replaced(user_id)
                    index.generation = generation
                    _catch_up(index, archive.segment_texts(user_id), turns)
            else:
                for segment in archive.segments(user_id):
                    index.add(segment.segment_id, _document(segment.text, segment.keywords))
                if len(index.ids) > count:  # an erase happened
                    index = self._replaced(user_id)
                    for segment in archive.segments(user_id):
                        index.add(segment.segment_id, _document(segment.text, segment.keywords))
        return index

    def _from_snapshot(self, archive, user_id: str, turns) -> _UserIndex | None:
        """Under the user's lock: their index from its snapshot (nodes.retrieval.segment_snapshot) and the segments
        archived since; None without one that fits (a stale or unreadable one is removed)."""
        files = self.snapshots
        path = files.existing(user_id, SEGMENTS) if files is not None and hasattr(archive, "segment_texts") else None
        if path is None:
            return None
        rows = archive.segment_texts(user_id)
        try:
            kept = segment_snapshot.load(path, user_id, reader((0, 0)), {r[0]: doc_hash(r[1], r[2]) for r in rows})
            index = _UserIndex(kept.lexical, kept.ids, kept.hashes, kept.archived_since) if kept is not None else None
        except UNREADABLE as exc:
            log.warning("segment index snapshot of a user unreadable, building from the archive: %s", exc)
            index = None
        with self._lock:
            if index is None:
                self.snapshots_dropped += 1
                self._snapshot_segments.pop(user_id, None)
            else:
                self.snapshots_loaded += 1
                self._snapshot_segments[user_id] = len(index.ids)
        if index is None:
            files.remove(user_id, (SEGMENTS,))
            return None
        _catch_up(index, [r for r in rows if r[0] not in index.known], turns)
        return index

    def keep_snapshot(self, archive, user_id: str) -> bool:
        """Write the user's index as their snapshot when none is kept or it has a tenth more segments than the one
        kept, and every document it holds still reads as the archive's segment does. At write time
        (nodes.retrieval.warm), for users whose turn index is worth a snapshot. True when written."""
        files = self.snapshots
        if files is None or not hasattr(archive, "segment_texts"):
            return False
        removals = files.removals  # before the look-up below: an erasure after it makes the write a no-op
        with self._user_locks.hold(user_id):
            with self._lock:
                index = self._users.get(user_id)
                kept = self._snapshot_segments.get(user_id)
            if index is None or not index.ids:
                return False
            wanted, kept = due(files.existing(user_id, SEGMENTS), len(index.ids), kept, "segments")
            with self._lock:
                self._snapshot_segments[user_id] = kept
            if not wanted:
                return False
            current = {r[0]: doc_hash(r[1], r[2]) for r in archive.segment_texts(user_id)}
            if any(current.get(i) != h for i, h in zip(index.ids, index.hashes)):
                return False  # the index holds a text the archive no longer has: rebuilt before it is kept
            index._compiled()
            snapshot = segment_snapshot.SegmentSnapshot(index.lexical, index.ids, index.hashes, index.archived_since)
            arrays = segment_snapshot.arrays_of(snapshot, user_id, reader((0, 0)))
        try:
            if arrays is None or not files.write(user_id, lambda handle: write(handle, arrays), removals, SEGMENTS):
                return False
        except OSError as exc:
            log.warning("segment index snapshot not written: %s", exc)
            return False
        with self._lock:
            self.snapshots_written += 1
            self._snapshot_segments[user_id] = len(arrays["lengths"])
        return True

    def summary(self) -> dict:
        with self._lock:
            return {"users": len(self._users), "snapshots_loaded": self.snapshots_loaded,
                    "snapshots_written": self.snapshots_written, "snapshots_dropped": self.snapshots_dropped}

    def _replaced(self, user_id: str) -> _UserIndex:
        with self._lock:
            self._users[user_id] = index = _UserIndex()
        return index

    def holds(self, user_id: str) -> bool:
        """Whether this process keeps an index of ``user_id`` (graphs.registry counts it for erasure)."""
        with self._lock:
            return user_id in self._users

    def forget(self, user_id: str) -> None:
        """Drop ``user_id``'s index (erasure): after any build or search of it in progress, so none puts it back."""
        with self._user_locks.hold(user_id):
            with self._lock:
                self._users.pop(user_id, None)
                self._snapshot_segments.pop(user_id, None)
            self._user_locks.drop(user_id, held=True)  # an erased user's id stays nowhere here
