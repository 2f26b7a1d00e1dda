"""Per-user BM25 index over archived segments: the lexical candidate channel.

Built from the archive on first use and topped up with segments archived since, so it costs one
tokenisation per segment per process. Held in memory: the archive stays the source of truth.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict

from ..text.tokenize import terms


class _UserIndex:
    def __init__(self) -> None:
        self.docs: dict[str, Counter[str]] = {}
        self.lengths: dict[str, int] = {}
        self.postings: dict[str, set[str]] = defaultdict(set)
        self.total = 0
        self.generation: int | None = None  # the archive's write generation last checked against

    def add(self, segment_id: str, text: str) -> None:
        if segment_id in self.docs:
            return
        counts = Counter(terms(text))
        self.docs[segment_id] = counts
        self.lengths[segment_id] = sum(counts.values())
        self.total += self.lengths[segment_id]
        for term in counts:
            self.postings[term].add(segment_id)

    def search(self, query: str, limit: int, k1: float = 1.2, b: float = 0.75) -> list[tuple[str, float]]:
        n = len(self.docs)
        if not n:
            return []
        avg = self.total / n or 1.0
        scores: dict[str, float] = defaultdict(float)
        for term in dict.fromkeys(terms(query)):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for seg in posting:
                tf = self.docs[seg][term]
                scores[seg] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * self.lengths[seg] / avg))
        return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]


class KeywordIndex:
    def __init__(self) -> None:
        self._users: dict[str, _UserIndex] = {}
        self._lock = threading.Lock()

    def search(self, archive, user_id: str, query: str, limit: int) -> list[tuple[str, float]]:
        with self._lock:
            index = self._users.setdefault(user_id, _UserIndex())
            generation = getattr(archive, "generation", None)
            if generation is not None and index.generation == generation:
                return index.search(query, limit)
            index.generation = generation
            if len(index.docs) != archive.counts(user_id)["segments"]:
                for segment in archive.segments(user_id):
                    index.add(segment.segment_id, f"{segment.text}\\n{' '.join(segment.keywords)}")
                if len(index.docs) > archive.counts(user_id)["segments"]:  # an erase happened
                    self._users[user_id] = index = _UserIndex()
                    for segment in archive.segments(user_id):
                        index.add(segment.segment_id, f"{segment.text}\\n{' '.join(segment.keywords)}")
            return index.search(query, limit)

    def forget(self, user_id: str) -> None:
        with self._lock:
            self._users.pop(user_id, None)
