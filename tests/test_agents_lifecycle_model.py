"""``memory_model="lifecycle"``: the chat's emotion-weighted lifecycle on agents' long-term records
(nodes.agents.lifecycle_model), against the note's forgetting (nodes.agents.decay) on the same records: what the
note deletes the lifecycle keeps or compresses, and what the note keeps (an accessed record) the lifecycle
archives; then through ``maintenance`` on both engines."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.nodes.agents.decay import forgetting_plan
from lumina_memory.nodes.agents.lifecycle_model import lifecycle_plan
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.stores.agent_records import LtmRecord
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_agents import AgentParams
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

from .agents_fixture import T0, open_engine

HOUR, DAY = 3600.0, 86400.0
PIANO, LIFE = AgentParams(), AgentParams(memory_model="lifecycle")
CHAT = LifecycleParams()
ANGRY = "Noah betrayed me at the market and I am furious, I will never forgive him."  # lexicon: 73, emotional
ERRAND = "Mira asked me to bring iron ore to the tower. She needs it for the new gate."  # 12, casual
CHORE = "I carried wood to the bridge."  # 12, casual


def record(memory_id: str, content: str, importance: float, created: float = T0, access: int = 0,
           last: float | None = None, tags=("iron ore", "tower")) -> LtmRecord:
    head = content.split(". ")[0].rstrip(".") + "."
    return LtmRecord(memory_id=memory_id, agent_id="agent_1", created_at=created, content=content, summary=head,
                     importance=importance, access_count=access, last_accessed=last, tags=list(tags))


def test_an_emotional_record_the_note_deletes_is_kept_whole():
    angry = record("m1", ANGRY, 0.5)
    now = T0 + 6 * HOUR  # 0.5 * exp(-0.5 * 6) < 0.05 and never accessed: the note's rule deletes it
    assert forgetting_plan([angry], now, PIANO).delete == ["m1"]
    plan = lifecycle_plan([angry], now, LIFE, CHAT)
    assert plan.delete == [] and plan.rewrite == [] and plan.level == {"m1": 1}
    assert plan.retention["m1"] > CHAT.level1_threshold


def test_a_record_the_note_deletes_is_compressed_to_its_summary_then_its_keywords():
    errand = record("m2", ERRAND, 0.6)  # intensity 60 (importance), casual: 0.76 a day
    assert forgetting_plan([errand], T0 + DAY, PIANO).delete == ["m2"]
    assert lifecycle_plan([errand], T0 + 0.5 * DAY, LIFE, CHAT).level == {"m2": 1}
    plan = lifecycle_plan([errand], T0 + DAY, LIFE, CHAT)  # 60 * 0.76 = 45.6: level 2
    assert plan.level == {"m2": 2} and plan.delete == []
    (short,) = plan.rewrite
    assert short.content == "Mira asked me to bring iron ore to the tower." and short.source_events == []
    again = lifecycle_plan([short], T0 + DAY, LIFE, CHAT)
    assert again.rewrite == [] and again.level == {"m2": 2}  # the same level gives the same text: nothing to do
    plan = lifecycle_plan([short], T0 + 5 * DAY, LIFE, CHAT)  # 60 * 0.76^5 = 15.2: level 3
    assert plan.level == {"m2": 3} and plan.rewrite[0].content == "iron ore tower"


def test_an_accessed_record_the_note_keeps_is_archived_and_deleted():
    chore = record("m3", CHORE, 0.3, access=3, last=T0 + HOUR)
    now = T0 + 10 * DAY
    assert forgetting_plan([chore], now, PIANO).delete == []  # accessed: the note never deletes it
    plan = lifecycle_plan([chore], now, LIFE, CHAT)  # 30 * (0.73 + 3 * 0.02)^~10 < 5: archived
    assert plan.delete == ["m3"] and plan.level == {"m3": 4}


def test_recalls_reinforce_but_a_level_never_goes_back_up():
    fresh = record("m4", ERRAND, 0.6)
    at_day5 = T0 + 5 * DAY
    assert lifecycle_plan([fresh], at_day5, LIFE, CHAT).level == {"m4": 3}
    recalled = fresh.model_copy(update={"access_count": 1, "last_accessed": at_day5})
    plan = lifecycle_plan([recalled], at_day5, LIFE, CHAT)
    # memory_days halved and the coefficient raised: retention rises above level 3's threshold ...
    assert plan.retention["m4"] > CHAT.level2_threshold
    assert plan.level == {"m4": 3}  # ... but the keywords do not grow back into the summary
    later = T0 + 4.2 * DAY
    assert lifecycle_plan([fresh], later, LIFE, CHAT).level == {"m4": 3}
    early = fresh.model_copy(update={"access_count": 1, "last_accessed": T0 + 0.5 * DAY})
    assert lifecycle_plan([early], later, LIFE, CHAT).level == {"m4": 2}  # recalled while whole, it fades slower


def test_the_chat_s_lifecycle_settings_and_the_day_length_apply():
    errand = record("m5", ERRAND, 0.6)
    assert lifecycle_plan([errand], T0 + DAY, LIFE, CHAT.model_copy(update={"level1_threshold": 40.0})).level == \
        {"m5": 1}
    hourly = AgentParams(memory_model="lifecycle", lifecycle_day_hours=1.0)
    assert lifecycle_plan([errand], T0 + HOUR, hourly, CHAT).level == {"m5": 2}  # a short run fades too
    expected = 60 * (0.7 + 0.1 * 0.6) ** 2  # the chat's F1: intensity x decay ^ days
    assert np.isclose(lifecycle_plan([errand], T0 + 2 * DAY, LIFE, CHAT).retention["m5"], expected, atol=1e-3)


def test_a_plan_is_for_one_agent():
    other = record("m6", CHORE, 0.3).model_copy(update={"agent_id": "agent_2"})
    with pytest.raises(InvalidInput, match="one agent"):
        lifecycle_plan([record("m1", ANGRY, 0.5), other], T0, LIFE, CHAT)
    assert lifecycle_plan([], T0, LIFE, CHAT).level == {}


@pytest.fixture(params=["duckdb", "postgres"])
def lifecycle_opened(request, tmp_path):
    o = open_engine(request, tmp_path, agents={"memory_model": "lifecycle"})
    try:
        yield o
    finally:
        o.close()


@pytest.mark.slow
def test_maintenance_applies_the_lifecycle_on_both_engines(lifecycle_opened):
    m, clock = lifecycle_opened.memory, lifecycle_opened.clock
    angry = m.store("agent_1", {"type": "conversation", "content": ANGRY, "importance": 0.5})
    errand = m.store("agent_1", {"type": "conversation", "content": ERRAND, "importance": 0.6})
    chore = m.store("agent_1", {"type": "action", "content": CHORE, "importance": 0.3})
    assert m.consolidate("agent_1", force=True) == 3
    by_event = {r.source_events[0]: r for r in m.agents.tables.ltm("agent_1")}
    for _ in range(3):
        assert m.retrieve("agent_1", "who carried wood to the bridge?", layers=["ltm"], top_k=1)[0].source_events \
            == [chore]
    clock.advance(24)
    records = m.agents.tables.ltm("agent_1")
    piano = forgetting_plan(records, clock(), PIANO)
    assert set(piano.delete) == {by_event[angry].memory_id, by_event[errand].memory_id}  # the note's verdict
    report = m.maintenance("agent_1")
    assert report["memory_model"] == "lifecycle" and report["emotion_path"] == "lexicon"
    assert report["deleted"] == 0 and report["compressed"] == 1 and report["ltm_count"] == 3
    assert report["levels"] == {"1": 1, "2": 2}
    now = {r.source_events[0]: r for r in m.agents.tables.ltm("agent_1")}
    assert now[angry].content == by_event[angry].content  # level 1: whole
    assert now[errand].content == "Mira asked me to bring iron ore to the tower."  # level 2: its summary
    assert now[chore].content == CHORE  # level 2 too, but one sentence: its summary is itself
    assert 0 < now[errand].decay_factor < now[angry].decay_factor <= 1  # retention / 100
    (hit,) = m.retrieve("agent_1", "what does Mira need for the new gate?", layers=["ltm"], top_k=1)
    assert hit.source_events == [errand] and hit.content == now[errand].content  # found by its new text's vector
    assert m.maintenance("agent_1")["compressed"] == 0  # a second run the same day changes nothing
    clock.advance(9 * 24)
    report = m.maintenance("agent_1")
    # The chore, accessed three times, is archived (deleted: agents have no archive tier); the errand, recalled
    # once after its compression, only reaches level 3; the angry record stays whole.
    assert report["deleted"] == 1 and report["compressed"] == 1 and report["ltm_count"] == 2
    assert report["levels"] == {"1": 1, "3": 1, "4": 1}
    left = {r.source_events[0]: r for r in m.agents.tables.ltm("agent_1")}
    assert set(left) == {angry, errand} and left[angry].content == ANGRY
    assert left[errand].content == (" ".join(left[errand].tags) or left[errand].summary)  # its keywords
    assert all(chore not in r.source_events for r in m.retrieve("agent_1", "wood at the bridge", layers=["ltm"]))
