"""Leases (stores.leases): work that must happen once happens once, across threads and processes.

On the real private PostgreSQL: two holders in two processes contend and one gets the lease; kill -9 of the holder
gives it up; three processes apply each day once under it; re-entrant in a thread, exclusive across threads and
sessions; hostile and broken names; a session the server ends. On the embedded mode: the same per-thread
behaviour. The jobs under their leases: tests/test_leases_jobs.py.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest

from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.leases import (
    MAX_NAME_CHARS, LocalLeases, PostgresLeases, lease_key, open_leases,
)
from lumina_memory.stores.settings import LuminaSettings

from .pg_server import pg_server, pg_uri  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
WAIT = 30.0  # the bound of every wait below: a failure ends the test, success never sleeps it out
HOSTILE = ["../../etc/passwd", "'; DROP TABLE lumina_versions; --", "MATCH (n) DETACH DELETE n", "erase:a\x00b",
           "日本語の仕事 🧠", "x" * MAX_NAME_CHARS, " ", "%s %(x)s ?"]

HOLDER = r"""
import sys
from lumina_memory.stores.leases import PostgresLeases
leases = PostgresLeases(sys.argv[1])
with leases.hold(sys.argv[2], wait=float(sys.argv[3])) as got:
    print("got" if got else "busy", flush=True)
    sys.stdin.readline()  # held until the test writes a line (or kills this process)
print("released", flush=True)
"""


class Holder:
    """A real process holding (or failing to hold) a lease on the server, driven through its pipes."""

    def __init__(self, uri: str, name: str, wait: float = 0.0):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, uri, name, str(wait)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put("<exit>")

    def said(self) -> str:
        return self.lines.get(timeout=WAIT * 2)  # the child's start-up included

    def let_go(self) -> None:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)


def _advisory_holders(uri: str, name: str) -> list[int]:
    """Backend pids holding ``name``'s advisory lock, read from pg_locks (a bigint key is classid:objid)."""
    key = lease_key(name) & 0xFFFF_FFFF_FFFF_FFFF
    with psycopg.connect(uri, autocommit=True) as con:
        rows = con.execute("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
                           "AND classid::bigint = %s AND objid::bigint = %s", [key >> 32, key & 0xFFFF_FFFF]).fetchall()
    return [r[0] for r in rows]


@pytest.fixture(params=["local", "postgres"])
def make_leases(request):
    """A factory of lease objects on one engine: local ones share one process registry; postgres ones are
    separate sessions of the test's own database (two of them contend as two processes would)."""
    opened: list = []
    if request.param == "local":
        shared = LocalLeases()
        yield lambda: shared
        return
    uri = request.getfixturevalue("pg_uri")

    def make():
        opened.append(PostgresLeases(uri))
        return opened[-1]

    yield make
    for leases in opened:
        leases.close()


def _in_thread(fn):
    """``fn()`` run in another thread (a lease held here is someone else's there); its result or its error."""
    out: list = []

    def run():
        try:
            out.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            out.append((False, exc))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(WAIT * 4)
    assert not thread.is_alive()
    ok, value = out[0]
    if not ok:
        raise value
    return value


def _try(leases, name: str, wait: float = 0.0) -> bool:
    with leases.hold(name, wait=wait) as got:
        return got


# --- the adapters -------------------------------------------------------------------------------------------
def test_two_processes_contend_and_only_one_gets_the_lease(pg_uri):
    first, second = Holder(pg_uri, "daily-batch"), Holder(pg_uri, "daily-batch")
    try:
        assert sorted([first.said(), second.said()]) == ["busy", "got"]
        assert len(_advisory_holders(pg_uri, "daily-batch")) == 1
        here = PostgresLeases(pg_uri)
        assert not _try(here, "daily-batch")  # a third session is refused too
        assert _try(here, "another-job")  # other names are free
        for holder in (first, second):
            holder.let_go()
        assert {first.said(), second.said()} == {"released"}
        assert _advisory_holders(pg_uri, "daily-batch") == []
        assert _try(here, "daily-batch")
        here.close()
    finally:
        first.stop()
        second.stop()


def test_kill_9_of_the_holder_gives_the_lease_up(pg_uri):
    holder = Holder(pg_uri, "outbox-recovery")
    here = PostgresLeases(pg_uri)
    try:
        assert holder.said() == "got"
        assert len(_advisory_holders(pg_uri, "outbox-recovery")) == 1
        assert not _try(here, "outbox-recovery")
        os.kill(holder.proc.pid, signal.SIGKILL)
        assert holder.proc.wait(WAIT) == -signal.SIGKILL
        # The server ends the dead client's session and its locks with it; the hold polls until then.
        assert _try(here, "outbox-recovery", wait=WAIT)
        with here.hold("outbox-recovery") as got:
            assert got and len(_advisory_holders(pg_uri, "outbox-recovery")) == 1
    finally:
        holder.stop()
        here.close()


WORKER = r"""
import os, sys, time
import psycopg
from lumina_memory.stores.leases import PostgresLeases
uri, days = sys.argv[1], int(sys.argv[2])
leases = PostgresLeases(uri)
with psycopg.connect(uri, autocommit=True) as con:
    print("ready", flush=True)
    sys.stdin.readline()  # every worker starts at once
    for day in range(1, days + 1):
        with leases.hold("daily-batch", wait=30.0) as got:
            assert got, "a bounded wait ran out"
            last = con.execute("SELECT coalesce(max(day), 0) FROM applied").fetchone()[0]  # re-read inside
            if last < day:
                time.sleep(0.005)  # a batch's work between the check and the write
                con.execute("INSERT INTO applied VALUES (%s, %s)", [day, os.getpid()])
print("done", flush=True)
"""


def test_workers_in_three_processes_apply_each_day_once_under_the_lease(pg_uri):
    with psycopg.connect(pg_uri, autocommit=True) as con:
        con.execute("CREATE TABLE applied (day BIGINT, pid BIGINT)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, pg_uri, "40"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    try:
        assert [w.stdout.readline().strip() for w in workers] == ["ready"] * 3
        for worker in workers:
            worker.stdin.write("go\n")
            worker.stdin.flush()
        assert [w.communicate(timeout=WAIT * 4)[0].strip() for w in workers] == ["done"] * 3
        assert [w.returncode for w in workers] == [0, 0, 0]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(WAIT)
    with psycopg.connect(pg_uri, autocommit=True) as con:
        days = con.execute("SELECT day, count(*) FROM applied GROUP BY day ORDER BY day").fetchall()
    assert days == [(day, 1) for day in range(1, 41)]


def test_a_lease_is_reentrant_in_its_thread_and_exclusive_across_threads_and_sessions(make_leases):
    leases, other_session = make_leases(), make_leases()
    with leases.hold("backup") as outer:
        with leases.hold("backup", wait=True) as inner:
            assert outer and inner and leases.held("backup")
        assert leases.held("backup")  # the outer hold still has it
        assert not _in_thread(lambda: _try(leases, "backup"))
        assert not _in_thread(lambda: _try(other_session, "backup"))
    assert not leases.held("backup")
    assert _in_thread(lambda: _try(leases, "backup"))
    assert _in_thread(lambda: _try(other_session, "backup"))


def test_a_waiting_holder_gets_the_lease_once_it_is_released(make_leases):
    leases, other_session = make_leases(), make_leases()
    release = threading.Event()
    results: queue.Queue[bool] = queue.Queue()

    def waiter():
        release.set()
        results.put(_try(other_session, "knowledge:review", wait=WAIT))

    with leases.hold("knowledge:review") as got:
        assert got
        thread = threading.Thread(target=waiter)
        thread.start()
        release.wait(WAIT)
    assert results.get(timeout=WAIT * 2) is True
    thread.join(WAIT)


def test_a_failed_hold_leaves_nothing_held(make_leases):
    leases, other_session = make_leases(), make_leases()
    with other_session.hold("retention") as got:
        assert got and not _in_thread(lambda: _try(leases, "retention"))
        assert leases.held("retention") is (leases is other_session)  # the server refused: no local hold kept
    assert _in_thread(lambda: _try(leases, "retention"))


def test_hostile_names_are_leases_like_any_other(make_leases):
    leases, other_session = make_leases(), make_leases()
    assert len({lease_key(n) for n in HOSTILE}) == len(HOSTILE)
    with ExitStack() as stack:
        assert all(stack.enter_context(leases.hold(n)) for n in HOSTILE)
        assert not any(_in_thread(lambda n=n: _try(other_session, n)) for n in HOSTILE)
    assert all(_in_thread(lambda n=n: _try(other_session, n)) for n in HOSTILE)


@pytest.mark.parametrize("name", ["", "\ud800", "lease\udfff", "x" * (MAX_NAME_CHARS + 1), None, 42, b"bytes"])
def test_a_broken_name_is_a_named_error_and_holds_nothing(make_leases, name):
    leases = make_leases()
    with pytest.raises(InvalidInput, match="lease name"):
        with leases.hold(name):
            pass
    with pytest.raises(InvalidInput, match="lease name"):
        lease_key(name)


@pytest.mark.parametrize("wait", [-1, float("nan"), "5"])
def test_a_broken_wait_is_a_named_error(make_leases, wait):
    with pytest.raises(InvalidInput, match="lease wait"):
        with make_leases().hold("backup", wait=wait):
            pass


def test_lease_keys_are_the_same_in_every_process():
    code = "import sys; from lumina_memory.stores.leases import lease_key; print([lease_key(n) for n in sys.argv[1:]])"
    names = [n for n in HOSTILE if "\x00" not in n]  # argv cannot carry NUL
    out = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}, timeout=WAIT * 2)
    assert out.stdout.strip() == str([lease_key(n) for n in names])
    assert all(-(2 ** 63) <= lease_key(n) < 2 ** 63 for n in names)


def test_a_session_the_server_ends_gives_its_leases_up_and_the_next_hold_reconnects(pg_uri, caplog):
    leases, other = PostgresLeases(pg_uri), PostgresLeases(pg_uri)
    try:
        with leases.hold("knowledge:consolidation") as got:
            assert got
            [pid] = _advisory_holders(pg_uri, "knowledge:consolidation")
            with psycopg.connect(pg_uri, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            assert _try(other, "knowledge:consolidation", wait=WAIT)  # the server let it go with the session
        assert "released by the session's end" in caplog.text  # the holder's release says so, raises nothing
        assert _try(leases, "knowledge:consolidation")  # a new session
    finally:
        leases.close()
        other.close()


def test_a_server_that_is_down_is_a_named_error(tmp_path):
    with pytest.raises(StoreUnavailable, match="leases"):
        PostgresLeases(f"postgresql://postgres@/postgres?host={tmp_path}", timeout=2)


def test_open_leases_follows_the_settings(tmp_path, pg_uri):
    embedded = LuminaSettings(data_dir=tmp_path / "a")
    assert isinstance(open_leases(embedded), LocalLeases)
    assert open_leases(embedded) is open_leases(LuminaSettings(data_dir=tmp_path / "a"))  # one per memory
    assert open_leases(LuminaSettings(data_dir=tmp_path / "b")) is not open_leases(embedded)
    server = open_leases(LuminaSettings(data_dir=tmp_path / "c", database_url=pg_uri))
    try:
        assert isinstance(server, PostgresLeases)
        with server.hold("daily-batch") as got:
            assert got and len(_advisory_holders(pg_uri, "daily-batch")) == 1
    finally:
        server.close()
