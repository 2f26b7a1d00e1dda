"""An erasure killed half-way (kill -9 after the archive was erased, before the checkpoints were): until
it is finished nothing is ingested for the id, and the next open of the data directory finishes it.

Before the fix a flush on the user's thread archived the open segment's turns again from the checkpoint
that still held them, and nothing ever finished the erasure.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import audit_log, erase_plan
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import thread_config
from lumina_memory.stores.erasure import erasures_in_progress, mark_erasure_finished, mark_erasure_started
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

REPO = Path(__file__).resolve().parents[1]
ERASED, KEPT = "alice", "bob"

# The child ingests both users (their last segments stay open in the checkpoint), then erases alice and
# dies by SIGKILL right after the archive places were erased, before any other place was.
CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import lumina_memory.graphs.erase as erase
    from lumina_memory.graphs.cli import _open
    from lumina_memory.graphs.replay import replay
    from tests.conftest import make_settings

    settings = make_settings(Path(sys.argv[1]))
    services, graph, conn = _open(settings)
    for user, mark in (("alice", "ZEBRAMARK"), ("bob", "OKAPIMARK")):
        rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "text": f"{mark} 話題その{i // 6} の{i}番目の話",
                 "ts": 1_700_000_000 + 60 * i} for i in range(40)]
        replay(graph, user, rows, flush=False)

    def archive_then_die(places, user_id):
        for place in places:
            if place.name.startswith("archive."):
                place.erase(user_id)
        services.stores.archive._db.live().execute("CHECKPOINT")
        os.kill(os.getpid(), signal.SIGKILL)

    erase.erase_places = archive_then_die
    plan = erase.erase_plan(services, "alice")
    erase.erase_user(services, "alice", plan["token"], actor="test")
""")


def _counts(services, user: str) -> dict[str, int]:
    with open_registry(services) as places:
        return {p.name: p.count(user) for p in places if p.name != "cache.embedder"}


def test_ingest_is_refused_while_an_erasure_is_unfinished(tmp_path):
    settings = make_settings(tmp_path / "data")
    services, graph, conn = _open(settings)
    try:
        data_dir = settings.resolved_data_dir()
        mark_erasure_started(data_dir, ERASED)
        turn = {"turn": {"speaker": "user", "text": "こんにちは"}}
        with pytest.raises(InvalidInput) as refused:
            graph.invoke(turn, thread_config(ERASED), context={"user_id": ERASED, "respond": False})
        assert refused.value.field == "user_id" and "being erased" in str(refused.value)
        assert services.stores.archive.counts(ERASED) == {"turns": 0, "segments": 0}
        graph.invoke(turn, thread_config(KEPT), context={"user_id": KEPT, "respond": False})  # others go on
        mark_erasure_finished(data_dir, ERASED)
        graph.invoke(turn, thread_config(ERASED), context={"user_id": ERASED, "respond": False})
        assert erasures_in_progress(data_dir) == []
    finally:
        services.close()
        conn.close()
        stop_server(settings)


def test_an_erasure_killed_half_way_is_finished_at_the_next_open(tmp_path):
    data_dir = tmp_path / "data"
    # The open's idle sweep would encode the kept user's quiet thread and refill the process's text caches, which
    # the erased user's count includes (they are not filed by user): the sweep has tests of its own.
    settings = make_settings(data_dir).model_copy(update={"idle_sweep_on_open": False})
    try:
        child = subprocess.run([sys.executable, "-c", CHILD, str(data_dir)], cwd=REPO, capture_output=True,
                               text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert child.returncode == -signal.SIGKILL, child.stderr[-3000:]
        assert erasures_in_progress(data_dir) == [ERASED]  # the dead process left the erasure marked
        stop_server(settings)  # as after a reboot: the private Redis went with the machine

        services, graph, conn = _open(settings)  # the open finishes the erasure
        try:
            assert erasures_in_progress(data_dir) == []
            assert {k: v for k, v in _counts(services, ERASED).items() if v} == {}
            kept = _counts(services, KEPT)
            assert kept["archive.turn_archive"] > 0 and kept["checkpoints"] == 1
            # The thread's open segment went with the checkpoints: a flush on it archives nothing.
            graph.invoke({"flush": True}, thread_config(ERASED), context={"user_id": ERASED, "respond": False})
            assert services.stores.archive.counts(ERASED) == {"turns": 0, "segments": 0}
            events = [e for e in audit_log(services).rows() if e["event"] == "user_erased"]
            assert [e["actor"] for e in events] == ["recovery: interrupted erasure"]
            # The id is free again once the erasure is done.
            assert erase_plan(services, ERASED)["counts"]["archive.turn_archive"] == 0
        finally:
            services.close()
            conn.close()
    finally:
        stop_server(settings)
