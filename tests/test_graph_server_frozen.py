"""A REAL graph server *frozen* mid-import (issue 16, crash safety): not dead, just silent.

SIGSTOP leaves FalkorDB's process and sockets in place: the kernel still accepts connections and
acknowledges what the driver sends, but nothing ever answers. The neo4j driver has no client-side
read timeout, so without a bound the import would wait forever on its first graph query. With
``graph_timeout_seconds`` each graph call gives up after that long (the call abandoned, its connection
killed), the flush defers the graph's writes to the archive's outbox as for a dead server, and the
import goes on. After SIGCONT, recovery brings every tier level with a clean reference import, id by
id (the checks of test_graph_server_outage, whose reference import this module shares).

Nothing here measures speed: the import runs in a thread that is only required to finish within a
generous time, i.e. not to hang.
"""

from __future__ import annotations

import threading
import time

import neo4j
import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.graph_neo4j import CALL_THREAD_NAME, Neo4jGraph, bounded_driver_config
from lumina_memory.stores.redis_server import stop_server
from tests.falkordb_bolt import absorb_handshake_hang
from tests.graph_server import (
    OUTAGE_AFTER,
    RUN,
    SLOW,
    FreezableFalkorDB,
    act_when_running,
    assert_graph_writes_owed,
    assert_recovered_level,
    by_user,
    outage_settings,
    reference,  # noqa: F401 (a fixture)
)

TIMEOUT = 1.0  # graph_timeout_seconds here: short, so the many calls that wait it out stay quick
HANG = 600.0  # an import (or call) still running after this long is taken as hung
OVERRAN = "did not answer within 1 s"


def _run_in_thread(target) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    thread = threading.Thread(target=run, name="frozen-import", daemon=True)
    thread.start()
    return thread, errors


def _call_threads_left(grace: float) -> list[threading.Thread]:
    """The adapter's helper threads still alive after waiting up to ``grace`` s for them to end."""
    deadline = time.monotonic() + grace
    while True:
        left = [t for t in threading.enumerate() if t.name == CALL_THREAD_NAME]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def test_graph_server_frozen_mid_import_then_thawed_loses_nothing(reference, tmp_path):
    file, users, expected = reference
    (tmp_path / "falkordb").mkdir()
    with FreezableFalkorDB(tmp_path / "falkordb") as server:
        absorb_handshake_hang(server.port)
        settings = outage_settings(tmp_path / "data", server.port, graph_timeout_seconds=TIMEOUT)
        services, graph, conn = _open(settings)
        importer: threading.Thread | None = None
        try:
            services.outbox_retry_seconds = 0.0  # every flush retries the owed writes (each waits the timeout out)
            sent = 0

            def freeze_part_way(n: int) -> None:
                nonlocal sent
                sent += n
                if sent == OUTAGE_AFTER:
                    server.freeze()

            def import_both() -> None:
                rows = by_user(file)
                replay(graph, users[0], rows[users[0]], batch=RUN, progress=freeze_part_way)
                replay(graph, users[1], rows[users[1]], batch=RUN)

            importer, errors = _run_in_thread(import_both)
            importer.join(HANG)
            assert not importer.is_alive(), f"the import hung on the frozen graph server ({HANG:g} s)"
            assert not errors, f"the import failed instead of deferring the graph's writes: {errors[0]!r}"
            assert server.frozen, "the server was not frozen during the import"

            # Frozen: the graph is reported degraded, for the timeout, and its writes wait in the outbox.
            archived, owed_graph = assert_graph_writes_owed(services, users, expected)
            assert OVERRAN in services.degraded["graph"], services.degraded["graph"]

            server.thaw()
            assert_recovered_level(services, users, expected, archived, owed_graph, server_lost_data=False)
            assert not _call_threads_left(HANG), "an abandoned graph call never ended"
        finally:
            server.thaw()  # first: whatever is still blocked on the server can then finish
            if importer is not None:
                importer.join(HANG)
            services.close()
            conn.close()
            stop_server(settings)


@pytest.mark.parametrize("call", ["read", "write"])
def test_adapter_bounds_a_call_to_a_server_frozen_mid_query(tmp_path, call):
    """A query running when the server freezes: the call gives up after the timeout as StoreUnavailable
    naming the server and the timeout; so does every call while frozen (a new connection's handshake
    included); no helper thread is left blocked; and after the thaw the same adapter works again on
    a fresh connection (the stuck one was killed, not handed out by the pool)."""
    with FreezableFalkorDB(tmp_path) as server:
        absorb_handshake_hang(server.port)
        uri = f"bolt://127.0.0.1:{server.port}"
        driver = neo4j.GraphDatabase.driver(uri, auth=None, **bounded_driver_config(TIMEOUT))
        graph = Neo4jGraph(driver, owns_driver=True, timeout=TIMEOUT, server=uri)
        try:
            watcher = act_when_running(server, "slow-marker", server.freeze)
            outcome: list[str] = []

            def slow_call() -> None:
                with pytest.raises(StoreUnavailable) as raised:
                    if call == "read":
                        graph._read(SLOW, {})
                    else:
                        graph._write([("MERGE (u:User {id: 'frozen'})", {}), (SLOW, {})])
                outcome.append(str(raised.value))

            caller, errors = _run_in_thread(slow_call)
            caller.join(HANG)
            assert not caller.is_alive(), "the call hung on the frozen server"
            assert not errors, errors
            watcher.join(timeout=120)
            assert server.frozen, "the server was not frozen under the query"
            assert uri in outcome[0] and OVERRAN in outcome[0], outcome[0]

            with pytest.raises(StoreUnavailable, match=OVERRAN):  # still frozen: bounded too
                graph.counts()
            assert not _call_threads_left(HANG), "an abandoned graph call is still blocked on the frozen server"

            server.thaw()
            graph.upsert_segment("frozen", "seg-1", ["lumina"], ["陶芸"], "back", 1.0, 0.5)
            assert graph.counts("frozen").nodes["Segment"] == 1
        finally:
            server.thaw()
            graph.close()


def test_a_handshake_the_frozen_server_never_answers_is_an_overrun(tmp_path):
    """A new connection to a frozen server: the kernel accepts it and the Bolt handshake is never answered. The
    driver's own connect deadline then fires inside the call, and it raced the adapter's bound: on a slow machine
    the driver's came first and the call said the server was "not reachable" (CI, 2026-12-01) where it did not
    answer in time. Here the driver's deadline is set shorter than the adapter's, so it always comes first."""
    with FreezableFalkorDB(tmp_path) as server:
        absorb_handshake_hang(server.port)
        uri = f"bolt://127.0.0.1:{server.port}"
        driver = neo4j.GraphDatabase.driver(uri, auth=None, **bounded_driver_config(TIMEOUT / 4))
        graph = Neo4jGraph(driver, owns_driver=True, timeout=TIMEOUT, server=uri)
        try:
            server.freeze()
            # The first call overruns on the pooled connection, which is killed; the second has to connect anew.
            with pytest.raises(StoreUnavailable, match=OVERRAN):
                graph.counts()
            with pytest.raises(StoreUnavailable, match=OVERRAN) as raised:
                graph.counts()
            assert "handshake" in str(raised.value)  # it was the connect that timed out
            assert uri in str(raised.value)
        finally:
            server.thaw()
            graph.close()
