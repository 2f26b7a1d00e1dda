"""Mid-term is rebuildable from the archive: a Redis that lost records (the private server SIGKILLed
before its snapshot, a production server restarted without persistence) is detected — at start-up,
or when the adapter had to reconnect — repaired with each record's remaining TTL, and logged."""

from __future__ import annotations

import logging
import os
import signal
import time

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import server_status
from tests.redis_process import start_redis, stop_redis

USER = "mika"


def _segment_ids(mem) -> set[str]:
    return {s.segment_id for s in mem.services.stores.archive.segments(USER)}


def _midterm_ids(mem) -> set[str]:
    return {s.segment_id for s in mem.services.stores.midterm.recent_signals(USER, 10_000)}


def _kill_private_redis(mem) -> None:
    pid = server_status(mem.settings)["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 120  # a hang guard only: the loop ends when the server is gone
    while server_status(mem.settings)["running"] and time.monotonic() < deadline:
        time.sleep(0.05)


def test_startup_restores_what_a_killed_private_redis_lost(memory_factory, demo_rows, caplog):
    mem = memory_factory()
    replay(mem.graph, USER, demo_rows[:60])
    archived = _segment_ids(mem)
    assert archived and _midterm_ids(mem) == archived
    _kill_private_redis(mem)  # no snapshot yet: every record is gone
    mem.services.close()
    with caplog.at_level(logging.WARNING, logger="lumina.recovery"):
        mem.services = open_services(mem.settings)  # the fixture closes this one
    assert _midterm_ids(mem) == archived
    assert any("mid-term lacked" in r.getMessage() for r in caplog.records)
    ttl = mem.settings.midterm_ttl_seconds
    for segment in archived:
        assert ttl - 120 < mem.services.stores.midterm.ttl(USER, segment) <= ttl  # the TTL it had left, not a new one


def test_a_reconnect_after_a_restart_repairs_mid_term_during_the_import(memory_factory, demo_rows, caplog):
    mem = memory_factory()
    replay(mem.graph, USER, demo_rows[:50], flush=False)
    before = _segment_ids(mem)
    assert before
    _kill_private_redis(mem)
    with caplog.at_level(logging.WARNING, logger="lumina.recovery"):
        replay(mem.graph, USER, demo_rows[50:])  # the adapter restarts the server and checks it
    assert any("mid-term lacked" in r.getMessage() for r in caplog.records)
    assert _midterm_ids(mem) == _segment_ids(mem) and before < _segment_ids(mem)


def test_a_production_redis_restarted_without_persistence_is_refilled(memory_factory, demo_rows, tmp_path, caplog):
    sock = tmp_path / "prod.sock"
    server = start_redis(tmp_path, sock)  # --save "": a restart starts empty
    try:
        mem = memory_factory(redis_url=f"unix://{sock}")
        replay(mem.graph, USER, demo_rows[:50], flush=False)
        before = _segment_ids(mem)
        stop_redis(server)
        server = start_redis(tmp_path, sock)
        with caplog.at_level(logging.WARNING, logger="lumina.recovery"):
            # The first call finds the connection broken, reconnects, and reads the empty server; right
            # after it, the adapter has the archive compared with what the server kept.
            assert mem.services.stores.midterm.count(USER) == 0
        assert any("mid-term lacked" in r.getMessage() for r in caplog.records)
        assert _midterm_ids(mem) == before
        replay(mem.graph, USER, demo_rows[50:])
        assert _midterm_ids(mem) == _segment_ids(mem)
    finally:
        stop_redis(server)
