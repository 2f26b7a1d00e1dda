"""recall_keyword_dense_gap (nodes.retrieval.fusion, nodes.retrieval.dense_gate): a long turn's keyword and
feedback votes count only as far as the dense channel also finds it near its top, so BM25 over pasted
documentation far from the question in meaning does not outrank the turn the dense channel ranks first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.channels import Candidates
from lumina_memory.nodes.retrieval.dense_gate import keyword_gates
from lumina_memory.nodes.retrieval.fusion import fuse
from lumina_memory.nodes.retrieval.query import QueryPlan
from lumina_memory.stores.settings import LuminaSettings


def _fused(gap: float, far_cosine: float) -> np.ndarray:
    settings = LuminaSettings().model_copy(update={"recall_keyword_dense_gap": gap})
    long_tokens = settings.recall_passage_min_tokens + 1
    # Turn 0: a short turn, first in the dense channel (cosine 0.80) and third in both keyword channels;
    # turn 1: a long reply first in both keyword channels, found by the dense channel at ``far_cosine``;
    # turn 2: a long reply second in both keyword channels and second in the dense channel (0.79).
    index = SimpleNamespace(turns=[SimpleNamespace(source_id=f"D1:{j}") for j in (1, 2, 3)],
                            token_counts=np.array([12, long_tokens, long_tokens]), members={},
                            same_exchange=np.array([False, False]))
    cands = Candidates()
    cands.turn_rankings = {"turn_content": [0, 2, 1], "turn_keyword": [1, 2, 0], "turn_feedback": [1, 2, 0]}
    cands.dense_score = {0: 0.80, 2: 0.79, 1: far_cosine}
    rel, _ = fuse(index, cands, settings, {"context": False, "speakers": False}, QueryPlan())
    return rel


def test_off_leaves_every_keyword_vote():
    rel = _fused(0.0, 0.50)
    assert rel[1] > rel[0], rel  # the documentation reply's keyword votes outrank the dense channel's first turn


def test_a_long_turn_far_in_meaning_loses_its_keyword_vote():
    off, gated = _fused(0.0, 0.50), _fused(0.1, 0.50)
    assert gated[0] == off[0]  # a short turn's votes are as they were
    k = LuminaSettings().recall_rrf_k
    w_dense = LuminaSettings().recall_channel_weights[0]
    assert np.isclose(gated[1], w_dense / (k + 3))  # only its dense vote is left
    assert gated[0] > gated[1], gated


def test_a_long_turn_the_dense_channel_also_finds_keeps_most_of_it():
    off, gated = _fused(0.0, 0.50), _fused(0.1, 0.50)
    keyword_votes = off[2] - LuminaSettings().recall_channel_weights[0] / (LuminaSettings().recall_rrf_k + 2)
    assert np.isclose(off[2] - gated[2], 0.1 * keyword_votes)  # 0.01 below the top of a 0.1 gap: 90% kept


@pytest.mark.parametrize("gap, expected", [(0.1, {5: 1.0, 6: 0.5, 7: 0.0, 8: 0.0}), (0.0, {})])
def test_gates(gap, expected):
    dense = {1: 0.9, 5: 0.9, 6: 0.85, 7: 0.7}
    assert keyword_gates(dense, {5, 6, 7, 8}, gap) == pytest.approx(expected)


def test_no_dense_hits_gates_every_long_turn_shut():
    assert keyword_gates({}, {3}, 0.1) == {3: 0.0}
