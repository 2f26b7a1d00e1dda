"""A question's time window ("recently", 「最近」) lifts the turns inside it above those outside; a window holding
every candidate tells none apart and changes nothing.

The lift is min(1.5, 1.5·relevance + LUMINA_RECALL_WINDOW_LIFT (0.3)): a turn said on the day a question names, in
words the question does not use, can pass a better match outside that day. When the window holds all the
candidates (a conversation younger than the window: "recently" is the last 30 days) the lift is not applied, or the
best match would tie with the middling ones at the cap and recency decide."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.ranking import asks_only_a_time, rank_turns as _rank
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.temporal import window_and_rest
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.stores.models import Turn
from lumina_memory.stores.settings import LuminaSettings

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


# A question that asks nothing besides when ("Where was Omar between March 3 and March 9 2024?") is answered by
# turns said then in no word of the question ("Spent the day on a boat along the coast"); the window's usual lift
# can leave them behind better matches of "where" on other days.
@pytest.mark.parametrize("question", [
    "Where was Omar between March 3 and March 9 2024?",
    "What did Ines do for Omar on 12 April, 2021?",
    "Where was Priya in the week before 2 March 2022?",
    "What did we talk about last Friday?",
    "What happened on June 3?",
    "6月3日に美咲は何してた？",
    "先週の土曜日、美咲とどこへ行った？",
])
def test_questions_that_ask_only_a_time(question):
    window, untimed = window_and_rest(question, NOW)
    assert window is not None
    assert asks_only_a_time(untimed, ["Omar", "Priya", "Ines", "美咲"])


@pytest.mark.parametrize("question", [
    "What did Priya say about her knee on 2 March, 2022?",
    "Who did Ines have lunch with on April 12, 2021?",
    "What did Marek bake recently?",
    "What were Priya's plans for the winter?",
    "先週の土曜日に美咲と何を食べた？",
])
def test_questions_that_ask_a_time_and_something_else(question):
    window, untimed = window_and_rest(question, NOW)
    assert window is not None
    assert not asks_only_a_time(untimed, ["Priya", "Ines", "Marek", "美咲"])


def test_the_time_rest_drops_only_the_words_of_the_cue():
    window, untimed = window_and_rest("Where was Omar between March 3 and March 9 2024?", NOW)
    assert window is not None and "march" not in untimed and "2024" not in untimed
    assert "where was omar between" in untimed


def test_a_question_asking_only_a_time_puts_every_turn_of_that_time_first():
    index = _index([40, 30, 20, 19.5, 5])
    rel = np.array([1.0, 0.9, 0.1, 0.05, 0.8])  # turns 2 and 3 were said then, in no word of the question
    window = (NOW - 21 * DAY, NOW - 19 * DAY)
    settings = LuminaSettings(data_dir="/tmp/unused-lumina")
    usual = [int(i) for _s, i, _r, _c in _rank(index, rel, {}, window, NOW, (1.0, 0.3, 0.0), settings)]
    only = [int(i) for _s, i, _r, _c in _rank(index, rel, {}, window, NOW, (1.0, 0.3, 0.0), settings, True)]
    assert usual[:2] != [2, 3]  # the usual lift leaves them behind the better matches of other days
    assert only[:2] == [2, 3]


def test_recall_puts_the_turns_of_the_time_asked_first(memory):
    user = "tim"
    start = 1_790_000_000.0
    rows = []
    places = ["the library", "the gym", "the office", "my aunt's", "the station", "the park", "the market", "the pool"]
    # day -> (the user's turn, Lumina's): many days that ask "where was I", and the answer, said on day 9 in none of
    # the question's words
    day_texts = {day: (f"Where was I on day {day}? I keep asking myself where I was, maybe {places[day % 8]}.",
                       f"You were at {places[(day + 3) % 8]}.") for day in [*range(0, 8), *range(11, 40)]}
    day_texts[9] = ("Spent the whole day on a boat along the coast, such a calm sea.", "Sounds great, enjoy it!")
    for day, (said, answer) in day_texts.items():
        for n, (speaker, text) in enumerate((("user", said), ("lumina", answer))):
            rows.append({"user_id": user, "speaker": speaker, "text": text, "ts": start + day * DAY + 60 * n,
                         "source_id": f"d{day}:{n}"})
    replay(memory.graph, user, rows, flush=True)
    asked_on = start + 41 * DAY
    day9 = datetime.fromtimestamp(start + 9 * DAY, timezone.utc)
    question = f"Where was I on {day9:%B} {day9.day}, {day9.year}?"

    def first(**kwargs) -> str:
        items = recall(memory.services, user, question, purpose="question", budget=24, now_ts=asked_on, **kwargs)
        return items[0]["source_ids"][0]

    assert first() == "d9:0"
