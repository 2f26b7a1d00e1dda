"""Keyword searches over a user's turns beyond plain BM25 (stores.lexical scores them all): a turn with the words
of the turns it answers, and short turns with long turns' passages as one collection."""

from __future__ import annotations

import numpy as np

from lumina_memory.stores.lexical import B, K1, Spread, bm25, norms, ranked


def answer_context(same_exchange: np.ndarray, own: np.ndarray, context: float, context2: float) -> tuple[np.ndarray, Spread]:
    """(each turn's document length, how a term's postings spread) when each turn's document also holds the words
    of the turn before it in the same exchange at weight ``context``, and those of the turn two back at ``context2``
    when all three are one exchange. ``same_exchange[i]``: turns i and i+1 belong together; ``own``: each turn's
    own length."""
    n = len(own)
    follows = np.zeros(n, dtype=bool)  # follows[i]: turn i answers turn i-1 (same exchange)
    follows[1:] = same_exchange[: n - 1]
    follows2 = np.zeros(n, dtype=bool)  # follows2[i]: turns i-2, i-1 and i are one exchange
    follows2[2:] = follows[2:] & follows[1:-1]
    lengths = own.copy()
    lengths[1:] += context * np.where(follows[1:], own[:-1], 0.0)
    lengths[2:] += context2 * np.where(follows2[2:], own[:-2], 0.0)
    tf_ctx = np.zeros(n, dtype=np.float64)

    def spread(idx: np.ndarray, tf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tf_ctx[:] = 0.0
        tf_ctx[idx] = tf
        for step, weight, chained in ((1, context, follows), (2, context2, follows2)):
            if weight <= 0:
                continue
            nxt = idx + step
            keep = nxt < n
            nxt, carried = nxt[keep], tf[keep]
            keep = chained[nxt]
            tf_ctx[nxt[keep]] += weight * carried[keep]
        docs = np.flatnonzero(tf_ctx)
        return docs, tf_ctx[docs]

    return lengths, spread


def unified_search(index, query_terms: list[str], limit: int, k1: float = K1, b: float = B) -> list[tuple[int, float]]:
    """BM25 over one collection of documents: each short turn of ``index`` (nodes.retrieval.user_turns.UserTurns)
    whole and each passage of a long turn (nodes.retrieval.passage_index), with shared statistics; a long turn
    scores as its best passage. Turns best first, as ``UserTurns.search``. Scored apart, a long turn's passages
    would count as a channel of their own that short turns lack, and replies would crowd out the short turns that
    hold most facts."""
    passages = index.passages
    n = len(index.turns)
    if not n or not query_terms or not len(passages.doc_turn):
        return index.search(query_terms, limit, k1, b)
    is_long = np.zeros(n, dtype=bool)
    is_long[passages.doc_turn] = True
    short_lengths = index.lengths[:n].astype(np.float64)
    pass_lengths = passages.lengths.astype(np.float64)
    docs = int((~is_long).sum()) + len(pass_lengths)
    avg = (float(short_lengths[~is_long].sum()) + float(pass_lengths.sum())) / max(docs, 1) or 1.0

    def short_only(idx: np.ndarray, tf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keep = ~is_long[idx]
        return idx[keep], tf[keep].astype(np.float64)

    turn_scores, pass_scores = bm25([(index.postings, norms(short_lengths, avg, k1, b), short_only),
                                     (passages.postings, norms(pass_lengths, avg, k1, b), None)], query_terms, docs, k1)
    np.maximum.at(turn_scores, passages.doc_turn, pass_scores)
    return ranked(turn_scores, limit)
