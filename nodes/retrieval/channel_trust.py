"""How far the keyword channels can be trusted for one query: the share of the query's term weight (IDF) that the
best keyword hit holds.

Reciprocal-rank fusion gives every channel's first hit the same vote, whether it matched the query's rare words or
only a common one. A question written in the asker's own words ("the tool I settled on for background jobs")
shares few rare terms with the turn that answers it ("let's go with Celery"): the keyword channels' first hits then
match a word or two of it, and their votes, several lexical channels against one dense channel, bury the turn the
dense channel found. A question that reuses the conversation's words ("What did Caroline research?") is matched
whole by its best hit, and keeps its full keyword weight.

``matched_share``: for each of the keyword channel's first ``TOP`` hits, the IDF mass of the query terms it holds
over the IDF mass of all the query's terms; the best of them. A long turn is judged by its best passage (the
passage a keyword hit of a long turn scores as, nodes.retrieval.turn_search), not by the thousands of words of the
whole reply, which hold most common terms somewhere. A term the user's turns never use weighs more than any they use (IDF of no document):
a query word the conversation never said is what a paraphrase looks like.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from lumina_memory.stores.lexical import idf

TOP = 3
"""Keyword hits whose matched share is read (the best counts): the first hit alone can be a near-tie."""


def matched_share(index, q_terms: list[str], ranking: list[int]) -> float:
    """The best share of the query's IDF mass held by one of ``ranking``'s first TOP turns (1.0 when nothing can be
    judged: no terms, no hits)."""
    asked = list(dict.fromkeys(q_terms))
    n = len(index.turns)
    if not asked or not ranking or not n:
        return 1.0
    weights = {t: idf(n, _df(index, t)) for t in asked}
    total = sum(weights.values())
    if total <= 0:
        return 1.0
    passages = index.passages
    best = 0.0
    for i in ranking[:TOP]:
        lo, hi = passages.span_of(i)
        if hi > lo:
            held = _best_passage_mass(passages, lo, hi, weights)
        else:
            held = sum(w for t, w in weights.items() if _holds(index.postings.get(t), i))
        best = max(best, held / total)
    return best


def keyword_trust(share: float, full_at: float) -> float:
    """The keyword channels' weight factor for a query whose best hit holds ``share`` of its IDF mass: 1 from
    ``full_at`` up, in proportion below it (``full_at`` 0: always 1, the plain fusion)."""
    if full_at <= 0:
        return 1.0
    return float(min(1.0, max(0.0, share) / full_at))


def _df(index, term: str) -> int:
    posting = index.postings.get(term)
    return 0 if posting is None else int(posting[0].size)


def _holds(posting, i: int) -> bool:
    if posting is None:
        return False
    docs = posting[0]
    at = int(np.searchsorted(docs, i))
    return at < docs.size and int(docs[at]) == i


def _best_passage_mass(passages, lo: int, hi: int, weights: dict[str, float]) -> float:
    """The most IDF mass one of passages ``[lo, hi)`` (one turn's) holds."""
    mass: dict[int, float] = defaultdict(float)
    for t, w in weights.items():
        posting = passages.postings.get(t)
        if posting is None:
            continue
        docs = posting[0]
        for d in docs[np.searchsorted(docs, lo):np.searchsorted(docs, hi)].tolist():
            mass[d] += w
    return max(mass.values(), default=0.0)
