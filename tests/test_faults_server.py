"""The server mode's multi-process trials (bench.faults_server), small, on the real private PostgreSQL with pgvector
and real processes: kill -9 of a lone CLI import, and of one of three concurrent imports while the two others go
on, then a re-run, compared id by id with a single-process reference; a ``langgraph dev`` server, the CLI and a
plain Python process importing at once and recalling each other's users, the server's next recall finding another
process's new write; two ``maintain`` processes at once applying each batch day once.
"""

from __future__ import annotations

import threading

import pytest

from bench.faults import generate
from bench.faults_server import kill_trials
from bench.faults_server_concurrent import concurrent_kill_trials, generate_shared
from bench.faults_server_maintain import two_maintains
from bench.faults_server_trio import FACTS, conversation, three_processes
from tests.pg_server import fresh_database, pg_server  # noqa: F401 - fixture


class Databases:
    """bench.faults_server's ``pg.database(name)`` on the test server: fresh databases, dropped afterwards."""

    def __init__(self, server):
        self.server, self.names = server, []

    def database(self, name: str) -> str:
        created, uri = fresh_database(self.server)
        self.names.append(created)
        return uri

    def drop(self) -> None:
        for name in self.names:
            self.server.drop_database(name)


@pytest.fixture
def databases(pg_server):  # noqa: F811 - the fixture imported above
    dbs = Databases(pg_server)
    yield dbs
    dbs.drop()


@pytest.fixture
def transcript(tmp_path):
    file = tmp_path / "import.jsonl"
    return file, generate(file, users=3, turns=40, seed=47)


def test_three_kill_9_of_a_server_mode_import_then_a_rerun_lose_and_duplicate_nothing(tmp_path, databases, transcript):
    file, users = transcript
    report = kill_trials(file, tmp_path, databases, users, trials=3, seed=47)
    assert report["trials"] == 3 and report["killed mid-import"] == 3, report
    assert (report["lost"], report["duplicated"], report["bad trials"]) == (0, 0, []), report
    ref = report["reference ids"]
    assert ref["archive turns"] == 40 and ref["turn points"] == 40, ref
    assert ref["archive segments"] == ref["mid-term"] == ref["long-term"] > 0, ref
    assert ref["graph mentions"] > 0, ref


def test_langgraph_dev_the_cli_and_a_python_process_share_one_memory_at_once(tmp_path, databases):
    report = three_processes(tmp_path / "trio", databases.database("trio"))
    turns = len(conversation("team"))
    assert (report["lost"], report["duplicated"]) == (0, 0), report
    # the shared transcript, imported by all three at once, is there once
    assert {u: c["turns"] for u, c in report["per user"].items()} == dict.fromkeys(FACTS, turns), report
    assert all(c["segments"] == c["mid-term"] == c["long-term"] == 2 for c in report["per user"].values()), report
    for process, seen in report["recalls"].items():
        assert [p["found"] for p in seen] == [True, True, True, False], (process, seen)
    # the server's first recall after another process's write finds it, though it had recalled for that user before
    fresh = report["langgraph dev recall after a CLI write"]
    assert (fresh["found before the write"], fresh["found by the first recall after it"]) == (False, True), fresh
    assert report["langgraph dev"]["command"].split()[-1] == "dev", report["langgraph dev"]
    assert report["ok"]


def test_two_maintains_at_once_apply_each_batch_day_once(tmp_path, databases, transcript):
    file, users = transcript
    report = two_maintains(tmp_path / "maintain", databases, file, users)
    assert report["maintains seen waiting at the lease"] == [2, 2], report  # both let go at once, twice
    assert report["user-days"] == {"reference": 15, "two at once": 15}, report  # 3 users × (first day + 4)
    assert report["memories the catch-up changed (reference)"] > 0, report
    assert report["differing rows"] == dict.fromkeys(report["rows"], 0), report
    assert report["rows"]["memories"] > 0 and report["rows"]["lifecycle_days"] == 3, report
    assert report["days applied twice"] == 0 and report["ok"]


def test_kill_9_of_one_of_three_concurrent_importers_then_a_rerun_equals_one_process_import(tmp_path, databases):
    # 3 users and a shared one, 20 turns each: every importer writes 40 turns, 20 of them the shared user's
    file = tmp_path / "import.jsonl"
    users = generate_shared(file, users=3, turns=80, seed=47)
    report = concurrent_kill_trials(file, tmp_path, databases, users, trials=2, seed=47)
    assert report["trials"] == 2 and report["killed mid-import"] == 2, report
    assert report["killed while both others imported"] == 2, report
    assert (report["lost"], report["duplicated"], report["bad trials"]) == (0, 0, []), report
    ref = report["reference ids"]
    assert ref["archive turns"] == 80 and ref["turn points"] == 80, ref
    assert ref["archive segments"] == ref["mid-term"] > 0 and ref["long-term"] > 0, ref
    assert ref["graph mentions"] > 0, ref


def test_three_importers_opening_the_checkpoints_of_a_fresh_database_at_once_all_open_them(databases):
    # What three importers starting together do first: the saver's migrations (CREATE INDEX CONCURRENTLY) under a
    # setup lock. One connection each, as separate processes have; the server sees no difference.
    from lumina_memory.stores.places.checkpoints_pg import PgCheckpoints

    uri, start, failed = databases.database("checkpoints"), threading.Barrier(3), []

    def open_them() -> None:
        start.wait()
        try:
            PgCheckpoints(uri).close()
        except Exception as exc:  # noqa: BLE001 - the assertion names it
            failed.append(repr(exc))

    threads = [threading.Thread(target=open_them) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    opened = PgCheckpoints(uri)
    try:
        assert opened.threads() == []  # the saver's tables are there, empty
    finally:
        opened.close()
