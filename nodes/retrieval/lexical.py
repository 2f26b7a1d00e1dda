"""BM25 over a small pool of candidate texts, with Sudachi/English terms (so Japanese works)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from ..text.tokenize import terms


def bm25_scores(query: str, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    q_terms = list(dict.fromkeys(terms(query)))
    if not q_terms or not docs:
        return [0.0] * len(docs)
    doc_terms = [Counter(terms(d)) for d in docs]
    lengths = [sum(c.values()) for c in doc_terms]
    avg = (sum(lengths) / len(lengths)) or 1.0
    n = len(docs)
    scores = []
    for counts, length in zip(doc_terms, lengths):
        score = 0.0
        for term in q_terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            df = sum(1 for c in doc_terms if term in c)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        scores.append(score)
    return scores


def minmax(values: Sequence[float]) -> list[float]:
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low < 1e-9:
        return [1.0 if high > 0 else 0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]
