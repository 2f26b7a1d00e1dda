"""Ranking the fused candidates (P6): α·relevance + β·recency + γ·importance, with the lift of the turns inside a
time window the question names."""

from __future__ import annotations

import numpy as np

from ..text.tokenize import terms

DAY = 86_400.0


_WINDOW_SAYS_NOTHING = 0.9
"""Share of the candidates inside a question's time window from which the window is not applied."""
_WINDOW_SCALE, _WINDOW_CAP = 1.5, 1.5
"""A turn inside the window: relevance × _WINDOW_SCALE + recall_window_lift, at most _WINDOW_CAP (the best
relevance outside is 1)."""


_TIME_ONLY_LIFT = 1.0
"""A turn inside the window of a question that asks nothing besides when (``asks_only_a_time``): relevance × 1.5 +
this, so every turn of that time passes every turn outside it (whose relevance is at most 1) and keeps its order."""
# What is left of a question without its time cues that still asks nothing: the words linking it to the time
# ("between … and …", "the week before …"), and the verbs that say only that something was done or said.
_TIME_LINKS = frozenset({"between", "before", "after", "during", "since", "until", "till", "from", "around"})
_BARE_VERBS = frozenset({"happen", "go", "say", "tell", "talk", "discus", "mention", "chat", "up",
                         "話す", "言う", "起きる", "起こる", "行く"})


def asks_only_a_time(untimed: str, speakers) -> bool:
    """Whether a question, without its time cues (``untimed``, temporal.window_and_rest), names nothing but the
    people it is about: "Where was John between August 11 and August 15?", "What did Nate do for Joanna on 25 May?",
    "What did we talk about last Friday?", 「6月3日に美咲は何してた？」. Its answer is a turn of that time in words of its
    own ("Took a trip to a new place"), which the question's words cannot find: only the time can."""
    names = {t for name in speakers for t in terms(name)}
    return not [t for t in terms(untimed) if t not in names and t not in _TIME_LINKS and t not in _BARE_VERBS]


def rank_turns(index, rel: np.ndarray, seg_importance: dict[str, float], window, now_ts: float, weights, settings,
          only_when: bool = False, activation: dict[str, float] | None = None) -> "Ranked":
    """P6: α·relevance + β·recency + γ·importance for every candidate turn (relevance > 0), best first, plus α × the
    A3 activation of its segment (``activation``: access and PageRank, nodes.retrieval.activation);
    a turn inside the time window the query names is boosted, above every turn outside it when the query asks
    nothing besides when (``only_when``). Tuples (score, index, relevance, recency)."""
    alpha, beta, gamma = weights
    candidates = np.flatnonzero(rel > 0)
    if not candidates.size:
        return Ranked(np.zeros(0), candidates, np.zeros(0), np.zeros(0))
    relevance = rel[candidates] / rel[candidates].max()
    ts = index.ts[candidates]
    if window is not None:
        inside = (ts >= window[0]) & (ts <= window[1])
        # A window holding (nearly) every candidate tells none apart — a conversation younger than "recently" (30
        # days) — and its capped lift would only tie every turn above 0.8 at 1.5, for recency to decide.
        if inside.mean() < _WINDOW_SAYS_NOTHING:
            # Up to half again the best match: a turn of the day asked about, said in other words than the
            # question's, passes better matches of other days (tests/test_time_window_ranking.py).
            lift = _TIME_ONLY_LIFT if only_when else settings.recall_window_lift
            lifted = np.minimum(_WINDOW_CAP, relevance * _WINDOW_SCALE + lift)
            relevance = np.where(inside, lifted, relevance)
    half_life = settings.recency_half_life_days * DAY
    recency = np.power(0.5, np.maximum(0.0, now_ts - ts) / half_life)
    per_segment = np.zeros(len(index.segment_ids))
    for seg_id, value in seg_importance.items():
        code = index.segment_code.get(seg_id)
        if code is not None:
            per_segment[code] = value
    score = alpha * relevance + beta * recency + gamma * per_segment[index.segment_of[candidates]]
    if activation:
        per_segment = np.zeros(len(index.segment_ids))
        for seg_id, value in activation.items():
            code = index.segment_code.get(seg_id)
            if code is not None:
                per_segment[code] = value
        score = score + alpha * per_segment[index.segment_of[candidates]]
    order = np.lexsort((candidates, -score))  # best score first, then conversation order
    return Ranked(score[order], candidates[order], relevance[order], recency[order])


class Ranked:
    """The ranked candidates as arrays; slicing gives the (score, index, relevance, recency) tuples, built
    only for the part the caller reads (a broad query can have thousands of candidates)."""

    def __init__(self, score, index, relevance, recency) -> None:
        self._cols = (score, index, relevance, recency)

    def __len__(self) -> int:
        return len(self._cols[0])

    def __getitem__(self, part: slice):
        score, index, relevance, recency = (c[part] for c in self._cols)
        return Ranked(score, index, relevance, recency)

    def __iter__(self):
        return zip(*(c.tolist() for c in self._cols))

    def __bool__(self) -> bool:
        return len(self) > 0
