"""recall_direct_floor (nodes.retrieval.fusion): what segment lending and the neighbour spread add to other turns
cannot bury the turn the turn channels themselves rank first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lumina_memory.nodes.retrieval.channels import Candidates
from lumina_memory.nodes.retrieval.fusion import fuse
from lumina_memory.nodes.retrieval.query import QueryPlan
from lumina_memory.stores.settings import LuminaSettings

ON = {"context": True, "speakers": False}


def _index():
    # Turns 0-1: one exchange (a question and its long reply) in segment s1; turn 2: a lone turn in segment s2.
    turns = [SimpleNamespace(source_id=f"D1:{i}") for i in range(3)]
    return SimpleNamespace(turns=turns, members={"s1": [0, 1], "s2": [2]},
                           same_exchange=np.array([True, False]))


def _cands() -> Candidates:
    # Every turn channel ranks turn 2 first; segment s1 is the one the segment channels found, and its
    # lending (with the spread inside its exchange) lifts turns 0 and 1 past turn 2.
    cands = Candidates()
    cands.turn_rankings = {"turn_content": [2, 0, 1], "turn_keyword": [2, 1]}
    cands.seg_score = {"s1": 1.0}
    cands.seg_tiers = {"s1": {"long-term"}}
    return cands


def _fused(floor: float) -> np.ndarray:
    settings = LuminaSettings().model_copy(update={"recall_direct_floor": floor})
    rel, _ = fuse(_index(), _cands(), settings, ON, QueryPlan())
    return rel


def test_lending_outranks_the_first_turn_without_a_floor():
    rel = _fused(0.0)
    assert rel[2] < rel[1], rel


def test_floor_keeps_the_turn_every_channel_ranks_first_on_top():
    rel = _fused(1.0)
    assert rel[2] == rel.max() and rel[2] > rel[0], rel


def test_floor_scales_by_the_turns_own_vote():
    off, part = _fused(0.0), _fused(0.8)
    # The first turn is lifted to 0.8 of the top; turn 0, whose own vote is half of it, stays above its floor.
    assert np.isclose(part[2], 0.8 * off.max()) and part[2] > off[2]
    assert part[0] == off[0] and part[1] == off[1]
