"""A10 on both engines: the activity log as the data dir's files (stores.activity_log) and as rows on the real
private PostgreSQL (stores.activity_log_pg). Same behaviour, same backup files, users apart, hostile ids inert."""

from __future__ import annotations

import threading

import pytest

from lumina_memory.stores.activity_log import ActivityLog
from lumina_memory.stores.activity_log_pg import PostgresActivityLog
from lumina_memory.stores.pg_connection import PostgresConnection

from .engine_fixture import closed_after
from .pg_server import fresh_database, pg_server, pg_uri  # noqa: F401 - fixtures

HOSTILE = ["'; DROP TABLE lumina_activity; --", "../../etc/passwd", "MATCH (n) DETACH DELETE n"]


def _open(kind, tmp_path, request):
    if kind == "dir":
        return ActivityLog(tmp_path / "activity")
    return PostgresActivityLog(PostgresConnection(request.getfixturevalue("pg_uri"), "activity"))


@pytest.fixture(params=["dir", "postgres"])
def log(request, tmp_path):
    yield from closed_after(_open(request.param, tmp_path, request))


def test_events_are_read_back_per_user_in_order(log):
    for user in ("alice", "alice2", *HOSTILE):
        log.append(user, "turns", count=1, at=100.0)
        log.append(user, "recall", query="モカ \x00 🙂", at=101.0)
        log.append(user, "reply", chars=3, at=102.0)
    assert [e["event"] for e in log.events("alice")] == ["turns", "recall", "reply"]
    assert [e["event"] for e in log.recent("alice", 2)] == ["recall", "reply"]
    assert [e["event"] for e in log.recent("alice", 10, events=("turns", "reply"))] == ["turns", "reply"]
    assert log.recent("alice", 0) == []
    assert log.events("alice")[1]["query"] == "モカ \x00 🙂"
    for user in HOSTILE:  # stored as values, never read as syntax
        assert log.count(user) == 3 and {e["user"] for e in log.events(user)} == {user}
    assert log.count("alice2") == 3 and log.count("nobody") == 0


def test_retention_prunes_old_events(log):
    for at in (100.0, 200.0, 300.0):
        log.append("u", "turns", at=at)
    log.append("v", "turns", at=50.0)
    assert log.prune(older_than=250.0) == 3
    assert [e["at"] for e in log.events("u")] == [300.0]
    assert log.count("v") == 0


@pytest.mark.parametrize("target", ["dir", "postgres"])
def test_erase_export_and_restore_across_engines(log, tmp_path, request, target):
    for user in ("alice", "alice2", "bob"):
        log.append(user, "turns", count=1, at=10.0)
        log.append(user, "recall", items=2, at=11.0)
    backup = tmp_path / "backup"
    assert log.export(backup) == 6
    assert log.erase("alice") == 2 and log.count("alice") == 0 and log.count("alice2") == 2
    log.scrub()
    assert log.forget_in_export(backup, "bob") == 2
    server = request.getfixturevalue("pg_server") if target == "postgres" else None
    name, uri = fresh_database(server) if server else (None, None)
    fresh = PostgresActivityLog(PostgresConnection(uri, "activity")) if uri else ActivityLog(tmp_path / "restored")
    try:
        assert fresh.restore(backup, lambda user: user == "alice") == 2
        assert fresh.count("alice") == 0 and fresh.count("alice2") == 2 and fresh.count("bob") == 0
        assert [e["event"] for e in fresh.events("alice2")] == ["turns", "recall"]
        assert fresh.restore(backup, lambda user: user == "alice") == 2  # again: replaced, not doubled
        assert fresh.count("alice2") == 2
    finally:
        if uri:
            fresh.close()
            server.drop_database(name)


def test_two_processes_append_to_one_log(pg_uri):
    first = PostgresActivityLog(PostgresConnection(pg_uri, "activity"))
    second = PostgresActivityLog(PostgresConnection(pg_uri, "activity"))
    try:
        def write(target, tag):
            for i in range(30):
                target.append("kim", "turns", writer=tag, n=i)

        threads = [threading.Thread(target=write, args=(obj, tag)) for obj, tag in ((first, "a"), (second, "b"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seen = second.events("kim")
        assert len(seen) == 60
        for tag in ("a", "b"):  # each writer's events in its own order
            assert [e["n"] for e in seen if e["writer"] == tag] == list(range(30))
        assert first.recent("kim", 1)[0] == seen[-1]
    finally:
        first.close()
        second.close()
