"""Fusing the channels into one relevance per turn.

1. Turn channels: weighted reciprocal rank (k = recall_rrf_k); the keyword channels' weights scaled by how far this
   query's keyword hits can be trusted (``Candidates.keyword_trust``, nodes.retrieval.channel_trust).
2. Segment channels lend a share of their segment's fused score to its turns (scaled by the same trust).
3. Neighbours: each turn passes a share of its relevance to the adjacent turns of the same exchange (an answer
   sits next to the question that prompted it).
4. Speakers (nodes.retrieval.query): when the query names one speaker, the other speakers' turns keep only
   ``recall_speaker_focus`` of their relevance; when it names several, each named speaker's turns are
   normalised to the same top, so the ranking alternates between them instead of following one. When it names
   none but speaks of the asker ("my", 私の) or of what the other side said ("you suggested"), the other
   side's turns keep ``recall_person_focus``.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .channels import TIER, Candidates, whose_turns
from .query import QueryPlan


def fuse(index, cands: Candidates, settings, on: dict, plan: QueryPlan) -> tuple[np.ndarray, dict[int, set[str]]]:
    turns = index.turns
    n = len(turns)
    k = settings.recall_rrf_k
    w_dense, w_keyword, w_segment = settings.recall_channel_weights
    # How far this query's keyword hits can be trusted (channel_trust): the keyword channels' votes, and the
    # segments' lending (found by their words and concepts, for a question), shrink with it.
    trust = cands.keyword_trust
    weight = {"turn_content": w_dense, "turn_keyword": w_keyword * trust,
              "turn_feedback": settings.recall_feedback_weight * trust,
              "speaker_dense": settings.recall_speaker_dense_weight}
    w_segment *= trust
    rel = np.zeros(n, dtype=np.float64)
    tiers: dict[int, set[str]] = defaultdict(set)
    for name, ranking in cands.turn_rankings.items():
        for rank, i in enumerate(ranking):
            rel[i] += weight[name] / (k + rank + 1)
            tiers[i].add(TIER[name])

    if cands.seg_score and n:
        top = max(cands.seg_score.values())
        members = index.members
        turn_top = rel.max() if rel.any() else 1.0 / (k + 1)
        for seg_id, score in cands.seg_score.items():
            share = w_segment * turn_top * score / top
            for i in members.get(seg_id, []):
                # A segment lends weight to the turns that match the query on their own, and a little
                # to the rest (so a segment found only by a segment channel can still surface).
                rel[i] += share * (0.5 if rel[i] > 0 else 0.25)
                tiers[i] |= cands.seg_tiers[seg_id]

    spread = settings.recall_neighbour_spread if on["context"] else 0.0
    if spread and n > 1:
        base = rel.copy()
        same_prev = index.same_exchange
        left = np.zeros(n)
        right = np.zeros(n)
        left[1:] = np.where(same_prev, base[:-1], 0.0)  # relevance of the previous turn
        right[:-1] = np.where(same_prev, base[1:], 0.0)  # relevance of the next turn
        rel = base + spread * np.maximum(left, right)
        for i in np.flatnonzero((base == 0) & (rel > 0)):
            tiers[int(i)].add("archive")

    on_whose = on.get("speakers") and n and rel.any()
    whose = whose_turns(index, plan, settings.recall_passage_min_tokens) if on_whose else None
    if whose is not None and not plan.speakers and whose.any() and not whose.all():
        rel = np.where(whose, rel, rel * settings.recall_person_focus)
    if whose is not None and plan.speakers:
        labels = index.label_array
        rel = np.where(whose, rel, rel * settings.recall_speaker_focus)
        if len(plan.speakers) > 1:
            top = rel.max()
            for name in plan.speakers:
                mask = labels == name
                best = rel[mask].max() if mask.any() else 0.0
                if best > 0:
                    rel[mask] *= top / best
    return rel, tiers
