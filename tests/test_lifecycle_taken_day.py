"""A batch day another worker applied first (in server mode, another process between our read of the due users
and our write) is skipped and reported, never applied twice and never an error that stops the maintenance."""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle import run as lifecycle_run
from lumina_memory.nodes.lifecycle.compress import compressor_for

from .test_lifecycle_e2e import DAY, T0, USER, conversation


def test_a_day_applied_by_another_worker_meanwhile_is_skipped_and_reported(memory_factory):
    mem = memory_factory()
    replay(mem.graph, USER, conversation(USER))
    services = mem.services
    table = services.stores.archive.memories
    now = T0 + 3 * DAY
    today = lifecycle_run.today_of(services, now)
    due = table.due_users(today, None)
    assert USER in due
    first_day = today if due[USER] is None else due[USER] + 1
    taken = []

    def other_worker_first(done: int, total: int) -> None:
        if not taken:  # before our first day: another worker applies it
            taken.append(lifecycle_run.run_day(services, [USER], first_day, now, compressor_for(services)))

    report = lifecycle_run.run_days(services, now=now, progress=other_worker_first)
    assert taken and taken[0]["day"] == first_day
    assert report["taken_by_others"] == 1
    assert report["days"] == today - first_day  # every other day, once
    assert table.due_users(today, None) == {}  # nothing left due
