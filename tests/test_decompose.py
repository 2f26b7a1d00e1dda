"""A question that asks for several things is split offline into its parts (issue 19, multi-hop); a question
about several people, or one whose second half names nothing, stays whole."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.decompose import sub_queries
from lumina_memory.nodes.retrieval.recall import recall
from tests.test_passages import T0, DAY, _reply


@pytest.mark.parametrize(("question", "parts"), [
    ("What are the task queue and the login provider?", ["What are the task queue", "the login provider"]),
    ("Remind me of two things: the code reviewer and the staging domain.",
     ["Remind me of two things: the code reviewer", "the staging domain"]),
    ("What are the CI system, the deploy target and the Python version?",
     ["What are the CI system", "the deploy target", "the Python version"]),
    ("What does Priya do to unwind and what are her nephews into?",
     ["What does Priya do to unwind", "what are her nephews into"]),
    ("Webフレームワークとワーカーのメモリ上限はそれぞれ何？", ["Webフレームワーク", "ワーカーのメモリ上限"]),
    ("猫の名前と犬の名前、両方教えて", ["猫の名前", "犬の名前"]),
    # two events compared or measured between
    ("How many days passed between when we settled the login provider and when we settled the demo day?",
     ["we settled the login provider", "we settled the demo day"]),
    ("Which came first: we set the staging database port to 5433, or we moved the servers to Frankfurt?",
     ["we set the staging database port to 5433", "we moved the servers to Frankfurt"]),
    ("コードフリーズを8月18日にしたのと、CIを決めたのでは、どちらが先？", ["コードフリーズを8月18日にした", "CIを決めた"]),
    ("SSHのポート番号を決めた日から、ワーカーのメモリ上限を768 MBにした日まで何日あった？",
     ["SSHのポート番号を決めた", "ワーカーのメモリ上限を768 MBにした"]),
    ("ログの保持期間を7日間にしたのは、Python 3.13に移行したのより前？後？", ["ログの保持期間を7日間にした", "Python 3.13に移行した"]),
])
def test_a_question_for_several_things_is_split(question, parts):
    assert sub_queries(question) == parts


@pytest.mark.parametrize("question", [
    "What did Priya and Tomas do together?",  # one question about two people
    "What was the deploy target at first, and what is it now?",  # the second half names nothing of its own
    "How did the Python version change over the project?",
    "When did Priya go to the grief support group?",
    "猫と一緒に何をした？",
    "What kinds of bread have Tomas and his kids baked?",  # one subject: a person and hers
    "According to Ines, what makes Omar a patient coach and friend?",
    "Where was Omar between March 3 and March 9 2024?",  # days, not events: the time window's work
    "Was the second half of April 2021 a quiet month for Ines? Answer yes or no.",
    "",
])
def test_a_question_for_one_thing_stays_whole(question):
    assert sub_queries(question) == []


def test_both_answers_of_a_two_part_question_are_packed(memory_factory):
    mem = memory_factory()
    facts = {
        "D2:2": "Decision made: the task queue is Arq, because it is small and async.",
        "D5:2": "Note that the login provider is Ory Kratos, mainly because of its documentation.",
    }
    rows = []
    for day in range(8):
        ts = T0 + day * DAY
        rows.append({"user_id": "mika", "speaker": "user", "text": f"Mika: Question {day} about the pipeline setup?",
                     "ts": ts, "source_id": f"D{day + 1}:1"})
        rows.append({"user_id": "mika", "speaker": "lumina", "text": _reply(day, facts.get(f"D{day + 1}:2")),
                     "ts": ts + 60, "source_id": f"D{day + 1}:2"})
    replay(mem.graph, "mika", rows)
    items = recall(mem.services, "mika", "What are the task queue and the login provider?", purpose="question", budget=200)
    text = "\n".join(i["text"] for i in items)
    assert "Arq" in text and "Ory Kratos" in text
