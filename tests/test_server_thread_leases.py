"""One writer per checkpoint thread in server mode: the idle-segment sweep flushes a thread only under its
``thread:<id>`` lease, and the CLI writes a thread (a chat turn, an import) only under the same lease. A lease held
by another session of the server (another process) makes the sweep skip that thread, reported with the reason,
while it flushes the others; the CLI's import waits for the lease and writes after it is released. Two CLI
"processes" (Services of their own) and a third leases session on one real private PostgreSQL."""

from __future__ import annotations

import threading

import pytest

from lumina_memory.graphs.cli import _ingest_rows
from lumina_memory.graphs.idle_segments import flush_idle_threads, thread_lease_name, writing_thread
from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.leases import MAX_NAME_CHARS, PostgresLeases

from .pg_server import fresh_database, pg_server, pg_uri  # noqa: F401 - fixtures
from .test_server_local_files import Cli, _rows, opened  # noqa: F401 - fixture

LATER = 1_760_000_000 + 10 * 86_400  # every thread's last turn is long idle by then


def _turns(cli: Cli, user: str) -> list:
    return cli.graph.get_state(thread_config(user)).values.get("turns") or []


def test_a_sweep_skips_the_thread_another_process_writes_and_flushes_the_others(tmp_path, pg_uri, opened):
    a = Cli(tmp_path / "a", pg_uri)
    opened.append(a)
    replay(a.graph, "alice", _rows("alice"), flush=False)  # open segments, waiting in the threads
    replay(a.graph, "bob", _rows("bob"), flush=False)
    b = Cli(tmp_path / "b", pg_uri)
    opened.append(b)
    writer = PostgresLeases(pg_uri, timeout=5.0)  # another process's session: its advisory lock is the server's
    try:
        with writer.hold(thread_lease_name("user:alice")) as got:
            assert got
            report = flush_idle_threads(b.services, now=LATER)
            assert (report["flushed"], report["turns"]) == (1, 6)  # bob's thread only
            assert [s["thread"] for s in report["skipped"]] == ["user:alice"]
            assert "another worker holds the lease" in report["skipped"][0]["reason"]
            assert len(_turns(b, "alice")) == 6 and _turns(b, "bob") == []  # alice's open segment untouched
        report = flush_idle_threads(b.services, now=LATER)  # released: the next sweep flushes it
        assert (report["flushed"], report["turns"], "skipped" in report) == (1, 6, False)
        assert _turns(b, "alice") == []
    finally:
        writer.close()


def test_a_sweep_skips_the_thread_of_a_turn_in_progress_in_another_services(tmp_path, pg_uri, opened):
    # The CLI's own lease, as its turn takes it, held by one Services' thread while the other Services sweeps.
    a = Cli(tmp_path / "a", pg_uri)
    opened.append(a)
    replay(a.graph, "carol", _rows("carol"), flush=False)
    b = Cli(tmp_path / "b", pg_uri)
    opened.append(b)
    held, done = threading.Event(), threading.Event()

    def turn() -> None:
        with writing_thread(a.services, "carol", "a chat turn"):
            held.set()
            done.wait(60)

    worker = threading.Thread(target=turn)
    worker.start()
    try:
        assert held.wait(60)
        report = flush_idle_threads(b.services, now=LATER)
        assert report["flushed"] == 0 and [s["thread"] for s in report["skipped"]] == ["user:carol"]
    finally:
        done.set()
        worker.join()
    assert flush_idle_threads(b.services, now=LATER)["flushed"] == 1


def test_an_import_waits_for_the_thread_lease_and_writes_after_it_is_released(tmp_path, pg_uri, opened):
    a = Cli(tmp_path / "a", pg_uri)
    opened.append(a)
    writer = PostgresLeases(pg_uri, timeout=5.0)
    seen_while_held: list[int] = []
    counts: dict[str, int] = {}
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with writer.hold(thread_lease_name("user:bob")) as got:
            assert got
            holding.set()
            release.wait(60)
            seen_while_held.append(len(_turns(a, "bob")) + len(a.services.stores.archive.segments("bob")))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(60)
        rows = [{**row, "user_id": "bob"} for row in _rows("bob")]
        importer = threading.Thread(target=lambda: counts.update(_ingest_rows(a.graph, rows, "importing")))
        importer.start()
        importer.join(3)
        assert importer.is_alive()  # waiting for the lease, not writing
        release.set()
        holder.join()
        importer.join(120)
        assert not importer.is_alive()
    finally:
        release.set()
        holder.join()
        writer.close()
    assert seen_while_held == [0]  # nothing of the import written while the lease was held
    assert counts == {"bob": 6} and a.services.stores.archive.segments("bob")  # written once it was released


def test_thread_lease_names_take_any_thread_id_and_refuse_broken_unicode_by_name(pg_uri):
    long_a, long_b = "user:" + "a" * 2_000, "user:" + "a" * 1_999 + "b"
    assert len(thread_lease_name(long_a)) <= MAX_NAME_CHARS
    assert thread_lease_name(long_a) != thread_lease_name(long_b)
    leases = PostgresLeases(pg_uri, timeout=5.0)
    try:
        for hostile in ("user:'; DROP TABLE checkpoints;--", "user:../alice", long_a):
            with leases.hold(thread_lease_name(hostile)) as got:
                assert got and leases.held(thread_lease_name(hostile))
        with pytest.raises(InvalidInput, match="lone surrogate"):
            thread_lease_name("user:al\ud800ice" + "x" * 600)
        with pytest.raises(InvalidInput, match="lone surrogate"):
            leases.hold(thread_lease_name("user:al\ud800ice"))
    finally:
        leases.close()
