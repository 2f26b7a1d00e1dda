"""BM25 postings of many documents at once: term -> (documents, term frequencies), as arrays.

Counting term by term in Python (a Counter per document, then an append per term) was most of what was left of
a cold build once the texts' reads were kept (nodes.retrieval.turn_reads): 10,000 long replies hold ~1.3 million
terms. Here the terms get ids in one pass and numpy counts and sorts the (term, document) pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

Postings = dict[str, tuple[np.ndarray, np.ndarray]]


def postings_of(terms: Sequence[Sequence[str]], keys: Sequence[Sequence[str]], first: int = 0) -> tuple[Postings, np.ndarray]:
    """(term -> (document numbers from ``first``, int64; term frequencies, float32), each document's length).

    ``terms``: each document's terms, repeats counted; ``keys``: each document's keys (the cross-script keys
    of nodes.text.transliterate), each posted once with frequency 1 and not counted in the length. A term's
    documents are in increasing order, as appending document by document gives."""
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
