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

import json
import threading
import time

import neo4j
import pytest

from bench import faults
from graphs.cli import _open
from graphs.replay import replay
from nodes.recovery import outbox_summary, recover, rederive
from stores.errors import StoreUnavailable
from stores.graph_neo4j import Neo4jGraph
from stores.redis_server import stop_server
from tests.falkordb_bolt import StoppableFalkorDB, absorb_handshake_hang

from .conftest import make_settings

USERS, TURNS = 2, 320  # 160 turns per user
RUN = 32  # turns per graph run: the kill lands between two runs of the first user
KILL_AFTER = 96  # turns of the first user sent when the server dies


def _by_user(file) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for line in file.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows.setdefault(row.pop("user_id"), []).append(row)
    return rows


def _graph_segment_ids(services, users) -> set[tuple[str, str]]:
    dump = services.stores.graph.dump()["Segment"]
    ids = [(r["user_id"], r["id"]) for r in dump if r["user_id"] in users]
    assert len(ids) == len(set(ids)), "a Segment node is duplicated"
    return set(ids)


def _archive_segment_ids(services, users) -> set[tuple[str, str]]:
    return {(u, s.segment_id) for u in users for s in services.stores.archive.segments(u)}


def _settings(data_dir, port):
    return make_settings(data_dir, neo4j_uri=f"bolt://127.0.0.1:{port}")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("graph_outage")
    file = root / "import.jsonl"
    users = faults.generate(file, USERS, TURNS, seed=16)
    (root / "falkordb").mkdir()
    with StoppableFalkorDB(root / "falkordb") as server:
        absorb_handshake_hang(server.port)
        settings = _settings(root / "reference", server.port)
        services, graph, conn = _open(settings)
        try:
            assert services.stores.graph.backend == "neo4j"
            for user, rows in _by_user(file).items():
                replay(graph, user, rows, batch=RUN)
            ids = faults.tier_ids(services, users)
            graph_ids = _graph_segment_ids(services, users)
            assert graph_ids == _archive_segment_ids(services, users) and len(graph_ids) > 10
        finally:
            services.close()
            conn.close()
            stop_server(settings)
    return file, users, ids


@pytest.mark.parametrize("comes_back", ["snapshot", "empty"])
def test_graph_server_killed_mid_import_then_back_loses_nothing(reference, tmp_path, comes_back):
    file, users, expected = reference
    (tmp_path / "falkordb").mkdir()
    with StoppableFalkorDB(tmp_path / "falkordb") as server:
        absorb_handshake_hang(server.port)
        settings = _settings(tmp_path / "data", server.port)
        services, graph, conn = _open(settings)
        try:
            services.outbox_retry_seconds = 0.0  # every flush retries the owed writes (in vain while down)
            sent = 0

            def kill_part_way(n: int) -> None:
                nonlocal sent
                sent += n
                if sent == KILL_AFTER:
                    if comes_back == "snapshot":
                        server.save()
                    server.kill()

            rows = _by_user(file)
            replay(graph, users[0], rows[users[0]], batch=RUN, progress=kill_part_way)
            assert server.proc.poll() is not None, "the server was not killed during the import"
            replay(graph, users[1], rows[users[1]], batch=RUN)

            # Down: the archive has every turn and segment, the graph's writes are owed.
            archived = _archive_segment_ids(services, users)
            assert {(u, s) for u, s, _t in expected["archive segments"]} == archived
            owed_rows = services.stores.archive.outbox()
            owed_graph = {(r["user_id"], r["segment_id"]) for r in owed_rows if "graph" in r["stages"]}
            assert owed_graph and owed_graph < archived  # the first user's early segments were written
            assert {u for u, _s in owed_graph} == set(users)  # ... the second user's all wait
            assert outbox_summary(services.stores.archive)["owed"] == {"graph": len(owed_graph)}
            assert "graph" in services.degraded

            server.start()  # same port, same data dir
            absorb_handshake_hang(server.port)
            report = recover(services, reason="store back")  # the same driver reconnects
            assert report["still owed"] == 0 and report["completed graph"] == len(owed_graph)
            assert services.stores.archive.outbox() == [] and "graph" not in services.degraded

            if comes_back == "empty":
                # Exactly what the outbox owed is there now, nothing else: the server lost the rest.
                assert _graph_segment_ids(services, users) == owed_graph
                for user in users:
                    rederive(services, user)
            got = faults.tier_ids(services, users)
            diff = {tier: d for tier, d in faults.compare(expected, got).items() if d != (0, 0)}
            if comes_back == "empty":
                # rederive judges promotion again and links each segment to ALL archived ones (the
                # import linked it only to earlier ones): those two tiers may gain, never lose.
                regained = {tier: diff.pop(tier) for tier in ("long-term", "graph associated") if tier in diff}
                assert all(lost == 0 for lost, _more in regained.values()), regained
            assert not diff, f"tiers differing from the reference as (lost, duplicated): {diff}"
            assert _graph_segment_ids(services, users) == archived
        finally:
            services.close()
            conn.close()
            stop_server(settings)


# A query FalkorDB needs seconds for; the marker finds it among the running queries.
SLOW = "UNWIND range(1, 20000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x) AS n, 'slow-marker' AS m"


def _kill_when_running(server: StoppableFalkorDB, marker: str) -> threading.Thread:
    def watch() -> None:
        for _ in range(6000):  # generous: the query shows up within the first polls
            if server.proc.poll() is not None:
                return
            if any(marker in q for q in server.running_queries()):
                server.kill()
                return
            time.sleep(0.01)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


@pytest.mark.parametrize("call", ["read", "write"])
def test_adapter_turns_a_server_killed_mid_query_into_store_unavailable(tmp_path, call):
    """The driver's errors for a connection that dies under a running query (or a transaction) are
    StoreUnavailable, what the flush defers on; and the same adapter works once the server is back."""
    with StoppableFalkorDB(tmp_path) as server:
        absorb_handshake_hang(server.port)
        graph = Neo4jGraph(neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{server.port}", auth=None), owns_driver=True)
        try:
            watcher = _kill_when_running(server, "slow-marker")
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
