"""recall_keyword_dense_rank (nodes.retrieval.fusion, nodes.retrieval.dense_gate): a long turn's keyword and
feedback votes count only when the dense channel also ranks it among its first turns, so BM25 over pasted
documentation far from the question in meaning does not outrank the turn the dense channel ranks first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lumina_memory.nodes.retrieval.channels import Candidates
from lumina_memory.nodes.retrieval.dense_gate import keyword_gates
from lumina_memory.nodes.retrieval.fusion import fuse
from lumina_memory.nodes.retrieval.query import QueryPlan
from lumina_memory.stores.settings import LuminaSettings


def _fused(first: int) -> np.ndarray:
    settings = LuminaSettings().model_copy(update={"recall_keyword_dense_rank": first})
    long_tokens = settings.recall_passage_min_tokens + 1
    # Turn 0: a short turn, first in the dense channel, third in both keyword channels; turn 1: a long reply first
    # in both keyword channels and third in the dense channel; turn 2: a long reply second everywhere.
    index = SimpleNamespace(turns=[SimpleNamespace(source_id=f"D1:{j}") for j in (1, 2, 3)],
                            token_counts=np.array([12, long_tokens, long_tokens]), members={},
                            same_exchange=np.array([False, False]))
    cands = Candidates()
    cands.turn_rankings = {"turn_content": [0, 2, 1], "turn_keyword": [1, 2, 0], "turn_feedback": [1, 2, 0]}
    rel, _ = fuse(index, cands, settings, {"context": False, "speakers": False}, QueryPlan())
    return rel


def test_off_leaves_every_keyword_vote():
    rel = _fused(0)
    assert rel[1] > rel[0], rel  # the documentation reply's keyword votes outrank the dense channel's first turn


def test_a_long_turn_outside_the_dense_channels_first_turns_loses_its_keyword_vote():
    off, gated = _fused(0), _fused(2)
    settings = LuminaSettings()
    assert gated[0] == off[0]  # a short turn's votes are as they were
    assert gated[2] == off[2]  # a long turn the dense channel ranks second keeps them
    assert np.isclose(gated[1], settings.recall_channel_weights[0] / (settings.recall_rrf_k + 3))
    assert gated[0] > gated[1], gated


def test_gates():
    assert keyword_gates([4, 5, 6], {5, 6, 7}, 2) == {5: 1.0, 6: 0.0, 7: 0.0}
    assert keyword_gates([4, 5, 6], {5, 6, 7}, 0) == {}
