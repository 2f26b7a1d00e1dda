"""Every PostgreSQL session of the server mode is bounded on the client (stores.pg_watchdog), not only the
archive's: the pgvector collections' shared pool, the leases' session, the reply journal (its rows and its
liveness session), the activity log, the graph and the LangGraph store's item table. With every process of a
private server SIGSTOPped (a frozen host, which never fires its own statement_timeout), a call fails as the
named StoreUnavailable within its bound, and once the server runs again the same object answers.

The observation window is ten times the configured timeout while the server stays paused: a call can only end
in it through the client's own bound.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
import pytest

from lumina_memory.stores.activity_log_pg import PostgresActivityLog
from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.graph_pg import PostgresGraph
from lumina_memory.stores.journal_pg import PostgresJournal
from lumina_memory.stores.kv_duckdb import SqlItems
from lumina_memory.stores.leases import PostgresLeases
from lumina_memory.stores.pg_connection import PostgresConnection
from lumina_memory.stores.pg_watchdog import bounded_connection, grace, longer
from lumina_memory.stores.postgres_server import PrivatePostgres, running_pid
from lumina_memory.stores.vector_filters import PreparedPoint
from lumina_memory.stores.vectors_pg import PgVectorStore, open_pool

from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

TIMEOUT = 1.0
DIM = 4


@pytest.fixture
def server(pg_server: PrivatePostgres) -> PrivatePostgres:
    """This test process's private server (tests.pg_server): its tests run one at a time, so pausing it stops
    nobody else."""
    return pg_server


@pytest.fixture
def uri(pg_uri: str) -> str:
    return pg_uri


def _paused_outcome(server: PrivatePostgres, uri: str, call: Callable[[], Any]) -> dict[str, Any]:
    """Run ``call`` in a thread while every process of the server is stopped; what it returned or raised, and
    whether it ended within ten times the timeout. The server is continued before this returns."""
    with psycopg.connect(uri) as con:
        pids = [r[0] for r in con.execute("SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()")]
    paused: list[int] = []
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    try:
        for pid in [running_pid(server.root), *pids]:
            os.kill(pid, signal.SIGSTOP)
            paused.append(pid)
        worker.start()
        worker.join(10 * TIMEOUT)
        outcome["ended"] = not worker.is_alive()
    finally:
        for pid in paused:
            os.kill(pid, signal.SIGCONT)
        worker.join()
    return outcome


def _fails_by_name(outcome: dict[str, Any], tier: str) -> None:
    assert outcome["ended"], "the call still waited on the paused server"
    error = outcome.get("error")
    assert isinstance(error, StoreUnavailable), outcome
    assert error.tier == tier and "PostgreSQL" in str(error)


def _point(n: int, user: str = "mio") -> PreparedPoint:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[n % DIM] = 1.0
    return PreparedPoint(f"00000000-0000-0000-0000-{n:012d}", vector, {"user_id": user, "n": n})


def test_the_pgvector_pool_fails_by_name_within_its_bound_and_recovers(server, uri):
    pool = open_pool(uri, timeout=TIMEOUT)
    store = PgVectorStore(pool, "bounds", DIM, "test-embedder", owns_pool=False)
    try:
        store.write_points([_point(1), _point(2)])
        _fails_by_name(_paused_outcome(server, uri, lambda: store.count("mio")), "long-term")
        store.write_points([_point(3)])  # the same pool lends a fresh connection
        assert store.count("mio") == 3
    finally:
        store.close()
        pool.close()


def test_the_leases_session_fails_by_name_within_its_bound_and_recovers(server, uri):
    leases = PostgresLeases(uri, timeout=TIMEOUT)

    def take() -> bool:
        with leases.hold("daily-batch") as got:
            return got

    try:
        _fails_by_name(_paused_outcome(server, uri, take), "leases")
        assert not leases.held("daily-batch")  # the failed try holds nothing in this process either
        assert take() is True  # a new session
    finally:
        leases.close()


def test_the_journal_fails_by_name_within_its_bound_and_recovers(server, uri):
    db = PostgresConnection(uri, "journal", timeout=TIMEOUT, pool_size=2)
    journal = PostgresJournal(db, timeout=TIMEOUT)
    try:
        journal.open("mio", "reply-1").finish()
        _fails_by_name(_paused_outcome(server, uri, lambda: journal.open("mio", "reply-2")), "journal")
        entry = journal.open("mio", "reply-3")
        assert journal.read(entry.path)["reply_id"] == "reply-3"
    finally:
        journal.close()


def test_the_journal_liveness_session_is_bounded(server, uri):
    """The owner lock's own session (made before a reply is journalled) waits no longer than the rest."""
    db = PostgresConnection(uri, "journal", timeout=TIMEOUT, pool_size=2)
    journal = PostgresJournal(db, timeout=TIMEOUT)
    liveness = journal._liveness
    try:
        liveness.close()
        _fails_by_name(_paused_outcome(server, uri, liveness.ensure), "journal")
        liveness.ensure()
        with psycopg.connect(uri) as con:
            held = con.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").fetchone()[0]
        assert held >= 1
    finally:
        liveness.close()
        journal.close()


def test_the_activity_log_fails_by_name_within_its_bound_and_recovers(server, uri):
    log = PostgresActivityLog(PostgresConnection(uri, "activity", timeout=TIMEOUT, pool_size=2))
    try:
        log.append("mio", "recall", at=1.0)
        _fails_by_name(_paused_outcome(server, uri, lambda: log.append("mio", "recall", at=2.0)), "activity")
        log.append("mio", "recall", at=3.0)
        assert [e["at"] for e in log.events("mio")] == [1.0, 3.0]  # the refused event was not half-written
    finally:
        log.close()


def test_the_graph_fails_by_name_within_its_bound_and_recovers(server, uri):
    graph = PostgresGraph(uri, timeout=TIMEOUT, pool_size=2)
    try:
        graph.upsert_segment("mio", "seg-1", ["lumina"], ["cello"], "one", 1.0, 0.5)
        _fails_by_name(_paused_outcome(server, uri, lambda: graph.counts("mio")), "graph")
        assert graph.counts("mio").nodes["Segment"] == 1
    finally:
        graph.close()


def test_the_item_table_fails_by_name_within_its_bound_and_recovers(server, uri):
    items = SqlItems.on_postgres(uri, timeout=TIMEOUT, pool_size=2)
    try:
        assert items.count() == 0
        outcome = _paused_outcome(server, uri, items.count)
        assert outcome["ended"] and isinstance(outcome.get("error"), StoreUnavailable)
        assert items.count() == 0
    finally:
        items.close()


def test_a_call_widened_with_longer_outlasts_the_usual_bound(uri):
    """A VACUUM FULL may copy for longer than the pool's bound: ``longer`` widens it for that call only."""
    with bounded_connection(0.3).connect(uri, autocommit=True) as con:
        with longer(con, 30.0):
            con.execute("SELECT pg_sleep(0.6)")  # twice the usual bound, within the widened one
        assert con.bound == 0.3
        with pytest.raises(psycopg.OperationalError):
            con.execute("SELECT pg_sleep(30)")  # the usual bound again: the socket is shut down
        assert con.broken
    assert grace(TIMEOUT) > TIMEOUT
