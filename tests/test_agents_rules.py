"""PIANO's rules as pure functions: rule importance (P3), STM capacity and the consolidation cycle (P2), decay and
the forgetting plan (P5), on records built as the simulation builds them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lumina_memory.nodes.agents.capacity import consolidation_interval_seconds, stm_capacity
from lumina_memory.nodes.agents.decay import access_weight, decay_factors, fading, forgetting_plan
from lumina_memory.nodes.agents.importance import emotion_intensity, modifiers_applying, rule_importance
from lumina_memory.stores.agent_records import AgentEvent, LtmRecord
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_agents import AgentParams

P = AgentParams()
HOUR = 3600.0
T0 = 1_790_000_000.0


def _event(kind: str, content: str, **metadata) -> AgentEvent:
    return AgentEvent(event_id="evt-1", agent_id="agent_001", time=T0, type=kind, content=content, metadata=metadata)


# --- P3 importance -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, base", [("conversation", 0.5), ("action", 0.3), ("observation", 0.2),
                                        ("reflection", 0.6)])
def test_a_plain_event_scores_its_types_base(kind, base):
    assert rule_importance(_event(kind, "The sky is grey over the field."), P) == base


@pytest.mark.parametrize("kind, metadata, expected", [
    ("conversation", {"request": True}, 0.7), ("conversation", {"proposal": True}, 0.7),
    ("conversation", {"emotion_intensity": 0.8}, 0.6), ("conversation", {"emotion_intensity": 0.5}, 0.5),
    ("conversation", {"request": True, "emotion_intensity": 0.9}, 0.8),
    ("action", {"goal_related": True}, 0.6), ("action", {"failure": True}, 0.5),
    ("action", {"goal_related": True, "failure": True}, 0.8),
    ("observation", {"new_agent": True}, 0.5), ("observation", {"threat": True}, 0.6),
    ("observation", {"new_agent": True, "threat": True}, 0.9),
])
def test_the_notes_modifiers_add_to_the_base(kind, metadata, expected):
    assert rule_importance(_event(kind, "It happened near the well.", **metadata), P) == pytest.approx(expected)


def test_modifiers_apply_only_to_their_event_type():
    flags = {"goal_related": True, "failure": True, "new_agent": True, "threat": True, "request": True}
    assert rule_importance(_event("reflection", "Trade makes the village stronger.", **flags), P) == 0.6
    assert modifiers_applying(_event("conversation", "We talked.", goal_related=True, threat=True)) == []
    assert modifiers_applying(_event("action", "Dug a well.", request=True)) == []


def test_the_score_is_capped_at_one_and_the_settings_apply():
    params = AgentParams(base_importance={**P.base_importance, "observation": 0.7})
    assert rule_importance(_event("observation", "A stranger with a sword.", new_agent=True, threat=True), params) == 1.0
    heavier = AgentParams(importance_modifiers={**P.importance_modifiers, "failure": 0.05})
    assert rule_importance(_event("action", "The furnace cracked.", failure=True), heavier) == pytest.approx(0.35)


@pytest.mark.parametrize("text", ["一緒に鉄を採掘しよう", "明日パンを焼いてくれませんか", "Could you bring me some bread?",
                                  "Please help me build the fence."])
def test_offline_a_request_or_proposal_is_read_from_the_words(text):
    assert "request_or_proposal" in modifiers_applying(_event("conversation", text))
    assert rule_importance(_event("conversation", text), P) >= 0.7


@pytest.mark.parametrize("text", ["北の畑で麦が育っている。", "The wheat in the north field is growing."])
def test_offline_a_plain_statement_is_neither_request_nor_emotional(text):
    assert modifiers_applying(_event("conversation", text)) == []


@pytest.mark.parametrize("text", ["嬉しい！鉄がたくさん取れたよ", "I am so worried about the harvest.", "最悪だ、家が燃えた…"])
def test_offline_emotional_words_make_a_conversation_emotional(text):
    event = _event("conversation", text)
    assert emotion_intensity(event) > 0.5
    assert "emotional" in modifiers_applying(event)


def test_given_keys_win_over_the_offline_reading():
    assert modifiers_applying(_event("conversation", "一緒に鉄を採掘しよう", request=False, proposal=False)) == []
    assert modifiers_applying(_event("conversation", "嬉しい！最高！", emotion_intensity=0.1)) == []


@pytest.mark.parametrize("metadata, field", [({"request": "yes"}, "metadata.request"),
                                             ({"threat": 1}, "metadata.threat"),
                                             ({"emotion_intensity": 1.5}, "metadata.emotion_intensity"),
                                             ({"emotion_intensity": float("nan")}, "metadata.emotion_intensity"),
                                             ({"emotion_intensity": "high"}, "metadata.emotion_intensity")])
def test_malformed_modifier_keys_are_named_errors(metadata, field):
    kind = "observation" if "threat" in metadata else "conversation"
    with pytest.raises(InvalidInput) as err:
        rule_importance(_event(kind, "x", **metadata), P)
    assert err.value.field == field


def test_a_type_without_a_base_is_a_named_error():
    params = AgentParams(base_importance={"conversation": 0.5})
    with pytest.raises(InvalidInput, match="reflection"):
        rule_importance(_event("reflection", "Why do we trade?"), params)


# --- P2 capacity and cycle -------------------------------------------------------------------------------------
@pytest.mark.parametrize("hours, capacity, minutes", [(0.5, 100, 10), (0.99, 100, 10), (1.0, 200, 5), (1.5, 200, 5),
                                                      (2.0, 300, 5), (2.5, 300, 3), (4.0, 300, 3), (12.0, 300, 3)])
def test_capacity_and_cycle_follow_the_notes_table(hours, capacity, minutes):
    params = AgentParams(run_hours=hours)
    assert stm_capacity(params) == capacity
    assert consolidation_interval_seconds(params) == minutes * 60


def test_capacity_and_cycle_read_their_settings():
    params = AgentParams(stm_base_capacity=50, stm_capacity_per_hour=20, stm_max_capacity=120,
                         consolidation_minutes=(8.0, 4.0, 2.0))
    assert [stm_capacity(params, h) for h in (0.2, 1.2, 3.9, 9.0)] == [50, 70, 110, 120]
    assert [consolidation_interval_seconds(params, h) for h in (0.2, 1.2, 3.9)] == [480, 240, 120]
    assert stm_capacity(P) == 300  # the defaults' 2.5-hour run


@pytest.mark.parametrize("hours", [0, -1, float("nan"), float("inf"), "2"])
def test_a_run_length_that_is_no_length_is_a_named_error(hours):
    with pytest.raises(InvalidInput) as err:
        stm_capacity(P, hours)
    assert err.value.field == "run_hours"


# --- P5 decay ----------------------------------------------------------------------------------------------------
def test_decay_is_the_notes_formula_elementwise():
    importance = np.array([0.8, 0.5, 0.9, 0.3])
    created = T0 - np.array([0.0, 1.0, 2.5, 1.0]) * HOUR
    access = np.array([3, 1, 0, 7])
    got = decay_factors(importance, created, access, T0, 0.5)
    want = [i * math.exp(-0.5 * h) * math.log(1 + a) / math.log(8) for i, h, a in
            zip(importance, [0.0, 1.0, 2.5, 1.0], access)]
    assert got == pytest.approx(want)
    assert got[2] == 0.0  # never accessed
    assert decay_factors([0.5], [T0 - HOUR], [2], T0, 0.5, max_access=10)[0] == pytest.approx(
        0.5 * math.exp(-0.5) * math.log(3) / math.log(11))


def test_with_no_access_at_all_the_access_term_is_zero_and_nothing_divides_by_zero():
    assert access_weight([0, 0, 0]).tolist() == [0.0, 0.0, 0.0]
    assert decay_factors([0.9, 0.9], [T0, T0], [0, 0], T0, 0.5).tolist() == [0.0, 0.0]
    assert decay_factors([], [], [], T0, 0.5).shape == (0,)
    with pytest.raises(InvalidInput):
        access_weight([1, -1])


def test_a_record_from_the_future_counts_as_new():
    assert fading([0.5], [T0 + HOUR], T0, 0.5)[0] == 0.5


def _record(i: int, importance: float, hours_old: float, access: int, agent: str = "agent_001") -> LtmRecord:
    return LtmRecord(memory_id=f"mem-{i}", agent_id=agent, created_at=T0 - hours_old * HOUR, access_count=access,
                     importance=importance, content=f"memory {i}")


def test_deletion_takes_faded_never_accessed_records_only():
    records = [_record(0, 0.9, 0.1, 0),   # new and unused: kept (the literal rule would delete it)
               _record(1, 0.5, 5.0, 0),   # 0.5*e^-2.5 = 0.041 < 0.05, unused: deleted
               _record(2, 0.5, 5.0, 1),   # as faded but used once: kept
               _record(3, 0.2, 2.0, 0),   # 0.2*e^-1 = 0.074: kept
               _record(4, 0.2, 3.0, 0)]   # 0.2*e^-1.5 = 0.045: deleted
    plan = forgetting_plan(records, T0, P)
    assert plan.delete == ["mem-1", "mem-4"]
    assert plan.compress == []  # 5 records are far below 80 % of 10,000
    assert plan.decay["mem-0"] == 0.0 and plan.decay["mem-2"] == pytest.approx(0.5 * math.exp(-2.5), abs=1e-6)


def test_compression_starts_at_its_share_of_the_cap_and_takes_the_least_decayed_last():
    records = [_record(0, 0.9, 0.1, 5), _record(1, 0.9, 0.5, 0), _record(2, 0.3, 3.0, 1), _record(3, 0.4, 1.0, 0),
               _record(4, 0.9, 0.1, 1)]
    below = forgetting_plan(records, T0, AgentParams(ltm_cap=7, compress_at=0.8))  # 5 < 5.6
    assert below.compress == []
    at = forgetting_plan(records, T0, AgentParams(ltm_cap=6, compress_at=0.8))  # 5 >= 4.8
    # decay: mem-0 0.86, mem-4 0.9*0.39=0.35 (above 0.1); mem-2 0.3*e^-1.5*0.39=0.026; unused mem-1 and mem-3 0
    assert at.compress == ["mem-3", "mem-1", "mem-2"]
    assert at.delete == []
    assert set(at.compress).isdisjoint(at.delete)


def test_compression_counts_what_is_left_after_deletion():
    records = [_record(i, 0.1, 10.0, 0) for i in range(4)] + [_record(9, 0.5, 1.0, 1), _record(8, 0.5, 1.0, 2)]
    plan = forgetting_plan(records, T0, AgentParams(ltm_cap=4, compress_at=0.8))  # 2 left < 3.2
    assert plan.delete == ["mem-0", "mem-1", "mem-2", "mem-3"] and plan.compress == []


def test_the_plan_is_for_one_agent():
    with pytest.raises(InvalidInput):
        forgetting_plan([_record(0, 0.5, 1, 0), _record(1, 0.5, 1, 0, agent="agent_002")], T0, P)
    assert forgetting_plan([], T0, P).delete == []


def test_decay_lambda_is_the_setting():
    records = [_record(0, 0.5, 3.0, 0)]
    assert forgetting_plan(records, T0, P).delete == []  # 0.5*e^-1.5 = 0.11
    assert forgetting_plan(records, T0, AgentParams(decay_lambda=1.0)).delete == ["mem-0"]  # 0.5*e^-3 = 0.025
    assert forgetting_plan(records, T0, AgentParams(delete_below_decay=0.2)).delete == ["mem-0"]
