"""Which facts a question asks about (nodes/knowledge/recall_items._score): those lead recall; a fact only
near in meaning follows the episodes."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.knowledge.recall_items import _lower, _score
from lumina_memory.nodes.text.tokenize import terms

PLAN = {"attribute": "plan", "subject": "user", "value": "富士山に登る", "detail": None, "text": "来週の土曜日に富士山に登る予定なんだ"}
EVENT = {"attribute": "event", "subject": "user", "value": "visit Kyoto", "detail": None, "text": "I visited Kyoto in May"}
LIKES = {"attribute": "likes", "subject": "user", "value": "富士山", "detail": None, "text": "富士山が好き"}


def score(question: str, row: dict) -> float:
    return _score(_lower(question), set(terms(question)), row)


@pytest.mark.parametrize("question,row,asked", [
    ("富士山に登るのはいつ？", PLAN, True),  # when, and the plan named: its day is the answer
    ("富士山って何県にあるの？", PLAN, False),  # the value named alone: a question about an episode
    ("いつ映画を見る？", PLAN, False),  # when, but another plan
    ("When did I visit Kyoto?", EVENT, True),
    ("Is Kyoto nice in May?", EVENT, False),  # the value named alone
    ("富士山に登るのはいつ？", LIKES, False),  # a like has no day
])
def test_a_when_question_asks_about_the_plan_or_event_it_names(question, row, asked):
    assert (score(question, row) > 0) is asked
