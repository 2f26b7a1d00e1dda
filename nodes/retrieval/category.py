"""Same-category preference (the forgetting notes' カテゴリ参照: 「類似タスク実行時に同一カテゴリの記憶を優先検索」).

The query's F2 category (casual, work, decision, emotional: nodes.text.emotion_f2.read_emotion, the reading that
files every memory) is compared with each candidate memory's, as the lifecycle encoded it; a memory of the same
category gets ``recall_same_category_boost`` added to its A3 activation, which ranking adds × α to its turns'
score (nodes.retrieval.ranking.rank_turns) — the same scale as the access and PageRank terms (activation.py).
S5's strategies prefer same-category ones the same way (nodes.strategies.suggest).
"""

from __future__ import annotations

import logging

import numpy as np

from ..text.emotion_f2 import read_emotion
from .recall_run import RecallRun

log = logging.getLogger("lumina.recall")


def same_category(services, user_id: str, query: str, segments: set[str]) -> set[str]:
    """Of ``segments``, the memories whose F2 category is the query's; none without a lifecycle table."""
    table = getattr(services.stores.archive, "memories", None)
    if table is None or not segments:
        return set()
    wanted = read_emotion(query).category
    return {row["memory_id"] for row in table.rows(user_id, sorted(segments)) if row["category"] == wanted}


def prefer_same_category(run: RecallRun) -> RecallRun:
    """A recall stage after the activation: the same-category memories among the candidates are lifted."""
    boost = run.services.settings.recall_same_category_boost
    if not boost or not run.on["lifecycle"] or run.rel is None or not run.rel.any():
        return run
    index = run.index
    candidates = {index.segment_ids[c] for c in np.unique(index.segment_of[run.rel > 0])}
    same = same_category(run.services, run.request.user_id, run.request.query, candidates)
    activation = dict(run.activation)
    for seg in same:
        activation[seg] = activation.get(seg, 0.0) + boost
    run.activation = activation
    log.debug("recall user=%s same_category=%d of %d", run.request.user_id, len(same), len(candidates))
    return run
