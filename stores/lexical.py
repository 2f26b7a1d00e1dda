"""Lexical search of the store layer: BM25 and its postings, written once.

Every keyword search of recall (segments, turns, turns with the words of the turns they answer, long turns'
passages, and short turns with passages as one collection) scores with ``bm25`` below. Documents are numbered
in the order they were added; postings map a term to (document numbers in increasing order, int64; term
frequencies, float32). The ``LexicalIndex`` adapter on these postings is stores.lexical_index, opened through
stores.lexical_open.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain

import numpy as np

K1, B = 1.2, 0.75  # BM25's term-frequency saturation and length normalisation

Postings = dict[str, tuple[np.ndarray, np.ndarray]]
# (documents, term frequencies) of one query term -> the ones to score and their frequencies
Spread = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def idf(n: int, df: int) -> float:
    """BM25's inverse document frequency of a term in ``df`` of ``n`` documents (Lucene's, never negative)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def norms(lengths: np.ndarray, avg: float, k1: float = K1, b: float = B) -> np.ndarray:
    """Each document's length normalisation, ``k1 * (1 - b + b * length / avg)``."""
    return k1 * (1 - b + b * lengths / avg)


def average(lengths: np.ndarray) -> float:
    """The average document length BM25 normalises by (1.0 for no documents or only empty ones)."""
    return (float(lengths.mean()) if len(lengths) else 1.0) or 1.0


def bm25(parts: Sequence[tuple[Mapping[str, tuple[np.ndarray, np.ndarray]], np.ndarray, Spread | None]],
         query_terms: Iterable[str], n: int | None = None, k1: float = K1) -> list[np.ndarray]:
    """BM25 scores of every document of each part, for ``query_terms`` (each distinct term once, in order).

    A part is (postings, its documents' ``norms``, spread): ``spread`` maps a term's postings to the documents
    scored and their frequencies (some left out, or words carried to neighbours); None scores them as they are.
    The parts share one collection's statistics: a term's document frequency is summed over them and ``n`` is
    the collection's size (default: the first part's documents)."""
    n = len(parts[0][1]) if n is None else n
    scores = [np.zeros(len(norm), dtype=np.float64) for _, norm, _ in parts]
    for term in dict.fromkeys(query_terms):
        found = []
        for postings, _, spread in parts:
            posting = postings.get(term)
            if posting is None:
                found.append(None)
                continue
            docs, tf = posting
            found.append(spread(docs, tf) if spread is not None else (docs, tf.astype(np.float64)))
        df = sum(f[0].size for f in found if f is not None)
        if not df:
            continue
        weight = idf(n, df)
        for (_, norm, _), out, hit in zip(parts, scores, found):
            if hit is not None and hit[0].size:
                docs, tf = hit
                out[docs] += weight * tf * (k1 + 1) / (tf + norm[docs])
    return scores


def ranked(scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """(document, score) of the ``limit`` best scoring documents, best first, ties in document order."""
    found = np.flatnonzero(scores)
    top = found[np.argsort(-scores[found], kind="stable")[:limit]]
    return [(int(i), float(scores[i])) for i in top]


def postings_of(terms: Sequence[Sequence[str]], keys: Sequence[Sequence[str]], first: int = 0) -> tuple[Postings, np.ndarray]:
    """(term -> (document numbers from ``first``, int64; term frequencies, float32), each document's length).

    ``terms``: each document's terms, repeats counted; ``keys``: each document's keys (the cross-script keys
    of nodes.text.transliterate), each posted once with frequency 1 and not counted in the length. A term's
    documents are in increasing order, as appending document by document gives. The terms get ids in one pass
    and numpy counts and sorts the (term, document) pairs: 10,000 long replies hold ~1.3 million terms."""
    n = len(terms)
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=n)
    if not n:
        return {}, lengths.astype(np.float32)
    key_counts = np.fromiter(map(len, keys), dtype=np.int64, count=n)
    words = [*chain.from_iterable(terms), *chain.from_iterable(keys)]
    # Built-ins all the way (no Python frame per word): a third of the time of a dict.setdefault loop.
    names = list(dict.fromkeys(words))
    vocab = dict(zip(names, range(len(names))))
    ids = np.fromiter(map(vocab.__getitem__, words), dtype=np.int64, count=len(words))
    rows = np.arange(n, dtype=np.int64)
    docs = np.concatenate([np.repeat(rows, lengths), np.repeat(rows, key_counts)])
    pairs, tf = np.unique(ids * n + docs, return_counts=True)
    if not pairs.size:  # documents without a word
        return {}, lengths.astype(np.float32)
    term_of, doc_of = np.divmod(pairs, n)
    doc_of += first
    tf = tf.astype(np.float32)
    starts = np.flatnonzero(np.r_[True, term_of[1:] != term_of[:-1]])
    ends = np.r_[starts[1:], len(pairs)]
    postings = {names[t]: (doc_of[s:e], tf[s:e]) for t, s, e in zip(term_of[starts].tolist(), starts.tolist(), ends.tolist())}
    return postings, lengths.astype(np.float32)


def merged(postings: Postings, new: Postings) -> Postings:
    """A copy of ``postings`` with ``new`` documents' postings appended (they come after every old document);
    the old arrays are left as they are (a query running on them keeps its view)."""
    out = dict(postings)
    for term, (docs, tfs) in new.items():
        old = out.get(term)
        out[term] = (np.concatenate([old[0], docs]), np.concatenate([old[1], tfs])) if old else (docs, tfs)
    return out
