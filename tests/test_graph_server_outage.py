"""A REAL graph server killed mid-import (issue 16: "each store stopped mid-import for a while → 0 lost").

The Neo4j adapter talks to FalkorDB's Bolt endpoint. Part way through the first user's import the
server gets SIGKILL; the import goes on (the second user's import runs entirely during the outage):
every turn and segment reaches the archive, the graph writes wait in the archive's outbox. Then the
server starts again on the same port, and recovery (what a flush or start-up runs) completes the
owed writes. Every tier then equals a clean reference import on its own server, id by id: 0 lost,
0 duplicated (the Segment *node count* is compared too, so a segment written twice shows).

Two ways the server comes back:
- ``snapshot``: it was snapshotted (SAVE) just before the kill, so it returns with what it had
  acknowledged; the outbox alone brings it level with the archive.
- ``empty``: it returns with nothing (no persistence). Recovery still completes exactly what the
  outbox owed (the segments of the outage); what the server itself threw away is not something the
  outbox can know, and ``rederive`` (doctor's repair) rebuilds it from the archive: every tier then
  equals the reference, except that rederive judges promotion again and links against every archived
  segment, so long-term points and association edges may be MORE than the reference's (never fewer).
"""

from __future__ import annotations

import neo4j
import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.graph_neo4j import Neo4jGraph
from lumina_memory.stores.redis_server import stop_server
from tests.falkordb_bolt import StoppableFalkorDB, absorb_handshake_hang
from tests.graph_server import (
    OUTAGE_AFTER,
    RUN,
    SLOW,
    act_when_running,
    assert_graph_writes_owed,
    assert_recovered_level,
    by_user,
    outage_settings,
    reference,  # noqa: F401 (a fixture)
)


@pytest.mark.parametrize("comes_back", ["snapshot", "empty"])
def test_graph_server_killed_mid_import_then_back_loses_nothing(reference, tmp_path, comes_back):
    file, users, expected = reference
    (tmp_path / "falkordb").mkdir()
    with StoppableFalkorDB(tmp_path / "falkordb") as server:
        absorb_handshake_hang(server.port)
        settings = outage_settings(tmp_path / "data", server.port)
        services, graph, conn = _open(settings)
        try:
            services.outbox_retry_seconds = 0.0  # every flush retries the owed writes (in vain while down)
            sent = 0

            def kill_part_way(n: int) -> None:
                nonlocal sent
                sent += n
                if sent == OUTAGE_AFTER:
                    if comes_back == "snapshot":
                        server.save()
                    server.kill()

            rows = by_user(file)
            replay(graph, users[0], rows[users[0]], batch=RUN, progress=kill_part_way)
            assert server.proc.poll() is not None, "the server was not killed during the import"
            replay(graph, users[1], rows[users[1]], batch=RUN)

            archived, owed_graph = assert_graph_writes_owed(services, users, expected)
            server.start()  # same port, same data dir
            absorb_handshake_hang(server.port)
            assert_recovered_level(services, users, expected, archived, owed_graph,
                                   server_lost_data=comes_back == "empty")
        finally:
            services.close()
            conn.close()
            stop_server(settings)


@pytest.mark.parametrize("call", ["read", "write"])
def test_adapter_turns_a_server_killed_mid_query_into_store_unavailable(tmp_path, call):
    """The driver's errors for a connection that dies under a running query (or a transaction) are
    StoreUnavailable, what the flush defers on; and the same adapter works once the server is back."""
    with StoppableFalkorDB(tmp_path) as server:
        absorb_handshake_hang(server.port)
        graph = Neo4jGraph(neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{server.port}", auth=None), owns_driver=True)
        try:
            watcher = act_when_running(server, "slow-marker", server.kill)
            with pytest.raises(StoreUnavailable, match="not reachable"):
                if call == "read":
                    graph._read(SLOW, {})
                else:
                    graph._write([("MERGE (u:User {id: 'outage'})", {}), (SLOW, {})])
            watcher.join(timeout=120)
            assert server.proc.poll() is not None, "the server was not killed under the query"
            with pytest.raises(StoreUnavailable):  # down: refused at once, as StoreUnavailable too
                graph.counts()
            server.start()
            absorb_handshake_hang(server.port)
            graph.upsert_segment("outage", "seg-1", ["lumina"], ["陶芸"], "back", 1.0, 0.5)
            assert graph.counts("outage").nodes["Segment"] == 1
        finally:
            graph.close()
