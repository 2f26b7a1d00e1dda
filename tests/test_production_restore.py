"""Backup from the embedded defaults, restore into production adapters (the graph on a Bolt server:
FalkorDB standing in for Neo4j), then erase there: the same registry drives every backend."""

from __future__ import annotations

import neo4j

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.redis_server import stop_server
from tests.falkordb_bolt import absorb_handshake_hang, falkordb_bolt

from .conftest import make_settings


def _turns(user: str) -> list[dict]:
    return [{"speaker": "user" if i % 2 == 0 else "clarisse", "text": f"{user} のケーキの話 その{i} 170度で40分",
             "ts": 1_760_000_000 + 60 * i, "source_id": f"{user}-{i}"} for i in range(16)]


def test_restore_into_a_bolt_graph_server_then_erase_there(tmp_path):
    source = make_settings(tmp_path / "src", backup_location=str(tmp_path / "b"))
    services, graph, conn = _open(source)
    try:
        for user in ("quinn", "quinn2"):
            replay(graph, user, _turns(user))
        backup_now(services)
        expected = {u: tier_stats(services, u)["graph"]["nodes"] for u in ("quinn", "quinn2")}
        assert expected["quinn"]["Segment"] > 0
    finally:
        services.close()
        conn.close()
        stop_server(source)
    (tmp_path / "falkordb").mkdir()
    with falkordb_bolt(tmp_path / "falkordb") as port:
        absorb_handshake_hang(port)
        target = make_settings(tmp_path / "dst", backup_location=str(tmp_path / "b"), neo4j_uri=f"bolt://127.0.0.1:{port}")
        services, graph, conn = _open(target)
        try:
            assert services.stores.graph.backend == "neo4j"
            report = restore_from(services, str(tmp_path / "b"))
            assert report["restored"]["graph"] > 0
            for user in ("quinn", "quinn2"):
                assert tier_stats(services, user)["graph"]["nodes"] == expected[user]
            erase_user(services, "quinn", erase_plan(services, "quinn")["token"])
            assert tier_stats(services, "quinn2")["graph"]["nodes"] == expected["quinn2"]
            driver = neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None)
            try:
                rows, _, _ = driver.execute_query(
                    "MATCH (n) WHERE n.user_id = 'quinn' OR n.id = 'quinn' OR n.summary CONTAINS 'quinn ' RETURN count(n) AS n")
                assert rows[0]["n"] == 0
            finally:
                driver.close()
        finally:
            services.close()
            conn.close()
            stop_server(target)
