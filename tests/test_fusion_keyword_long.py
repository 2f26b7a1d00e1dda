"""recall_keyword_long_weight (nodes.retrieval.fusion): the keyword channels' vote for a long turn is scaled, so
BM25 hits across long pasted documentation do not outrank the short turn the dense channel ranks first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.channels import Candidates
from lumina_memory.nodes.retrieval.fusion import fuse
from lumina_memory.nodes.retrieval.query import QueryPlan
from lumina_memory.stores.settings import LuminaSettings


def _fused(weight: float) -> np.ndarray:
    settings = LuminaSettings().model_copy(update={"recall_keyword_long_weight": weight})
    long_tokens = settings.recall_passage_min_tokens + 1
    # Turn 0: a long reply, first in both keyword channels and second in the dense one; turn 1: a short turn,
    # first in the dense channel and second in both keyword channels.
    index = SimpleNamespace(turns=[SimpleNamespace(source_id="D1:1"), SimpleNamespace(source_id="D1:2")],
                            token_counts=np.array([long_tokens, 12]), members={},
                            same_exchange=np.array([False]))
    cands = Candidates()
    cands.turn_rankings = {"turn_content": [1, 0], "turn_keyword": [0, 1], "turn_feedback": [0, 1]}
    rel, _ = fuse(index, cands, settings, {"context": False, "speakers": False}, QueryPlan())
    return rel


def test_long_turn_keeps_its_keyword_votes_at_weight_one():
    rel = _fused(1.0)
    assert rel[0] > rel[1], rel


@pytest.mark.parametrize("weight", [0.25, 0.0])
def test_long_turns_keyword_votes_are_scaled(weight):
    full, scaled = _fused(1.0), _fused(weight)
    assert scaled[1] == full[1]  # a short turn's votes are as they were
    assert scaled[0] < scaled[1], scaled
    k = LuminaSettings().recall_rrf_k
    keyword_votes = full[0] - 1 / (k + 2)
    assert np.isclose(scaled[0], 1 / (k + 2) + weight * keyword_votes)
