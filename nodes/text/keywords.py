"""Keywords of a segment: the nouns it repeats, with longer proper nouns preferred."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from .tokenize import nouns


def extract_keywords(texts: Sequence[str], limit: int) -> list[str]:
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for text in texts:
        for word in nouns(text):
            counts[word] += 1
            first_seen.setdefault(word, len(first_seen))
    # Frequency first; among equals a longer word (インセプション over 映画) says more, then earlier.
    ranked = sorted(counts, key=lambda w: (-counts[w], -min(len(w), 6), first_seen[w]))
    return ranked[:limit]
