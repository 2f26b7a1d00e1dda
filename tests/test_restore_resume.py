"""A restore killed half-way (kill -9) is marked in the target data dir, `doctor` says so, a second restore of
the same backup finishes it instead of refusing, and the result is the source's data id for id (issue 44).
Also one random-moment kill trial of bench.faults_backup for backup and one for restore (the full count is
`python -m bench.faults_backup --trials N`)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys

import pytest

from bench.faults import REPO, cli_env, stop_private_redis, tier_ids
from bench.faults_backup import backup_trial, prepare, restore_trial
from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.doctor import FAIL, OK, run_doctor
from lumina_memory.graphs.erase import backup_now, restore_from
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.backup import restore_mark
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

USERS = ("kay", "lou")

# A `lumina-memory restore` that SIGKILLs itself as it starts writing the segment vectors: the archive and
# the mid-term tier are restored by then, the vectors and the graph are not.
KILL_IN_VECTORS = r"""
import os, signal, sys
from lumina_memory.stores.places import vector_place
def die(self, src, is_erased):
    os.kill(os.getpid(), signal.SIGKILL)
vector_place.VectorPlace.restore = die
from lumina_memory.graphs.cli import main
sys.exit(main(["restore", "--from", sys.argv[1]]))
"""


class Dir:
    def __init__(self, data_dir):
        self.settings = make_settings(data_dir)
        self.services, self.graph, self.conn = _open(self.settings)

    def close(self):
        self.services.close()
        self.conn.close()
        stop_server(self.settings)


def _fill(d: Dir) -> None:
    for user in USERS:
        replay(d.graph, user, [{"speaker": "user" if i % 2 == 0 else "nox", "ts": 1_760_000_000 + 600 * i,
                                "text": f"{user} の旅行の話 その{i}", "source_id": f"{user}-{i}"} for i in range(12)],
               flush=True)


def _doctor_row(data_dir):
    rows = {(c.component, c.check): c for c in run_doctor(make_settings(data_dir))}
    return rows[("data dir", "restore")]


def _stats_text(services) -> str:
    from lumina_memory.graphs.cli import console, print_stats

    with console.capture() as captured:
        print_stats(services, None)
    return captured.get()


def test_a_restore_killed_half_way_is_marked_then_resumed_to_the_exact_data(tmp_path):
    src = Dir(tmp_path / "data")
    try:
        _fill(src)
        backup_now(src.services, str(tmp_path / "b"))
        backup_now(src.services, str(tmp_path / "other"))
        expected = tier_ids(src.services, list(USERS))
    finally:
        src.close()
    target = tmp_path / "target"
    run = subprocess.run([sys.executable, "-c", KILL_IN_VECTORS, str(tmp_path / "b")], cwd=REPO, env=cli_env(target),
                         capture_output=True, text=True, timeout=600)
    stop_private_redis(target)
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    mark = restore_mark(target)
    assert mark is not None and "archive.turn_archive" in mark["done"] and "vectors.segments" not in mark["done"]
    row = _doctor_row(target)
    assert row.status == FAIL and "half-restored" in row.detail
    half = Dir(target)
    try:
        assert half.services.stores.archive.counts()["turns"] > 0  # what the kill left: archive without vectors
        assert "restore not finished" in _stats_text(half.services)  # stats does not call it healthy
        with pytest.raises(InvalidInput, match="half-restored"):
            restore_from(half.services, str(tmp_path / "other"))  # another backup may not be mixed in
        report = restore_from(half.services, str(tmp_path / "b"))
        assert "archive.turn_archive" in report["resumed"] and report["restored"]["vectors.segments"] > 0
        assert restore_mark(target) is None
        assert "restore not finished" not in _stats_text(half.services)
        assert tier_ids(half.services, list(USERS)) == expected
        with pytest.raises(InvalidInput, match="empty data directory"):
            restore_from(half.services, str(tmp_path / "b"))  # finished: a third restore is refused again
    finally:
        half.close()
    assert _doctor_row(target).status == OK


def test_random_kill_trials_of_backup_and_restore(tmp_path):
    ctx = prepare(tmp_path, users=2, turns=40, seed=5)
    rng = random.Random(11)
    for _ in range(1):
        got = backup_trial(ctx, tmp_path / "backups", rng)
        assert got["problems"] == []
    for n in range(1):
        got = restore_trial(ctx, tmp_path / f"restore-{n}", rng)
        assert got["problems"] == [] and got["lost"] == 0 and got["duplicated"] == 0
