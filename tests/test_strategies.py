"""S5 on real stores: the agent's successful decompositions and failure patterns remembered and suggested again
for a similar task (same category first); nothing for an unrelated task; one agent's never another's; erased
with the user."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.strategies import FailurePattern, record_task, strategies, suggest
from lumina_memory.stores.errors import InvalidInput

pytestmark = pytest.mark.slow  # services opened, tasks embedded

REPORT = ["collect the competitors' price pages", "tabulate the prices", "write the summary"]
SURVEY = ["list the competitors", "read their feature pages", "compare features in a table"]


def test_a_successful_decomposition_is_suggested_for_a_similar_task(memory):
    s = memory.services
    for _ in range(3):
        record_task(s, "agent-1", "Research competitor pricing and write a report", REPORT, True, category="research")
    found = suggest(s, "agent-1", "Investigate rivals' prices and summarise them")
    assert found.subtasks == REPORT and found.confidence == 1.0 and found.strategy == "sequential"
    assert "3 of 3" in found.reason
    assert suggest(s, "agent-1", "Plan a trip to Kyoto").subtasks == []  # unrelated: nothing
    assert suggest(s, "agent-2", "Investigate rivals' prices and summarise them").subtasks == []  # another agent


def test_a_decomposition_that_often_fails_is_not_suggested(memory):
    s = memory.services
    record_task(s, "agent-1", "APIの性能を最適化する", ["全部のエンドポイントを一度に書き直す"], True, strategy="parallel")
    for _ in range(2):
        record_task(s, "agent-1", "APIの性能を最適化する", ["全部のエンドポイントを一度に書き直す"], False, strategy="parallel")
    assert suggest(s, "agent-1", "APIのレスポンスを速くする").subtasks == []
    record_task(s, "agent-1", "APIの性能を最適化する", ["遅いクエリを測る", "インデックスを足す", "もう一度測る"], True)
    assert suggest(s, "agent-1", "APIのレスポンスを速くする").subtasks[0] == "遅いクエリを測る"


def test_the_same_category_is_preferred_for_a_similar_task(memory):
    s = memory.services
    record_task(s, "agent-1", "Research competitor features and write a report", SURVEY, True, category="product")
    record_task(s, "agent-1", "Research competitor pricing and write a report", REPORT, True, category="pricing")
    task = "Research competitor pricing and write a report for the board"
    assert suggest(s, "agent-1", task, category="product").subtasks == SURVEY
    assert suggest(s, "agent-1", task, category="pricing").subtasks == REPORT


def test_failure_patterns_warn_by_indicator_or_similar_task(memory):
    s = memory.services
    limit = FailurePattern(pattern="rate_limit", indicators=["asap", "urgent"], mitigation="run the calls one by one",
                           severity=4)
    record_task(s, "agent-1", "Fetch all 500 product pages in parallel", ["fetch every page at once"], False,
                strategy="parallel", failure=limit)
    warned = suggest(s, "agent-1", "Send the newsletter to everyone ASAP").warnings
    assert [(w.pattern, w.matched, w.severity) for w in warned] == [("rate_limit", "asap", 4)]
    assert suggest(s, "agent-1", "Fetch all 800 product pages in parallel").warnings[0].matched == "similar task"
    assert suggest(s, "agent-1", "Write a birthday card for mom").warnings == []


def test_bad_input_is_refused_and_nothing_is_written(memory):
    s = memory.services
    for bad in (dict(task="", subtasks=REPORT), dict(task="x", subtasks=[]), dict(task="x", subtasks=["  "])):
        with pytest.raises(InvalidInput):
            record_task(s, "agent-1", success=True, **bad)
    with pytest.raises(InvalidInput):
        record_task(s, "agent-1", "x", ["y"], True, strategy="random")  # type: ignore[arg-type]
    assert strategies(s).of_user("agent-1") == []


def test_erased_with_the_user(memory):
    from lumina_memory.graphs.erase import erase_plan, erase_user

    s = memory.services
    record_task(s, "agent-1", "Research competitor pricing and write a report", REPORT, True)
    record_task(s, "agent-2", "Research competitor pricing and write a report", REPORT, True)
    erase_user(s, "agent-1", erase_plan(s, "agent-1")["token"])
    assert strategies(s).of_user("agent-1") == [] and len(strategies(s).of_user("agent-2")) == 1
