"""F9's fallback: the first conversation turn after a missed 03:00 batch runs the user's missed days, in the
background and once; ``interval_hours`` decides when a batch counts as missed. The clock is the turns' own time."""

from __future__ import annotations

from datetime import datetime

import pytest

from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.nodes.lifecycle.catch_up import catch_up_if_owed, owed, wait_for_catch_ups
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle, today_of

JST = "+09:00"


def at(text: str) -> float:
    return datetime.fromisoformat(text + JST).timestamp()


T0 = at("2026-01-01T09:00")


def _rows(user: str) -> list[dict]:
    texts = ("猫のムギが最近よく寝ている。今日は雨で少し退屈だった", "来月から朝のジョギングを始めることにした。決めたからにはやる")
    return [{"speaker": "user" if i % 2 == 0 else "lumina", "text": f"{text[:14]}、その{i}", "ts": T0 + k * 7200 + i * 60}
            for k, text in enumerate(texts) for i in range(4)]


@pytest.fixture
def batched(memory_factory):
    """alice and bob with memories, both batched through 2 January (the batch day of 2 January 09:00 JST)."""
    mem = memory_factory(lifecycle=LifecycleParams(ratio_min_memories=100))
    for user in ("alice", "bob"):
        replay(mem.graph, user, _rows(user))
        mem.graph.invoke({"flush": True}, thread_config(user), context={"user_id": user, "respond": False})
    assert run_lifecycle(mem.services, now=at("2026-01-02T09:00"))["user_days"] == 2
    return mem


def _last_days(services) -> dict[str, int | None]:
    """user -> last completed batch day, for users behind the far future (every user)."""
    return services.stores.archive.memories.due_users(10**9)


def _say(mem, user: str, ts: float, respond: bool = True) -> None:
    mem.graph.invoke({"turn": {"speaker": "user", "text": "おはよう、今日も寒いね", "ts": ts}},
                     {"configurable": {"thread_id": f"t-{user}"}}, context={"user_id": user, "respond": respond})


def test_a_batch_counts_as_missed_interval_hours_after_its_scheduled_time(batched):
    services = batched.services
    day2 = today_of(services, at("2026-01-02T09:00"))
    assert owed(services, "alice", at("2026-01-02T23:00")) is None  # still 2 January's batch day
    assert owed(services, "alice", at("2026-01-03T02:59")) is None  # 23 h 59 min after 2 January 03:00
    due = owed(services, "alice", at("2026-01-03T03:00"))
    assert due == {"last_day": day2, "today": day2 + 1, "hours_since": 24.0, "missed_days": 1}
    later = services.settings.model_copy(update={"lifecycle": LifecycleParams(ratio_min_memories=100, interval_hours=48)})
    services.settings = later
    assert owed(services, "alice", at("2026-01-03T10:00")) is None  # 31 h: not missed at 48
    assert owed(services, "alice", at("2026-01-04T03:00"))["hours_since"] == 48.0
    services.settings = later.model_copy(update={"lifecycle": LifecycleParams(interval_hours=0)})
    assert owed(services, "alice", at("2026-01-09T03:00")) is None  # 0: the fallback is off


def test_the_first_turn_after_missed_days_runs_them_for_that_user_once(batched):
    services = batched.services
    before = _last_days(services)
    _say(batched, "alice", at("2026-01-02T20:00"))  # nothing missed yet
    assert wait_for_catch_ups(services) == 0
    _say(batched, "alice", at("2026-01-05T10:00"))  # 3 batch days missed
    assert wait_for_catch_ups(services) == 1
    after = _last_days(services)
    assert after["alice"] == today_of(services, at("2026-01-05T10:00")) == before["alice"] + 3
    assert after["bob"] == before["bob"]  # another user's days wait for their own turn or the cron
    _say(batched, "alice", at("2026-01-05T10:05"))  # the same batch day: nothing more
    assert wait_for_catch_ups(services) == 1  # still the one thread
    assert _last_days(services)["alice"] == after["alice"]


def test_replays_and_characters_turns_never_start_the_batch(batched):
    services = batched.services
    _say(batched, "bob", at("2026-01-06T10:00"), respond=False)  # a transcript replay
    batched.graph.invoke({"turn": {"speaker": "nox", "text": "おはよう", "ts": at("2026-01-06T10:01")}},
                         {"configurable": {"thread_id": "t-bob"}}, context={"user_id": "bob"})
    assert wait_for_catch_ups(services) == 0
    assert _last_days(services)["bob"] == today_of(services, at("2026-01-02T09:00"))


def test_a_batch_already_running_elsewhere_makes_the_fallback_skip(batched):
    from lumina_memory.stores.leases import leases_of

    services = batched.services
    with leases_of(services).hold("lifecycle") as got:  # the cron's batch holds the lease
        assert got
        started = catch_up_if_owed(services, "bob", at("2026-01-07T10:00"))
        assert wait_for_catch_ups(services) == 1
    assert started["missed_days"] == 5  # owed, started, and it stepped aside for the running batch
    assert _last_days(services)["bob"] == today_of(services, at("2026-01-02T09:00"))
