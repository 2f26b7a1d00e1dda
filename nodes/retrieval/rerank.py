"""S6 re-ranking: maximal marginal relevance over the top of the ranking, and near-duplicate removal."""

from __future__ import annotations

import numpy as np


def mmr(pool: list[tuple], vectors: dict[int, np.ndarray], lam: float) -> list[tuple]:
    """S6 maximal marginal relevance over the pool: λ·score − (1−λ)·max similarity to those chosen.
    Candidates without a vector are never penalised."""
    if len(pool) < 2:
        return list(pool)
    dim = next((v.size for v in vectors.values()), 0)
    matrix = np.zeros((len(pool), max(dim, 1)), dtype=np.float32)
    for j, cand in enumerate(pool):
        vec = vectors.get(cand[1])
        if vec is not None:
            matrix[j] = vec
    sims = matrix @ matrix.T
    scores = np.array([c[0] for c in pool], dtype=np.float64)
    redundancy = np.zeros(len(pool))
    chosen = np.zeros(len(pool), dtype=bool)
    order: list[tuple] = []
    for _ in range(len(pool)):
        value = np.where(chosen, -np.inf, lam * scores - (1 - lam) * redundancy)
        j = int(np.argmax(value))
        chosen[j] = True
        order.append(pool[j])
        redundancy = np.maximum(redundancy, sims[j])
    return order


def dedup(ordered: list[tuple], vectors: dict[int, np.ndarray], turns, threshold: float, head: int) -> list[tuple]:
    """Drop a turn whose text repeats, or (among the first ``head``) whose vector is ≥ threshold similar
    to one kept before it (S3 at recall time)."""
    kept: list[tuple] = []
    texts: set[str] = set()
    dim = next((v.size for v in vectors.values()), 0)
    kept_matrix = np.zeros((max(head, 1), max(dim, 1)), dtype=np.float32)
    n_kept = 0
    for pos, cand in enumerate(ordered):
        text = turns[cand[1]].text
        if text in texts:
            continue
        vec = vectors.get(cand[1]) if pos < head else None
        if vec is not None:
            if n_kept and float(np.max(kept_matrix[:n_kept] @ vec)) >= threshold:
                continue
            kept_matrix[n_kept] = vec
            n_kept += 1
        texts.add(text)
        kept.append(cand)
    return kept
