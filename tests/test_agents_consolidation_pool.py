"""The consolidation pool (P4): queued on capacity and on the cycle, one consolidation per agent at a time (a lock
per agent, a lease across processes), and never in the way of store or retrieve. A slow chat model (it waits for
the test's signal) keeps a consolidation in progress; the test waits on events, never on the wall clock."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from lumina_memory.stores.leases import LeaseBusy, PostgresLeases
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

from .agents_fixture import Opened

HANG = 120.0
"""Seconds before a wait that should end at once is called a hang (a bound on failure, not a speed limit)."""
SMALL = {"stm_base_capacity": 4, "stm_max_capacity": 4, "stm_capacity_per_hour": 0, "consolidation_workers": 2}
TOPICS = ["harvest wheat in the east field", "the wolf pack by the river", "trading salt for fish at the market",
          "repairing the mill's wheel", "a storm over the northern hills", "teaching children to read"]


class SlowModel:
    """A chat model that answers valid JSON (and a 1-10 rating) but holds each consolidation until released."""

    def __init__(self):
        self.release = threading.Event()
        self.changed = threading.Condition()
        self.active: Counter = Counter()
        self.most: Counter = Counter()

    def invoke(self, prompt: str):
        agent = next((a for a in ("agent_1", "agent_2") if a in prompt), "other")
        with self.changed:
            self.active[agent] += 1
            self.most[agent] = max(self.most[agent], self.active[agent])
            self.changed.notify_all()
        try:
            assert self.release.wait(HANG)
        finally:
            with self.changed:
                self.active[agent] -= 1
                self.changed.notify_all()
        answer = {"summary": "summary: " + prompt[-80:], "type": "episodic", "tags": ["t"], "importance": 0.5}
        return type("Reply", (), {"content": json.dumps(answer) + " rating 7"})()

    def wait_active(self, *agents: str) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: all(self.active[a] for a in agents), HANG)


def _fill(o: Opened, agent: str, n: int) -> list[str]:
    """``n`` events of ``agent``, a run minute apart (STM's order is time order)."""
    out = []
    for i in range(n):
        o.clock.now += 60
        out.append(o.memory.store(agent, {"type": "observation", "content": f"{agent} noted {TOPICS[i % len(TOPICS)]} ({i})"}))
    return out


@pytest.fixture
def slow(tmp_path):
    model = SlowModel()
    o = Opened(tmp_path / "data", "duckdb", model=model, agents=SMALL)
    try:
        yield o, model
    finally:
        model.release.set()
        o.close()


def test_store_and_retrieve_complete_while_the_agent_is_being_consolidated(slow):
    o, model = slow
    m = o.memory
    first = _fill(o, "agent_1", 4)  # capacity: queued, and the pool's worker enters the slow model
    assert model.wait_active("agent_1")
    done, out = threading.Event(), {}

    o.clock.now += 60

    def work():
        out["stored"] = m.store("agent_1", {"type": "observation", "content": "a new bridge over the river"})
        out["found"] = m.retrieve("agent_1", "bridge over the river", layers=["stm"])
        done.set()

    threading.Thread(target=work, daemon=True).start()
    assert done.wait(HANG)
    assert model.active["agent_1"] == 1  # the consolidation was still in progress
    assert out["found"][0].id == out["stored"]
    model.release.set()
    assert m.pool.wait_idle(HANG)
    assert m.pool.failed == [] and m.pool.done["capacity"] >= 1
    left = {e.event_id for e in m.agents.tables.events("agent_1")}
    assert out["stored"] in left and not set(first[:2]) & left  # the oldest half went to LTM
    records = m.agents.tables.ltm("agent_1")
    assert records and {s for r in records for s in r.source_events} >= set(first[:2])


def test_one_consolidation_per_agent_at_a_time_and_agents_in_parallel(slow):
    o, model = slow
    m = o.memory
    _fill(o, "agent_1", 4)
    _fill(o, "agent_2", 4)
    assert model.wait_active("agent_1", "agent_2")  # two workers, two agents at once
    forced = threading.Thread(target=m.consolidate, args=("agent_1",), kwargs={"force": True}, daemon=True)
    forced.start()
    assert m.pool.locks.wait_users("agent_1", 2, HANG)  # queued on agent_1's lock, behind the pool's worker
    assert model.most["agent_1"] == 1
    model.release.set()
    forced.join(HANG)
    assert not forced.is_alive() and m.pool.wait_idle(HANG)
    assert model.most["agent_1"] == 1 and model.most["agent_2"] == 1
    assert m.agents.tables.count_events("agent_1") == 0  # the forced one ran after, and took what was left


def test_the_cycle_queues_an_agent_when_its_interval_has_passed(tmp_path):
    o = Opened(tmp_path / "data", "duckdb", agents={"stm_base_capacity": 6, "stm_max_capacity": 6,
                                                    "stm_capacity_per_hour": 0, "consolidation_minutes": (10, 10, 10)})
    try:
        m = o.memory
        early = _fill(o, "agent_1", 4)
        assert m.pool.wait_idle(HANG) and m.pool.done == {}
        o.clock.advance(11 / 60)  # past the ten-minute cycle since the agent's first store
        m.store("agent_1", {"type": "observation", "content": "agent_1 noted the first snow"})
        assert m.pool.wait_idle(HANG)
        assert m.pool.done == {"cycle": 1} and m.pool.failed == []
        assert {s for r in m.agents.tables.ltm("agent_1") for s in r.source_events} == set(early[:2])
    finally:
        o.close()


def test_a_lease_held_by_another_process_skips_the_job(tmp_path, pg_uri):
    o = Opened(tmp_path / "data", "postgres", pg_uri, agents=SMALL)
    other = PostgresLeases(pg_uri)  # its own session: another process to the server
    try:
        m = o.memory
        with other.hold("agents.consolidate:agent_1") as got:
            assert got
            _fill(o, "agent_1", 4)
            assert m.pool.wait_idle(HANG)
            assert m.pool.skipped == 1 and m.agents.tables.count_ltm("agent_1") == 0
            with pytest.raises(LeaseBusy):
                m.consolidate("agent_1", force=True, wait=0)
        assert m.consolidate("agent_1", force=True) > 0
        assert m.agents.tables.count_events("agent_1") == 0
    finally:
        other.close()
        o.close()
