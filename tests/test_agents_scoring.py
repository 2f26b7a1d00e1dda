"""Retrieval scores of agents' memories (P6): the note's formula and module weights, and the merge of STM, LTM
and shared results deduplicated by source events."""

from __future__ import annotations

import math

import pytest

from lumina_memory.nodes.agents.scoring import (layers_for, merge, recency, score_candidates, top_k_for,
                                                weights_for)
from lumina_memory.stores.agent_records import AgentEvent, LtmRecord, Retrieved, SharedMemory
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_agents import AgentParams

P = AgentParams()
HOUR = 3600.0
T0 = 1_790_000_000.0


def _event(i: int, hours_ago: float, importance: float, content: str = "") -> AgentEvent:
    return AgentEvent(event_id=f"evt-{i}", agent_id="agent_001", time=T0 - hours_ago * HOUR, type="conversation",
                      content=content or f"event {i}", importance=importance)


def _record(i: int, hours_ago: float, importance: float, sources: list[str], content: str = "") -> LtmRecord:
    return LtmRecord(memory_id=f"mem-{i}", agent_id="agent_001", created_at=T0 - hours_ago * HOUR,
                     content=content or f"record {i}", importance=importance, source_events=sources,
                     type="semantic")


def test_recency_is_the_notes_exponential():
    assert recency(0.0, 0.5) == 1.0
    assert recency(1.0, 0.5) == pytest.approx(0.6065, abs=1e-4)
    assert recency(2.5, 0.5) == pytest.approx(0.2865, abs=1e-4)
    assert recency(-3.0, 0.5) == 1.0
    assert recency([0.0, 2.0], 0.5).tolist() == pytest.approx([1.0, math.exp(-1.0)])


@pytest.mark.parametrize("module, weights", [("social", (0.4, 0.4, 0.2)), ("goals", (0.6, 0.1, 0.3)),
                                             ("planning", (0.5, 0.3, 0.2)), ("reflection", (0.3, 0.2, 0.5)),
                                             ("talking", (0.3, 0.5, 0.2)), ("default", (0.5, 0.3, 0.2)),
                                             ("trading", (0.5, 0.3, 0.2)), (None, (0.5, 0.3, 0.2))])
def test_each_module_gets_the_notes_weights_and_an_unknown_one_the_default(module, weights):
    assert weights_for(module, P) == weights


def test_a_call_may_override_any_weight_and_bad_weights_are_named():
    assert weights_for("social", P, gamma=0.9) == (0.4, 0.4, 0.9)
    assert weights_for("talking", P, alpha=1.0, beta=0.0) == (1.0, 0.0, 0.2)
    custom = AgentParams(module_weights={"default": (0.2, 0.2, 0.6), "combat": (0.1, 0.8, 0.1)})
    assert weights_for("combat", custom) == (0.1, 0.8, 0.1) and weights_for("social", custom) == (0.2, 0.2, 0.6)
    for bad in (-0.1, float("nan"), float("inf"), "0.5", True):
        with pytest.raises(InvalidInput) as err:
            weights_for("social", P, beta=bad)
        assert err.value.field == "beta"


def test_top_k_and_layers_per_module_from_the_settings():
    assert top_k_for("reflection", P) == 20 and top_k_for("talking", P) == 5 and top_k_for("unknown", P) == 10
    assert top_k_for("talking", P, 3) == 3
    assert layers_for("goals", P) == ("ltm",) and layers_for("cc", P) == ("wm", "stm")
    assert layers_for("unknown", P) == ("stm", "ltm")
    assert layers_for("goals", P, ["stm", "stm", "wm"]) == ("stm", "wm")
    for bad in (0, -2, 2.5, True):
        with pytest.raises(InvalidInput):
            top_k_for(None, P, bad)
    for bad in ([], ["shared"], ["ltm", "../x"]):
        with pytest.raises(InvalidInput):
            layers_for(None, P, bad)


def test_score_is_alpha_relevance_plus_beta_recency_plus_gamma_importance():
    events = [_event(1, 0.0, 0.5), _event(2, 2.0, 0.9)]
    got = score_candidates("stm", events, [0.8, 0.4], T0, (0.5, 0.3, 0.2), 0.5)
    assert [r.id for r in got] == ["evt-1", "evt-2"]
    first, second = got
    assert first.score == pytest.approx(0.5 * 0.8 + 0.3 * 1.0 + 0.2 * 0.5, abs=1e-6)
    assert second.score == pytest.approx(0.5 * 0.4 + 0.3 * math.exp(-1.0) + 0.2 * 0.9, abs=1e-6)
    assert (second.relevance, second.importance, second.layer) == (0.4, 0.9, "stm")
    assert second.source_events == ["evt-2"] and second.time == T0 - 2 * HOUR


def test_the_modules_weights_change_the_order():
    recent_plain = _event(1, 0.0, 0.1)
    old_important = _event(2, 5.0, 1.0)
    talking = score_candidates("stm", [recent_plain, old_important], [0.5, 0.5], T0, weights_for("talking", P), 0.5)
    reflecting = score_candidates("stm", [recent_plain, old_important], [0.5, 0.5], T0,
                                  weights_for("reflection", P), 0.5)
    assert [r.id for r in talking] == ["evt-1", "evt-2"]
    assert [r.id for r in reflecting] == ["evt-2", "evt-1"]


def test_ltm_and_shared_candidates_carry_their_sources_and_author():
    record = _record(1, 1.0, 0.7, ["evt-8", "evt-9"], "リラは信頼できる採掘仲間だ")
    shared = SharedMemory(memory_id="sh-1", author="agent_042", scope="group", group_id="miners", created_at=T0,
                          content="The miners agreed to share the iron.", source_events=["evt-100"])
    ltm = score_candidates("ltm", [record], [0.6], T0, (0.5, 0.3, 0.2), 0.5)[0]
    assert (ltm.layer, ltm.type, ltm.source_events, ltm.content) == ("ltm", "semantic", ["evt-8", "evt-9"],
                                                                     "リラは信頼できる採掘仲間だ")
    got = score_candidates("shared", [shared], [0.6], T0, (0.5, 0.3, 0.2), 0.5)[0]
    assert (got.author, got.type, got.source_events) == ("agent_042", "group", ["evt-100"])


def test_bad_candidates_are_named_errors():
    with pytest.raises(InvalidInput):
        score_candidates("stm", [_event(1, 0, 0.5)], [0.1, 0.2], T0, (0.5, 0.3, 0.2), 0.5)
    with pytest.raises(InvalidInput):
        score_candidates("stm", [_event(1, 0, 0.5)], [float("nan")], T0, (0.5, 0.3, 0.2), 0.5)
    with pytest.raises(InvalidInput):
        score_candidates("wm", [_event(1, 0, 0.5)], [0.1], T0, (0.5, 0.3, 0.2), 0.5)
    with pytest.raises(InvalidInput):
        score_candidates("stm", [{"event_id": "x"}], [0.1], T0, (0.5, 0.3, 0.2), 0.5)


def _hit(layer: str, key: str, score: float, sources: list[str] | None = None) -> Retrieved:
    return Retrieved(layer=layer, id=key, content=key, score=score,
                     source_events=sources if sources is not None else ([key] if layer == "stm" else []))


def test_merge_ranks_the_layers_together_and_keeps_top_k():
    stm = [_hit("stm", "evt-1", 0.9), _hit("stm", "evt-2", 0.4)]
    ltm = [_hit("ltm", "mem-1", 0.7, ["evt-50"]), _hit("ltm", "mem-2", 0.5, ["evt-60"])]
    assert [r.id for r in merge({"stm": stm, "ltm": ltm}, 10)] == ["evt-1", "mem-1", "mem-2", "evt-2"]
    assert [r.id for r in merge({"stm": stm, "ltm": ltm}, 2)] == ["evt-1", "mem-1"]


def test_merge_keeps_the_higher_of_an_ltm_record_and_the_stm_event_it_came_from():
    stm = [_hit("stm", "evt-1", 0.6), _hit("stm", "evt-3", 0.3)]
    ltm = [_hit("ltm", "mem-1", 0.8, ["evt-1", "evt-2"]), _hit("ltm", "mem-2", 0.2, ["evt-3"])]
    merged = merge({"stm": stm, "ltm": ltm}, 10)
    assert [r.id for r in merged] == ["mem-1", "evt-3"]
    # two LTM records made from overlapping events: one slot
    assert [r.id for r in merge({"ltm": [_hit("ltm", "a", 0.5, ["e1", "e2"]), _hit("ltm", "b", 0.4, ["e2"])]}, 5)
            ] == ["a"]


def test_merge_ties_keep_the_given_order_and_repeats_count_once():
    stm = [_hit("stm", "evt-1", 0.5), _hit("stm", "evt-2", 0.5)]
    ltm = [_hit("ltm", "mem-1", 0.5, ["evt-9"]), _hit("ltm", "mem-1", 0.5, ["evt-9"])]
    assert [r.id for r in merge({"stm": stm, "ltm": ltm}, 10)] == ["evt-1", "evt-2", "mem-1"]
    assert [r.id for r in merge({"ltm": ltm, "stm": stm}, 10)] == ["mem-1", "evt-1", "evt-2"]
    # results without source events are kept apart by layer and id only
    shared = [_hit("shared", "sh-1", 0.5, []), _hit("shared", "sh-2", 0.5, [])]
    assert [r.id for r in merge({"shared": shared}, 10)] == ["sh-1", "sh-2"]
    assert merge({}, 3) == []
    with pytest.raises(InvalidInput):
        merge({"stm": stm}, 0)
