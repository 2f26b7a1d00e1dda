"""Shared memories (P7) on real engines, embedded and server mode: scopes, membership changes, look-alike and
hostile ids, provenance (author and source events), and a memory told onward and traced."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.agents.shared import NotVisible
from lumina_memory.stores.errors import InvalidInput
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

from .agents_fixture import opened  # noqa: F401 - fixture

RULE = "The council agreed: nobody fishes in the north lake during spring"


def _seen(m, agent, query="the rule about fishing in the lake", scope=None):
    return [r.id for r in m.retrieve_shared(agent, query, scope=scope, top_k=50)]


def test_a_global_memory_reaches_every_agent_of_its_run_and_no_other_run(opened):
    m = opened.memory
    for agent in ("agent_1", "agent_2"):
        m.store(agent, {"type": "observation", "content": "spring came"}, run_id="run_a")
    m.store("agent_9", {"type": "observation", "content": "spring came"}, run_id="run_b")
    mid = m.store_shared({"content": RULE, "source_events": ["ev_1", "ev_2"]}, author="agent_1")
    for agent in ("agent_1", "agent_2"):
        (hit,) = m.retrieve_shared(agent, "fishing rule")
        assert hit.id == mid and hit.layer == "shared" and hit.author == "agent_1"
        assert hit.source_events == ["ev_1", "ev_2"] and hit.type == "global"
    assert _seen(m, "agent_9") == []


def test_a_group_memory_follows_membership_as_it_changes(opened):
    m = opened.memory
    for agent in ("agent_1", "agent_2", "agent_3"):
        m.join_group(agent, "fishers") if agent != "agent_3" else m.join_group(agent, "hunters")
    mid = m.store_shared(RULE, scope="group", group_id="fishers", author="agent_1")
    assert _seen(m, "agent_2") == [mid]
    assert _seen(m, "agent_3") == [] and _seen(m, "agent_3", scope="group") == []
    m.leave_group("agent_2", "fishers")
    assert _seen(m, "agent_2") == []
    m.join_group("agent_3", "fishers")
    assert _seen(m, "agent_3") == [mid]
    with pytest.raises(InvalidInput, match="member"):
        m.store_shared("hunters only", scope="group", group_id="hunters", author="agent_2")
    with pytest.raises(InvalidInput, match="group"):
        m.store_shared("no group named", scope="group", author="agent_1")


def test_a_bilateral_memory_is_seen_by_its_two_agents_only(opened):
    m = opened.memory
    agents = ["agent_1", "agent_2", "agent_3", "agent_10", "Agent_1", "agent_1.", "agent_2-"]
    for agent in agents:
        m.store(agent, {"type": "observation", "content": "a quiet morning"})
    mid = m.store_shared("The gold is buried under the old oak", scope="bilateral",
                         visible_to=["agent_1", "agent_2"], author="agent_1")
    for agent in agents:
        expected = [mid] if agent in ("agent_1", "agent_2") else []
        assert _seen(m, agent, "where is the gold?") == expected, agent
    with pytest.raises(InvalidInput, match="visible_to"):
        m.store_shared("three is a crowd", scope="bilateral", visible_to=["agent_1", "agent_2", "agent_3"],
                       author="agent_1")
    with pytest.raises(InvalidInput, match="visible_to"):
        m.store_shared("not mine to share", scope="bilateral", visible_to=["agent_2", "agent_3"], author="agent_1")


@pytest.mark.parametrize("bad", ["../agent_1", "'; DROP TABLE agent_shared; --", "a' OR '1'='1",
                                 "MATCH (n) RETURN n", "agent_１", "bad\ud800"])
def test_hostile_ids_in_shared_calls_are_refused(opened, bad):
    m = opened.memory
    m.store("agent_1", {"type": "observation", "content": "hello"})
    calls = [lambda: m.store_shared("x", author=bad),
             lambda: m.store_shared("x", scope="bilateral", visible_to=["agent_1", bad], author="agent_1"),
             lambda: m.store_shared({"content": "x", "source_events": [bad]}, author="agent_1"),
             lambda: m.retrieve_shared(bad, "x"),
             lambda: m.join_group("agent_1", bad),
             lambda: m.tell(bad, "agent_1", "agent_2"),
             lambda: m.trace(bad)]
    for call in calls:
        with pytest.raises(InvalidInput):
            call()
    assert m.agents.tables.visible_shared("agent_1") == []


def test_a_told_memory_reaches_the_hearer_keeps_its_provenance_and_is_traced(opened):
    m, clock = opened.memory, opened.clock
    for agent in ("agent_1", "agent_2", "agent_3", "agent_4"):
        m.store(agent, {"type": "observation", "content": "market day"})
    mid = m.store_shared({"content": "The bridge will close at the full moon", "source_events": ["ev_7"]},
                         scope="bilateral", visible_to=["agent_1", "agent_2"], author="agent_1")
    assert _seen(m, "agent_3", "when does the bridge close?") == []
    with pytest.raises(NotVisible):
        m.tell(mid, "agent_3", "agent_4")  # agent_3 cannot tell what it cannot see
    clock.advance(1)
    copy = m.tell(mid, "agent_2", "agent_3", event_id="talk_1")
    (hit,) = m.retrieve_shared("agent_3", "when does the bridge close?")
    assert hit.id == copy and hit.content.startswith("The bridge") and hit.source_events == ["ev_7"]
    assert hit.author == "agent_2"  # the teller: the hearer heard it from agent_2
    assert _seen(m, "agent_4", "when does the bridge close?") == []
    clock.advance(1)
    m.tell(copy, "agent_3", "agent_4")
    assert _seen(m, "agent_4", "when does the bridge close?") != []
    chain = m.trace(mid)
    assert [(h.from_agent, h.to_agent) for h in chain] == [("agent_2", "agent_3"), ("agent_3", "agent_4")]
    assert chain[0].event_id == "talk_1" and chain[0].time < chain[1].time
    assert m.trace(copy, "agent_3") == chain  # a copy's id, read as its hearer sees it, traces its root
    with pytest.raises(NotVisible):
        m.trace(copy, "agent_1")
    assert m.agents.tables.visible_shared("agent_1", ids=[mid])[0].visible_to == ["agent_1", "agent_2"]


def test_telling_a_memory_the_hearer_already_sees_adds_a_hop_and_no_copy(opened):
    m = opened.memory
    for agent in ("agent_1", "agent_2"):
        m.join_group(agent, "guild")
    mid = m.store_shared("Guild dues are paid on the first day", scope="group", group_id="guild", author="agent_1")
    assert m.tell(mid, "agent_1", "agent_2") == mid
    assert len(m.agents.tables.visible_shared("agent_2")) == 1
    assert [(h.from_agent, h.to_agent) for h in m.trace(mid)] == [("agent_1", "agent_2")]
    with pytest.raises(InvalidInput):
        m.tell(mid, "agent_1", "agent_1")
