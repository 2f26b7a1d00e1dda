"""A question's time window ("recently", 「最近」) lifts the turns inside it above those outside; a window holding
every candidate tells none apart and changes nothing.

The lift is min(1.5, 1.5·relevance + LUMINA_RECALL_WINDOW_LIFT (0.3)). Until 2026-12-02 it was min(1, 1.5·relevance
+ 0.1): a turn inside the day a question names could at best tie with the best turn outside it, so "What did Nate
do for Joanna on 25 May, 2022?" ranked its answer, said that day in words the question does not use, 233rd. When
the window holds all the candidates (a conversation younger than the window: "recently" is the last 30 days) the
lift is not applied: the best match would tie with the middling ones at the cap and recency decide. Chinese
questions with 「最近」 lost their answer that way (bench.multilingual_data). Scaling the lift without a cap cost
LoCoMo dev's temporal questions 0.7 points."""

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


def test_a_turn_of_the_named_day_passes_a_better_match_outside_it():
    index = _index([40, 20, 19.5, 5])
    rel = np.array([1.0, 0.6, 0.55, 0.9])  # turns 1 and 2 were said on the day asked about, in other words
    window = (NOW - 21 * DAY, NOW - 19 * DAY)
    assert _order(index, rel, window)[:2] == [1, 2]


def test_the_best_turns_inside_a_window_keep_their_order():
    index = _index([40, 20, 19.8, 19.6, 5])
    rel = np.array([1.0, 0.7, 0.75, 0.72, 0.9])  # under the cap: still ordered by how well they match
    window = (NOW - 21 * DAY, NOW - 19 * DAY)
    assert _order(index, rel, window)[:3] == [2, 3, 1]
