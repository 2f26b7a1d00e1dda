"""Automatic same_topic relations (F6, batch step 7): new × all cosine by matrix products, in blocks.

The notes compare only "new" memories (created since the last batch, or re-embedded because compression changed
their text) with all of the user's active memories, by one NumPy product. Here the product is cut into blocks
(``block_rows`` × ``block_cols``), so memory stays bounded whatever the user's size, and only each new memory's
best ``max_relations_per_memory`` candidates survive a block.

Choices (the reference makes the same):
- Candidates of a new memory: active memories of the same user, itself excluded, cosine ≥ the threshold; its
  best ``max_relations_per_memory`` by cosine (ties: lower row first). Zero vectors link to nothing.
- A pair found from both sides counts once (its higher cosine); a pair already related, either way and of any
  kind, is skipped (the notes: "add if no relation exists").
- The new relation points by the direction rule (``relations.points_right``), and a memory's outgoing relations
  never exceed ``max_relations_per_memory`` through auto-linking: a source with room takes its candidates by
  cosine, highest first (ties: lower target row).
"""

from __future__ import annotations

import numpy as np

from .columns import ARCHIVED, SAME_TOPIC, MemoryColumns, Relations
from .params import LifecycleParams
from .relations import points_right


def _best_per_row(rows: np.ndarray, cols: np.ndarray, sims: np.ndarray, k: int):
    order = np.lexsort((cols, -sims, rows))
    rows, cols, sims = rows[order], cols[order], sims[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    keep = rank < k
    return rows[keep], cols[keep], sims[keep]


def unit_rows(embeddings: np.ndarray, dtype=np.float32) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero: they link to nothing)."""
    vectors = np.asarray(embeddings, dtype)
    norms = np.linalg.norm(vectors, axis=1)
    return np.divide(vectors, norms[:, None], out=np.zeros_like(vectors), where=(norms > 0)[:, None])


def top_similar(
    embeddings: np.ndarray, queries: np.ndarray, candidates: np.ndarray, threshold: float, k: int,
    *, block_rows: int = 1024, block_cols: int = 8192, dtype=np.float32, unit: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each query row, its k most similar candidate rows (cosine ≥ threshold, itself excluded).
    Returns parallel arrays (query row, candidate row, cosine), sorted by query row then cosine descending.
    ``unit``: ``unit_rows(embeddings, dtype)`` when the caller already has it (one normalisation for many calls)."""
    if unit is None:
        unit = unit_rows(embeddings, dtype)
    # zero rows among these rows only: over the whole matrix, per call, it was most of a one-call auto-link
    queries = queries[np.any(unit[queries] != 0, axis=1)]
    candidates = candidates[np.any(unit[candidates] != 0, axis=1)]
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))
    for start in range(0, len(queries), block_rows):
        query_block = queries[start:start + block_rows]
        best = empty
        for cstart in range(0, len(candidates), block_cols):
            cand_block = candidates[cstart:cstart + block_cols]
            sims = unit[query_block] @ unit[cand_block].T
            sims[query_block[:, None] == cand_block[None, :]] = -np.inf
            hit_r, hit_c = np.nonzero(sims >= threshold)
            if not len(hit_r):
                continue
            merged = (
                np.concatenate([best[0], query_block[hit_r]]), np.concatenate([best[1], cand_block[hit_c]]),
                np.concatenate([best[2], sims[hit_r, hit_c].astype(np.float64)]),
            )
            best = _best_per_row(*merged, k)
        found.append(best)
    if not found:
        return empty
    return tuple(np.concatenate(parts) for parts in zip(*found))  # type: ignore[return-value]


def auto_link(
    embeddings: np.ndarray, new: np.ndarray, columns: MemoryColumns, relations: Relations,
    params: LifecycleParams, *, block_rows: int = 1024, block_cols: int = 8192, dtype=np.float32,
) -> tuple[Relations, np.ndarray]:
    """Step 7: same_topic relations to add (not yet added) and their cosines. ``embeddings`` has one row per
    memory row (archived rows' vectors are ignored); ``new`` marks the new and re-embedded memories."""
    if not params.enable_auto_linking or not len(columns):
        return Relations.empty(), np.empty(0)
    active = columns.level != ARCHIVED
    cap = params.max_relations_per_memory
    parts = []
    # Normalised once for every user: per call it was 60× the matrix products at 1M memories (bench/lifecycle).
    unit = unit_rows(embeddings, dtype)
    # each user's active rows from one stable sort (ascending within a user), not a mask over every row per user
    rows = np.flatnonzero(active)
    rows = rows[np.argsort(columns.group[rows], kind="stable")]
    by_group = columns.group[rows]
    for group in np.unique(columns.group[new & active]):
        mine = rows[np.searchsorted(by_group, group, "left"):np.searchsorted(by_group, group, "right")]
        parts.append(top_similar(
            embeddings, mine[new[mine]], mine,
            params.auto_link_similarity_threshold, cap, block_rows=block_rows, block_cols=block_cols, dtype=dtype,
            unit=unit,
        ))
    if not parts:
        return Relations.empty(), np.empty(0)
    rows, cols, sims = (np.concatenate(p) for p in zip(*parts))

    # one entry per unordered pair, its higher cosine
    low, high = np.minimum(rows, cols), np.maximum(rows, cols)
    size = max(len(columns), 1)
    order = np.lexsort((-sims, high, low))
    low, high, sims = low[order], high[order], sims[order]
    pair = low * size + high
    first = np.ones(len(pair), bool)
    first[1:] = pair[1:] != pair[:-1]
    low, high, sims, pair = low[first], high[first], sims[first], pair[first]

    related = np.minimum(relations.src, relations.dst) * size + np.maximum(relations.src, relations.dst)
    fresh = ~np.isin(pair, related)
    low, high, sims = low[fresh], high[fresh], sims[fresh]

    forward = points_right(low, high, columns, params)
    src, dst = np.where(forward, low, high), np.where(forward, high, low)
    outgoing = np.bincount(relations.src, minlength=len(columns))
    order = np.lexsort((dst, -sims, src))
    src, dst, sims = src[order], dst[order], sims[order]
    rank = np.arange(len(src)) - np.searchsorted(src, src, side="left")
    keep = rank < cap - outgoing[src]
    links = Relations.of(src[keep], dst[keep], np.full(int(keep.sum()), SAME_TOPIC))
    return links, sims[keep]
