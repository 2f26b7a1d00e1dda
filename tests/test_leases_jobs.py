"""The jobs that must happen once, under their leases (stores.leases), on the embedded mode: two maintenance runs
at once apply each batch day once; a step whose lease another worker holds says it was skipped and why, and the
next run catches up; an erasure keeps its token while its user's lease is held; an interrupted erasure, outbox
recovery and backups are left to the worker holding their lease. The leases themselves: tests/test_leases.py.
"""

from __future__ import annotations

import queue
import threading

import pytest

from lumina_memory.graphs import erase as erase_module
from lumina_memory.graphs import maintenance_graph
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, finish_interrupted_erasures
from lumina_memory.graphs.maintenance_graph import STEP_LEASES, run_maintenance
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import today_of
from lumina_memory.nodes.recovery import RECOVERY_LEASE, recover
from lumina_memory.stores.backup_location import LocalLocation
from lumina_memory.stores.erasure import erasures_in_progress, mark_erasure_started
from lumina_memory.stores.leases import LeaseBusy, leases_of
from lumina_memory.stores.shared_state import shared_state_of

from .test_leases import WAIT, _in_thread
from .test_lifecycle_store import DAY, T0, _rows, _state


def _filled(memory_factory):
    mem = memory_factory(lifecycle=LifecycleParams(max_protected_memories=2, ratio_min_memories=100))
    replay(mem.graph, "alice", _rows("alice"))
    replay(mem.graph, "bob", _rows("bob")[:6])
    return mem


def test_two_maintenance_runs_at_once_apply_each_batch_day_once(memory_factory):
    both, twin = _filled(memory_factory), _filled(memory_factory)
    for mem in (both, twin):
        run_maintenance(mem.services, now=T0 + DAY)
    start = threading.Barrier(2)
    reports: queue.Queue[dict] = queue.Queue()

    def run():
        start.wait(WAIT)
        reports.put(run_maintenance(both.services, now=T0 + 5 * DAY))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 10)
    runs = [reports.get(timeout=1), reports.get(timeout=1)]
    run_maintenance(twin.services, now=T0 + 5 * DAY)  # the same days, one run

    days = [r["lifecycle_days"] for r in runs]
    assert sorted(d.get("user_days", 0) for d in days) == [0, 8]  # 4 days × 2 users, applied by one run
    table = both.services.stores.archive.memories
    assert table.last_days() == {u: today_of(both.services, T0 + 5 * DAY) for u in ("alice", "bob")}
    for user in ("alice", "bob"):
        assert _state(both.services, user) == _state(twin.services, user)


def test_a_step_whose_lease_is_held_elsewhere_says_it_was_skipped(memory_factory, monkeypatch):
    mem = _filled(memory_factory)
    services = mem.services
    run_maintenance(services, now=T0 + DAY)
    monkeypatch.setattr(maintenance_graph, "LEASE_WAIT", 0.0)
    table = services.stores.archive.memories
    before = table.last_days()
    with leases_of(services).hold("lifecycle") as got:
        assert got and STEP_LEASES["lifecycle_days"] == "lifecycle"
        report = _in_thread(lambda: run_maintenance(services, now=T0 + 3 * DAY))
    assert report["lifecycle_days"]["skipped"] and "another worker" in report["lifecycle_days"]["reason"]
    assert set(report["lifecycle"]["skipped"]) == {"lifecycle_owed", "lifecycle_days", "lifecycle_reembed",
                                                   "lifecycle_relations", "lifecycle_deletions"}
    assert report["lifecycle"]["days"] == 0 and table.last_days() == before
    assert "skipped" not in report["knowledge_daily"]  # other jobs ran
    again = run_maintenance(services, now=T0 + 3 * DAY)  # the lease is free: the days owed are caught up
    assert again["lifecycle"]["user_days"] == 4 and "skipped" not in again["lifecycle"]


def test_an_erasure_waits_for_its_user_lease_and_keeps_its_token(memory_factory, monkeypatch):
    mem = _filled(memory_factory)
    services = mem.services
    monkeypatch.setattr(erase_module, "ERASE_WAIT", 0.0)
    plan = erase_plan(services, "bob")
    with leases_of(services).hold("erase:bob") as got:
        assert got
        with pytest.raises(LeaseBusy, match="erase:bob"):
            _in_thread(lambda: erase_user(services, "bob", plan["token"]))
        assert _in_thread(lambda: erase_user(services, "alice", erase_plan(services, "alice")["token"]))
    assert erase_user(services, "bob", plan["token"])["removed"]["archive.turn_archive"] == 6  # the token still works


def test_outbox_recovery_is_left_to_the_worker_holding_its_lease(memory_factory):
    services = _filled(memory_factory).services
    with leases_of(services).hold(RECOVERY_LEASE) as got:
        assert got
        report = _in_thread(lambda: recover(services, reason="test"))
    assert report["skipped"] and report["lease"] == RECOVERY_LEASE
    assert "skipped" not in recover(services, reason="test")


def test_an_interrupted_erasure_another_worker_is_finishing_is_left_to_it(memory_factory):
    services = _filled(memory_factory).services
    state = shared_state_of(services)
    mark_erasure_started(state, "bob")  # as a process killed half-way through erasing bob leaves it
    with leases_of(services).hold("erase:bob") as got:
        assert got
        assert _in_thread(lambda: finish_interrupted_erasures(services)) == []
        assert erasures_in_progress(state) == ["bob"]  # still owed, to the holder
    assert finish_interrupted_erasures(services) == ["bob"]
    assert erasures_in_progress(state) == [] and services.stores.archive.get_turns("bob", []) == []
    assert erase_plan(services, "bob")["counts"].get("archive.turn_archive", 0) == 0


def test_backups_run_one_at_a_time_and_a_busy_one_is_said(memory_factory, tmp_path, monkeypatch):
    mem = memory_factory(backup_location=str(tmp_path / "b"))
    services = mem.services
    monkeypatch.setattr(erase_module, "BACKUP_WAIT", 0.0)
    monkeypatch.setattr(maintenance_graph, "LEASE_WAIT", 0.0)
    with leases_of(services).hold("backup") as got:
        assert got
        with pytest.raises(LeaseBusy, match="backup"):
            _in_thread(lambda: backup_now(services))
        report = _in_thread(lambda: run_maintenance(services, now=T0, force=True))
        assert report["scheduled_backups"]["skipped"] and report["prune_backups"]["skipped"]
        assert backup_now(services)["id"]  # the holder itself goes on (re-entrant in its thread)
    assert len(LocalLocation(tmp_path / "b").snapshots()) == 1  # the skipped run took none
    assert run_maintenance(services, now=T0, force=True)["scheduled_backups"]["snapshot"]
    assert len(LocalLocation(tmp_path / "b").snapshots()) == 2
