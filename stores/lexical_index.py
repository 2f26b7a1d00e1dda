"""``LexicalIndex`` on numpy postings in this process (stores.lexical scores them).

It stays in process because it measured better than the engine we ship: qdrant-edge's sparse vectors with the IDF
modifier return the same scores on LoCoMo at several times the query latency and indexing time
(bench/lexical_engines.py, bench/results/lexical_engines.md), and BM25's length normalisation would have to be
written into every stored vector with an average that moves as a user's history grows. The archive stays the
source of truth: the postings are a cache of what reading its texts gives, rebuilt from it or from a snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .lexical import B, K1, Postings, average, bm25, merged, norms, postings_of, ranked


class InProcessLexical:
    """``LexicalIndex`` on numpy postings in this process. Immutable: ``extended`` gives a new index, so a query
    running on this one keeps its view. ``avg``: the average length to normalise by, when the owner keeps one."""

    __slots__ = ("postings", "lengths", "avg")

    def __init__(self, postings: Postings | None = None, lengths: np.ndarray | None = None, avg: float | None = None) -> None:
        self.postings: Postings = postings if postings is not None else {}
        self.lengths = lengths if lengths is not None else np.zeros(0, dtype=np.float32)
        self.avg = avg if avg is not None else average(self.lengths.astype(np.float64))

    @property
    def size(self) -> int:
        return len(self.lengths)

    def extended(self, terms: Sequence[Sequence[str]], keys: Sequence[Sequence[str]]) -> "InProcessLexical":
        new, lengths = postings_of(terms, keys, self.size)
        all_lengths = np.concatenate([self.lengths, lengths])
        return InProcessLexical(merged(self.postings, new), all_lengths)

    def norms(self, k1: float = K1, b: float = B) -> np.ndarray:
        return norms(self.lengths.astype(np.float64), self.avg, k1, b)

    def search(self, query_terms: Sequence[str], limit: int, k1: float = K1, b: float = B) -> list[tuple[int, float]]:
        if not self.size or not query_terms:
            return []
        return ranked(bm25([(self.postings, self.norms(k1, b), None)], query_terms, k1=k1)[0], limit)
