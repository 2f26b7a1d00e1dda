"""A segment's keyword document from its turns' indexed terms (issue 19: a cold build no longer reads the text twice).

The segment keyword index scores each archived segment as one document, its text (one "speaker: text" line per
turn, as the flush wrote it) and its keywords. A process that starts builds the user's turn index first, which has
just read every turn; reading every segment's text again was a third of a cold first recall (4.3 s of 13 at 10,000
memories with long replies). So when a catch-up has many segments, each segment whose text is exactly its turns'
lines is summed from the turns' terms in the turn index, plus its speakers' and keywords' own few words; any other
segment (its text cleared by forgetting, a turn erased, another writer's format) is read as before.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from ..text.tokenize import terms
from ..text.transliterate import KANA_TAG, LATIN_TAG, index_keys

MIN_SEGMENTS = 64  # fewer (a flush's top-up): reading them costs less than turning the turn index around
_KEY_TAGS = (KANA_TAG, LATIN_TAG)


class TurnTerms:
    """The turn index's postings turned around: for each turn, its terms (codes into ``vocab``) and frequencies."""

    def __init__(self, index) -> None:
        self.index = index
        self.vocab = list(index.postings)
        postings = [index.postings[t] for t in self.vocab]
        sizes = np.fromiter((p[0].size for p in postings), dtype=np.int64, count=len(postings))
        turn = np.concatenate([p[0] for p in postings]) if postings else np.zeros(0, dtype=np.int64)
        tf = np.concatenate([p[1] for p in postings]) if postings else np.zeros(0, dtype=np.float32)
        codes = np.repeat(np.arange(len(self.vocab), dtype=np.int64), sizes)
        order = np.argsort(turn, kind="stable")
        self._codes, self._tf = codes[order], tf[order].astype(np.float64)
        self._bounds = np.searchsorted(turn[order], np.arange(len(index.turns) + 1))
        self._is_key = np.fromiter((t.startswith(_KEY_TAGS) for t in self.vocab), dtype=bool, count=len(self.vocab))

    def lines_of(self, segment_id: str) -> tuple[tuple[int, ...], str] | None:
        """The segment's turns (indices) and the text the flush writes for them; None when none is indexed."""
        members = self.index.members.get(segment_id)
        if not members:
            return None
        turns = self.index.turns
        return members, "\n".join(f"{turns[i].speaker}: {turns[i].text}" for i in members)

    def document(self, members: Sequence[int], keywords: Sequence[str]) -> tuple[Counter, tuple[str, ...]]:
        """(term counts, cross-script keys) of the document "speaker: text" lines + keywords, from the turns'."""
        turns = self.index.turns
        spans = [(self._bounds[i], self._bounds[i + 1]) for i in members]
        codes = np.concatenate([self._codes[a:b] for a, b in spans])
        tf = np.concatenate([self._tf[a:b] for a, b in spans])
        unique, inverse = np.unique(codes, return_inverse=True)
        sums = np.bincount(inverse, weights=tf)
        counts: Counter = Counter()
        keys: dict[str, None] = {}
        for code, total in zip(unique.tolist(), sums.tolist()):
            if self._is_key[code]:
                keys[self.vocab[code]] = None
            else:
                counts[self.vocab[code]] = int(round(total))
        # Each line's "speaker:" and the keywords line: a few words, read as the whole document would read them.
        extra = "\n".join([*(f"{turns[i].speaker}:" for i in members), " ".join(keywords)])
        counts.update(terms(extra))
        keys.update(dict.fromkeys(index_keys(extra)))
        return counts, tuple(keys)
