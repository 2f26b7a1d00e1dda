"""Server mode: what two processes (two connections) doing the same thing at once must not break, and a closed
Services leaving nothing open on the server."""

from __future__ import annotations

import psycopg

from lumina_memory.nodes.services import open_services
from lumina_memory.stores import journal_pg
from lumina_memory.stores.activity_log_pg import PostgresActivityLog
from lumina_memory.stores.journal_pg import PostgresJournal
from lumina_memory.stores.leases import PostgresLeases, lease_key, leases_of
from lumina_memory.stores.pg_connection import PostgresConnection
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_server_mode import _ingest

SECRET = "server-races-test-secret-0123456789abcdef"


def _backends(uri: str) -> list[tuple]:
    """The server's sessions on this database other than the asking one."""
    with psycopg.connect(uri) as con:
        return con.execute("SELECT pid, application_name, state, left(query, 60) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall()


def test_a_closed_services_holds_no_backend_on_the_server(tmp_path, pg_uri):
    settings = make_settings(tmp_path / "data", database_url=pg_uri, secret_key=SECRET)
    services = open_services(settings)
    try:
        _ingest(services, "mio", [("user", "My sister Emma just moved to Lisbon."), ("lumina", "Lovely.")])
        with leases_of(services).hold("daily-batch") as got:
            assert got
        assert _backends(pg_uri)  # open: the pools and the leases' session are on the server
    finally:
        services.close()
    try:
        left = _backends(pg_uri)
        assert left == [], "\n".join(map(str, left))
    finally:
        stop_server(settings)


def test_closing_the_leases_while_one_is_held_keeps_it_until_its_release(pg_uri):
    """Two Services of one memory in a process share its leases: one closing must not free a lease the other
    holds (another worker could take it); the session ends at that lease's release, and opens again on use."""
    leases = PostgresLeases(pg_uri, timeout=5.0)
    key = lease_key("daily-batch")
    with psycopg.connect(pg_uri, autocommit=True) as other:
        try:
            with leases.hold("daily-batch") as got:
                assert got
                leases.close()
                assert other.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0] is False
            assert [b for b in _backends(pg_uri) if b[1] == "lumina-leases"] == []
            assert other.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0] is True
            with leases.hold("daily-batch") as got:
                assert got is False  # the other worker holds it now
            other.execute("SELECT pg_advisory_unlock(%s)", [key])
            with leases.hold("daily-batch") as got:
                assert got
        finally:
            leases.close()
    assert [b for b in _backends(pg_uri) if b[1] == "lumina-leases"] == []


def test_a_closed_activity_log_and_journal_open_again_on_use(pg_uri):
    log = PostgresActivityLog(PostgresConnection(pg_uri, "activity", timeout=5.0, pool_size=2), timeout=5.0)
    journal = PostgresJournal(PostgresConnection(pg_uri, "journal", timeout=5.0, pool_size=2), timeout=5.0)
    try:
        log.append("mio", "recall", at=1.0)
        entry = journal.open("mio", "reply-1")
        journal_pg.close_sessions(pg_uri)  # a reply in flight keeps the owner lock's session
        assert journal._liveness.in_flight == 1
        with psycopg.connect(pg_uri) as con:
            assert con.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0] == 1
        entry.write("hello")
        entry.finish()
        entry.finish()  # counted out once
        assert journal._liveness.in_flight == 0
        log.close()
        journal._liveness.close()
        assert log.events("mio")[0]["at"] == 1.0  # the log opens its connection again
        log.append("mio", "recall", at=2.0)
        assert [e["at"] for e in log.events("mio")] == [1.0, 2.0]
    finally:
        log.close()
        journal.close()
        journal._liveness.close()
