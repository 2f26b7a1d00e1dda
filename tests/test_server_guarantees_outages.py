"""Server mode when PostgreSQL is slow or down: a call fails as the named StoreUnavailable (bounded by
``database_timeout_seconds``: the pool's wait and each statement's timeout), and nothing written before is lost
once the server answers again.

"Slow" is a table another session holds under an ACCESS EXCLUSIVE lock (every statement on it waits, as behind a
long migration or VACUUM FULL); "down" is a private server of this test's own, stopped and started again; "paused" is that server's
processes stopped (SIGSTOP) and continued, as a frozen host.
"""

from __future__ import annotations

import os
import signal
import threading

import psycopg
import pytest

from lumina_memory.nodes.services import open_services
from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.postgres_server import running_pid, start_private_postgres
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_server_mode import _ingest, _recalled

SECRET = "server-outages-test-secret-0123456789abcd"
TIMEOUT = 2.0


def _settings(data_dir, uri):
    return make_settings(data_dir, database_url=uri, secret_key=SECRET, database_timeout_seconds=TIMEOUT)


def test_a_locked_table_fails_the_call_by_name_and_loses_nothing(tmp_path, pg_uri):
    settings = _settings(tmp_path / "data", pg_uri)
    services = open_services(settings)
    try:
        _ingest(services, "mio", [("user", "My sister Emma just moved to Lisbon."), ("lumina", "Lovely.")])
        with psycopg.connect(pg_uri) as holder:
            holder.execute("LOCK TABLE turn_archive IN ACCESS EXCLUSIVE MODE")  # held until the block ends
            with pytest.raises(StoreUnavailable) as err:
                services.stores.archive.counts("mio")
            assert err.value.tier == "archive" and "PostgreSQL" in str(err.value)
            with pytest.raises(StoreUnavailable) as err:  # a write waits no longer than a read
                _ingest(services, "mio", [("user", "I adopted a grey cat called Miso.")], start=1_777_100_000)
            assert err.value.tier == "archive" and "statement timeout" in str(err.value)
            holder.rollback()
        assert services.stores.archive.counts("mio")["turns"] == 2  # the same pool answers again
        # The caller sends the refused turn again: it is archived once, beside the earlier ones.
        _ingest(services, "mio", [("user", "I adopted a grey cat called Miso.")], start=1_777_100_000)
        assert services.stores.archive.counts("mio")["turns"] == 3
        assert "Miso" in _recalled(services, "mio", "What is my cat called?")
    finally:
        services.close()
        stop_server(settings)


def test_a_server_that_stops_fails_calls_by_name_and_its_data_is_whole_when_it_returns(tmp_path):
    server = start_private_postgres(tmp_path / "pg")
    uri = server.create_database("outage")
    settings = _settings(tmp_path / "data", uri)
    services = open_services(settings)
    try:
        _ingest(services, "kai", [("user", "I play the cello in a quartet."), ("lumina", "Wonderful.")])
        server.stop()
        with pytest.raises(StoreUnavailable) as err:
            services.stores.archive.counts("kai")
        assert err.value.tier == "archive"
        with pytest.raises(StoreUnavailable):
            open_services(settings)  # a new process cannot start either, and says which store
        server = start_private_postgres(tmp_path / "pg")
        assert services.stores.archive.counts("kai")["turns"] == 2
        assert "cello" in _recalled(services, "kai", "Which instrument do I play?")
    finally:
        services.close()
        server.stop()
        stop_server(settings)


def _server_processes(uri: str, root) -> list[int]:
    """The postmaster and every backend and worker of the server (as its superuser sees them)."""
    with psycopg.connect(uri) as con:
        pids = [r[0] for r in con.execute("SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()")]
    return [running_pid(root), *pids]


def test_a_paused_server_fails_the_call_by_name_within_its_bound(tmp_path):
    """The observation window is ten times database_timeout_seconds while the server stays paused: the call can
    only end in it through the client's own bound."""
    root = tmp_path / "pg"
    server = start_private_postgres(root)
    uri = server.create_database("paused")
    settings = _settings(tmp_path / "data", uri)
    services = open_services(settings)
    paused: list[int] = []
    outcome: dict = {}

    def call() -> None:
        try:
            outcome["counts"] = services.stores.archive.counts("kai")
        except StoreUnavailable as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    try:
        _ingest(services, "kai", [("user", "I play the cello in a quartet."), ("lumina", "Wonderful.")])
        for pid in _server_processes(uri, root):
            os.kill(pid, signal.SIGSTOP)
            paused.append(pid)
        worker.start()
        worker.join(10 * TIMEOUT)
        assert not worker.is_alive(), "the call still waits on the paused server"
        assert outcome["error"].tier == "archive"
    finally:
        for pid in paused:
            os.kill(pid, signal.SIGCONT)
        worker.join()
        assert services.stores.archive.counts("kai")["turns"] == 2  # nothing lost once it runs again
        services.close()
        server.stop()
        stop_server(settings)
