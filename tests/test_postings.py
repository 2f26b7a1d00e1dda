"""Postings counted with numpy are the postings counted term by term (what the indexes did before)."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lumina_memory.stores.lexical import merged, postings_of

words = st.sampled_from(["moka", "猫", "kyoto", "京都", "a", "the", "\u2060ᵏmoka", ""])
docs = st.lists(st.tuples(st.lists(words, max_size=12), st.lists(words, max_size=4, unique=True)), max_size=9)


def _counted(documents, first=0):
    rows, lengths = defaultdict(list), []
    for i, (terms, keys) in enumerate(documents):
        counts = Counter(terms)
        lengths.append(sum(counts.values()))
        for term, tf in counts.items():
            rows[term].append((first + i, tf))
        for key in keys:
            rows[key].append((first + i, 1))
    return rows, lengths


def _as_lists(postings):
    return {t: list(zip(d.tolist(), f.tolist())) for t, (d, f) in postings.items()}


def _expected(rows):
    """Term by term; a word that is both a term and a key of one document counts once per occurrence of each."""
    out = {}
    for term, hits in rows.items():
        per_doc = Counter()
        for d, tf in hits:
            per_doc[d] += tf
        out[term] = sorted(per_doc.items())
    return out


@settings(max_examples=200, deadline=None)
@given(docs, docs, st.integers(0, 5))
def test_postings_of_many_documents_are_the_ones_counted_term_by_term(old, new, first):
    postings, lengths = postings_of([t for t, _ in old], [k for _, k in old], first)
    rows, expected_lengths = _counted(old, first)
    assert _as_lists(postings) == _expected(rows)
    assert lengths.dtype == np.float32 and lengths.tolist() == expected_lengths
    for docs_, tfs in postings.values():
        assert docs_.dtype == np.int64 and tfs.dtype == np.float32 and np.all(np.diff(docs_) > 0)
    # Appending later documents gives what counting them all at once gives.
    grown = merged(postings, postings_of([t for t, _ in new], [k for _, k in new], first + len(old))[0])
    assert _as_lists(grown) == _as_lists(postings_of([t for t, _ in old + new], [k for _, k in old + new], first)[0])
