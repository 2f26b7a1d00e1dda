"""A11 in server mode (stores.journal_pg): the reply journal as rows on the real private PostgreSQL. A reply a
killed process was writing is recovered by another process, once; a live process's replies are never taken."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from lumina_memory.stores.journal_pg import PostgresJournal
from lumina_memory.stores.pg_connection import PostgresConnection

from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
HOSTILE = "'; DROP TABLE lumina_journal; --"


@pytest.fixture
def journal(pg_uri):
    opened = PostgresJournal(PostgresConnection(pg_uri, "journal"), flush_seconds=60, flush_chars=10)
    yield opened
    opened.close()


def test_a_reply_is_journalled_as_it_streams_and_goes_when_complete(journal):
    entry = journal.open("kim", "r1", redact=lambda t: t.replace("555-0100", "[PHONE]"), character="lumina")
    entry.write("call me at 555-0100 ")  # over flush_chars: flushed, redacted
    entry.write("ok")  # buffered
    held = journal.read(entry.path)
    assert held["text"] == "call me at [PHONE] " and held["chunks"] == 1 and held["character"] == "lumina"
    entry.flush()
    assert journal.read(entry.path)["text"].endswith("ok") and journal.count("kim") == 1
    assert journal.orphans() == []  # this process's own replies are never orphans
    entry.finish()
    assert journal.read(entry.path) is None and journal.count("kim") == 0
    again = journal.open("kim", "r1")  # a retried reply starts over
    again.write("x" * 12)
    assert journal.read(again.path)["text"] == "x" * 12


def test_users_are_apart_and_hostile_ids_are_plain_values(journal):
    for user in ("kim", HOSTILE, "日本"):
        journal.open(user, "r1").write("t" * 20)
    assert journal.count("kim") == journal.count(HOSTILE) == 1
    assert journal.erase(HOSTILE) == 1
    assert journal.count(HOSTILE) == 0 and journal.count("kim") == 1 and journal.count("日本") == 1
    journal.scrub()
    assert journal.count("kim") == 1


CHILD = textwrap.dedent("""
    import sys, time
    from lumina_memory.stores.journal_pg import PostgresJournal
    from lumina_memory.stores.pg_connection import PostgresConnection

    journal = PostgresJournal(PostgresConnection(sys.argv[1], "journal"), flush_seconds=60, flush_chars=5)
    entry = journal.open("kim", "reply-1", character="lumina")
    entry.write("モカは3歳の茶トラ")
    print("ready", flush=True)
    time.sleep(600)
""")


def _wait_for(predicate, what: str, limit: float = 60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def test_a_killed_process_reply_is_recovered_by_another_once(pg_uri, journal):
    child = subprocess.Popen([sys.executable, "-c", CHILD, pg_uri], cwd=REPO, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert child.stdout.readline().strip() == "ready"
        assert journal.count("kim") == 1
        assert journal.orphans() == [] and journal.recover_orphans() == []  # alive: left alone
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    _wait_for(journal.orphans, "the dead process's reply is seen as an orphan")
    other = PostgresJournal(PostgresConnection(pg_uri, "journal"))
    try:
        results: list = []
        threads = [threading.Thread(target=lambda j=j: results.append(j.recover_orphans())) for j in (journal, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        recovered = [entry for found in results for entry in found]
        assert len(recovered) == 1  # of two processes recovering at once, one reports it
        assert recovered[0]["text"] == "モカは3歳の茶トラ" and recovered[0]["user"] == "kim"
        assert recovered[0]["reply_id"] == "reply-1" and recovered[0]["character"] == "lumina"
        assert journal.count("kim") == 0 and other.recover_orphans() == []
    finally:
        other.close()


def test_server_settings_open_one_journal_and_log_per_database(tmp_path, pg_uri):
    """The places' registry (stores.places) and the nodes (stores.factory) open the journal and the activity log
    from the settings: in server mode their PostgreSQL tables, one of each per database and process."""
    from lumina_memory.stores import factory
    from lumina_memory.stores.activity_log_pg import PostgresActivityLog
    from lumina_memory.stores.places import _module_places

    from .conftest import make_settings

    settings = make_settings(tmp_path / "data", database_url=pg_uri)
    opened, log = factory.open_journal(settings), factory.open_activity_log(settings)
    places = _module_places(settings)
    assert opened in places and log in places
    try:
        assert isinstance(opened, PostgresJournal) and opened is PostgresJournal.for_settings(settings)
        assert isinstance(log, PostgresActivityLog) and log is PostgresActivityLog.for_settings(settings)
        opened.open("kim", "r1").write("x" * 600)
        log.append("kim", "turns", count=1)
        assert opened.count("kim") == 1 and log.count("kim") == 1
        assert not (tmp_path / "data").exists()  # nothing of either is a file in server mode
    finally:
        opened.close()
        log.close()
