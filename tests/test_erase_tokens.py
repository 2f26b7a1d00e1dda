"""An erase confirmation token works once (issue 44): the data dir records the tokens that erased, so a
replayed token is refused with a clear error; an erasure killed half-way is still finished by recovery, and
the user can erase again with a new token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.erasure import USED_TOKENS_DIR, check_token, make_token
from lumina_memory.stores.errors import InvalidInput

REPO = Path(__file__).resolve().parents[1]
KEY = b"k" * 32


def test_a_token_is_refused_the_second_time(tmp_path):
    token, _ = make_token(KEY, "alice", 60, now=1_000)
    check_token(KEY, "alice", token, now=1_010, consume_in=tmp_path)
    with pytest.raises(InvalidInput, match="already used") as err:
        check_token(KEY, "alice", token, now=1_020, consume_in=tmp_path)
    assert err.value.field == "token"
    used = tmp_path / USED_TOKENS_DIR
    assert used.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in used.iterdir())
    assert "alice" not in " ".join(p.name for p in used.iterdir())


def test_a_refused_token_is_not_used_up_and_two_plans_give_two_tokens(tmp_path):
    token, _ = make_token(KEY, "alice", 60, now=1_000)
    for user, now in (("alice2", 1_010), ("alice", 1_061)):  # another user's, or expired: refused, not recorded
        with pytest.raises(InvalidInput):
            check_token(KEY, user, token, now=now, consume_in=tmp_path)
    check_token(KEY, "alice", token, now=1_010, consume_in=tmp_path)
    again, _ = make_token(KEY, "alice", 60, now=1_000)  # same user, same second: still a token of its own
    assert again != token
    check_token(KEY, "alice", again, now=1_010, consume_in=tmp_path)


def test_a_token_used_by_two_threads_at_once_erases_once(tmp_path):
    token, _ = make_token(KEY, "alice", 60)
    outcomes: list[str] = []
    start = threading.Barrier(4)

    def use():
        start.wait()
        try:
            check_token(KEY, "alice", token, consume_in=tmp_path)
            outcomes.append("ok")
        except InvalidInput:
            outcomes.append("refused")

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok", "refused", "refused", "refused"]


def test_records_of_long_expired_tokens_are_pruned(tmp_path):
    old, _ = make_token(KEY, "alice", 60, now=1_000)
    check_token(KEY, "alice", old, now=1_010, consume_in=tmp_path)
    fresh, _ = make_token(KEY, "bob", 60, now=1_000_000)
    check_token(KEY, "bob", fresh, now=1_000_010, consume_in=tmp_path)
    names = os.listdir(tmp_path / USED_TOKENS_DIR)
    assert len(names) == 1 and names[0].startswith("1000060.")
    with pytest.raises(InvalidInput, match="expired"):  # the pruned one is refused by its expiry anyway
        check_token(KEY, "alice", old, now=1_000_010, consume_in=tmp_path)


def test_erase_user_refuses_a_replayed_token_and_takes_a_new_one(memory):
    services = memory.services
    replay(memory.graph, "carol", [{"speaker": "user", "text": f"話題 {i}", "ts": 1_700_000_000 + i} for i in range(4)])
    plan = erase_plan(services, "carol")
    assert erase_user(services, "carol", plan["token"])["removed"]["archive.turn_archive"] == 4
    replay(memory.graph, "carol", [{"speaker": "user", "text": "また来た", "ts": 1_700_000_100}])
    with pytest.raises(InvalidInput, match="already used"):
        erase_user(services, "carol", plan["token"])
    assert services.stores.archive.counts("carol")["turns"] == 1  # the refusal erased nothing
    assert erase_user(services, "carol", erase_plan(services, "carol")["token"])["removed"]["archive.turn_archive"] == 1


# The child erases alice with a token and dies by SIGKILL once the archive places are erased, before the rest.
CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import lumina_memory.graphs.erase as erase
    from lumina_memory.graphs.cli import _open
    from lumina_memory.graphs.replay import replay
    from tests.conftest import make_settings

    services, graph, conn = _open(make_settings(Path(sys.argv[1])))
    replay(graph, "alice", [{"speaker": "user", "text": f"話題その{i}", "ts": 1_700_000_000 + 60 * i} for i in range(6)])

    def archive_then_die(places, user_id):
        for place in places:
            if place.name.startswith("archive."):
                place.erase(user_id)
        services.stores.archive._db.live().execute("CHECKPOINT")
        os.kill(os.getpid(), signal.SIGKILL)

    erase.erase_places = archive_then_die
    plan = erase.erase_plan(services, "alice")
    Path(sys.argv[2]).write_text(plan["token"])
    erase.erase_user(services, "alice", plan["token"], actor="test")
""")


def test_a_token_of_an_erasure_killed_half_way_is_used_and_recovery_finishes_it(tmp_path):
    from lumina_memory.graphs.cli import _open
    from lumina_memory.graphs.erase import audit_log
    from lumina_memory.stores.erasure import erasures_in_progress
    from lumina_memory.stores.redis_server import stop_server

    from .conftest import make_settings

    data_dir, token_file = tmp_path / "data", tmp_path / "token"
    settings = make_settings(data_dir)
    try:
        child = subprocess.run([sys.executable, "-c", CHILD, str(data_dir), str(token_file)], cwd=REPO,
                               capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert child.returncode == -signal.SIGKILL, child.stderr[-3000:]
        assert erasures_in_progress(data_dir) == ["alice"]
        services, graph, conn = _open(settings)  # the open finishes the erasure, without a token
        try:
            assert erasures_in_progress(data_dir) == []
            with pytest.raises(InvalidInput, match="already used"):
                erase_user(services, "alice", token_file.read_text())
            report = erase_user(services, "alice", erase_plan(services, "alice")["token"])
            assert sum(report["removed"].values()) == 0
            events = [e["actor"] for e in audit_log(services).rows() if e["event"] == "user_erased"]
            assert events == ["recovery: interrupted erasure", "api"]
            assert audit_log(services).verify()["ok"]
        finally:
            services.close()
            conn.close()
    finally:
        stop_server(settings)
