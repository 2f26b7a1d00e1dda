"""The cases the unread-update detector is judged on (bench.knowledge_unread_cases) are labelled from the gold
history alone, and the threshold is chosen by right reviews less wrong ones. An invented timeline."""

from __future__ import annotations

import numpy as np

from bench.knowledge_unread import tune
from bench.knowledge_unread_cases import Case, even, timeline_cases

TIMELINE = {
    "id": "en-90",
    "turns": [
        {"speaker": "user", "text": "I live in Leeds and drink cocoa.", "day": 0},
        {"speaker": "lumina", "text": "Nice!", "day": 0},
        {"speaker": "user", "text": "Handed back the keys in Leeds today.", "day": 5},
        {"speaker": "user", "text": "Bristol is where we are now.", "day": 9},
        {"speaker": "user", "text": "Rainy walk this morning.", "day": 12},
    ],
    "expect": [
        {"subject": "user", "attribute": "lives_in", "value": "Leeds", "current": False},
        {"subject": "user", "attribute": "lives_in", "value": "Bristol", "current": True},
        {"subject": "user", "attribute": "drink", "value": "cocoa", "current": True},
        {"subject": "Bristol", "attribute": "likes", "value": "rain", "current": True},
    ],
}


def test_an_ended_fact_gives_one_update_case_and_a_held_fact_a_case_per_later_turn():
    cases = timeline_cases(TIMELINE)
    updates = [c for c in cases if c.update]
    assert [(c.attribute, c.value, c.turn) for c in updates] == [("lives_in", "Leeds", "Bristol is where we are now.")]
    # the turn between Leeds and its successor is left out for Leeds: the gold does not say when Leeds ended
    assert not [c for c in cases if c.value == "Leeds" and c.turn.startswith("Handed")]
    assert [c.turn for c in cases if c.value == "cocoa"] == [
        "Handed back the keys in Leeds today.", "Bristol is where we are now.", "Rainy walk this morning."]
    assert [(c.turn, c.update) for c in cases if c.value == "Bristol"] == [("Rainy walk this morning.", False)]
    assert even("en-90") and not even("ja-07")


def test_the_threshold_maximises_right_reviews_less_wrong_ones():
    cases = {"en-1": [Case("en-1", "a", "drink", "tea", True), Case("en-1", "b", "drink", "tea", False),
                      Case("en-1", "c", "drink", "tea", False)]}
    scores = {"en-1": np.array([0.30, 0.25, 0.10])}
    best, curve = tune([(cases, scores)])
    assert 0.25 < best <= 0.30
    assert all(right - wrong <= 1 for _, right, wrong in curve)
