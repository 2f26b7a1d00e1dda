"""A question's time window ("recently", 「最近」) lifts the turns inside it above those outside; a window holding
every candidate tells none apart and changes nothing.

The lift is min(1, 1.5·relevance + 0.1): every turn above 0.6 relevance reaches the cap, so when the window held
all the candidates (a conversation younger than the window: "recently" is the last 30 days) the best match tied
with the middling ones and recency decided. Chinese questions with 「最近」 lost their answer that way
(bench.multilingual_data). Scaling the lift instead of capping it cost LoCoMo dev's temporal questions 0.7 points."""

from __future__ import annotations

import numpy as np

from nodes.retrieval.recall import _rank
from nodes.retrieval.turn_index import UserTurns
from stores.models import Turn
from stores.settings import LuminaSettings

DAY = 86_400.0
NOW = 1_790_000_000.0


def _index(days_ago: list[float]) -> UserTurns:
    turns = [Turn(turn_id=f"t{i}", source_id=f"s{i}", user_id="u", segment_id=f"g{i}", speaker="user",
                  text=f"turn {i}", ts=NOW - d * DAY) for i, d in enumerate(days_ago)]
    return UserTurns.build(sorted(turns, key=lambda t: t.ts))


def _order(index, rel, window):
    settings = LuminaSettings(data_dir="/tmp/unused-lumina")
    ranked = _rank(index, rel, {}, window, NOW, (1.0, 0.3, 0.0), settings)
    return [int(i) for _s, i, _r, _c in ranked]


def test_a_window_holding_every_candidate_keeps_their_order():
    index = _index([12, 10, 8, 6, 4, 2])  # all within the last 30 days
    rel = np.array([0.2, 1.0, 0.75, 0.7, 0.65, 0.62])  # turn 1 is the answer; the later ones are only near
    window = (NOW - 30 * DAY, NOW + DAY)
    assert _order(index, rel, window)[0] == 1
    assert _order(index, rel, window) == _order(index, rel, None)


def test_a_window_still_lifts_the_turns_inside_it():
    index = _index([90, 60, 20, 5])
    rel = np.array([0.8, 0.7, 0.6, 0.55])
    window = (NOW - 30 * DAY, NOW + DAY)
    order = _order(index, rel, window)
    assert set(order[:2]) == {2, 3}  # inside the window first, though the turns outside matched better
