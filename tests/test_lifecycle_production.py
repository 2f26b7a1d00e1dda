"""The forgetting lifecycle on the production adapters (issue 17): mid-term on a real Redis server reached by
REDIS_URL, the graph on a real graph server over Bolt (FalkorDB standing in for Neo4j), on a simulated clock.

- Thirty-odd days of batches: every tier agrees with the archive's memory rows (levels in the vector payloads,
  relations in the graph, auto-deleted memories gone from every tier while their turns stay in the record).
- Forget (manual deletion) removes one memory from every tier there too.
- The graph server killed, or frozen, while the batch runs: the days commit, the graph's writes stay owed,
  and once the server is back the next run applies them once; no day is applied twice (an uninterrupted twin
  on the embedded defaults ends with the same memory rows and relations).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.manage import forget_memory, list_memories
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle, today_of
from tests.conftest import Memory
from tests.falkordb_bolt import absorb_handshake_hang
from tests.graph_server import FreezableFalkorDB
from tests.redis_process import start_redis, stop_redis
from tests.test_lifecycle_e2e import DAY, T0, TOPICS, conversation, graph_mentions, memory_ids

# Cats (intensity 32) reach the archive on day 7 and are deleted 11 days later; the rest stay.
AUTO_DELETE = dict(ratio_min_memories=100, auto_delete_enabled=True, archive_retention_days=10, delete_max_intensity=40)
# The notes' ratios: the first batch archives two of each user's four unprotected memories at once, so
# relations are re-pointed and repaired from the first days on.
RATIOS = dict(auto_delete_enabled=True, archive_retention_days=10, delete_max_intensity=60)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory) -> str:
    work = tmp_path_factory.mktemp("redis")
    server = start_redis(work, work / "redis.sock")
    try:
        yield f"unix://{work / 'redis.sock'}"
    finally:
        stop_redis(server)


@pytest.fixture
def graph_server(tmp_path):
    (tmp_path / "falkordb").mkdir()
    with FreezableFalkorDB(tmp_path / "falkordb") as server:
        absorb_handshake_hang(server.port)
        yield server


def production(data_dir: Path, redis_url: str, server, **params) -> Memory:
    mem = Memory(data_dir, redis_url=redis_url, neo4j_uri=f"bolt://127.0.0.1:{server.port}", graph_timeout_seconds=3,
                 lifecycle=LifecycleParams(**params))
    assert mem.services.stores.midterm.backend == "redis" and mem.services.stores.graph.backend == "neo4j"
    return mem


def new_users(n: int) -> list[str]:
    tag = uuid.uuid4().hex[:8]  # the Redis server is shared by the module's tests
    return [f"u{k}-{tag}" for k in range(n)]


def ingest(mem: Memory, users: list[str]) -> dict[str, dict[str, str]]:
    for user in users:
        replay(mem.graph, user, conversation(user))
    ids = {user: memory_ids(mem.services, user) for user in users}
    assert all(len(found) == len(TOPICS) for found in ids.values()), ids
    return ids


def run_day(services, day: int) -> dict:
    return run_lifecycle(services, now=T0 + day * DAY)


def lifecycle_rows(services, user: str) -> dict[str, tuple]:
    """What the batch decides, per memory: level, memory_days, retention, decay, recall count, archived."""
    return {m["memory_id"]: (m["level"], m["memory_days"], m["retention"], m["decay"], m["recall_count"], m["archived"])
            for m in list_memories(services, user)}


def archive_relations(services, user: str) -> set[tuple[str, str, str]]:
    return {(r["src"], r["dst"], r["kind"]) for r in services.stores.archive.memories.relations(user)}


def graph_relations(services, user: str) -> set[tuple[str, str, str]]:
    return {(src, dst, kind) for src, dst, kind, _score in services.stores.graph.relations(user)}


def assert_tiers_agree(services, user: str, ingested: dict[str, str]) -> set[str]:
    """Every tier agrees with the archive's memory rows; returns the memories the batch deleted."""
    stores = services.stores
    rows = {r["memory_id"]: r for r in stores.archive.memories.rows(user)}
    deleted = set(ingested.values()) - set(rows)
    points = {h.payload["segment_id"]: h.payload for h in stores.vectors.get(user, list(ingested.values()))}
    assert points, "nothing was promoted to long-term"
    for memory_id, point in points.items():
        assert memory_id in rows, f"{memory_id} was deleted but its long-term point stays"
        assert point.get("level", 1) == int(rows[memory_id]["level"]), (memory_id, point, rows[memory_id]["level"])
    assert stores.vectors.count(user) == len(points)
    graph_segments = {r["id"] for r in stores.graph.dump()["Segment"] if r["user_id"] == user}
    assert graph_segments == set(ingested.values()) - deleted
    assert graph_relations(services, user) == archive_relations(services, user)
    for memory_id in deleted:
        assert stores.midterm.get_segment(user, memory_id) is None
        assert not graph_mentions(services, memory_id)
        segment = stores.archive.get_segment(user, memory_id)  # the record keeps the conversation
        assert segment is not None and len(stores.archive.get_turns(user, segment.turn_ids)) == len(segment.turn_ids)
    for memory_id in rows:
        assert stores.midterm.get_segment(user, memory_id) is not None
    assert stores.archive.memories.owed_count() == 0
    return deleted


def test_thirty_days_on_redis_and_a_graph_server_keep_every_tier_with_the_archive(redis_url, graph_server, tmp_path):
    users = new_users(2)
    mem = production(tmp_path / "data", redis_url, graph_server, **AUTO_DELETE)
    try:
        services = mem.services
        ids = ingest(mem, users)
        levels_seen: set[int] = set()
        for day in range(1, 36):
            run_day(services, day)
            levels_seen |= {m["level"] for u in users for m in list_memories(services, u)}
            if day in (1, 2, 7, 20, 35):
                for user in users:
                    assert_tiers_agree(services, user, ids[user])
        assert levels_seen == {1, 2, 3, 4}
        for user in users:
            deleted = assert_tiers_agree(services, user, ids[user])
            assert deleted == {ids[user]["cat"], ids[user]["cat2"]}
            assert memory_ids(services, user).keys() == {"joy", "jog", "mother"}
    finally:
        mem.close()


def test_forget_on_redis_and_a_graph_server_removes_one_memory_everywhere(redis_url, graph_server, tmp_path):
    (user,) = new_users(1)
    mem = production(tmp_path / "data", redis_url, graph_server, **RATIOS)
    try:
        services = mem.services
        ids = ingest(mem, [user])[user]
        run_day(services, 1)
        run_day(services, 2)
        stores = services.stores
        target = ids["jog"]
        segment = stores.archive.get_segment(user, target)
        assert stores.midterm.get_segment(user, target) is not None and graph_mentions(services, target)
        removed = forget_memory(services, user, target, actor="test")
        assert removed["lifecycle"] == 1 and removed["segment"] == 1 and removed["graph"] == 1
        assert removed["midterm"] == 1 and removed["turns"] == len(segment.turn_ids)
        assert stores.midterm.get_segment(user, target) is None
        assert stores.vectors.get(user, [target]) == [] and not graph_mentions(services, target)
        assert stores.archive.get_turns(user, segment.turn_ids) == []
        assert stores.turns.vectors_of(user, segment.turn_ids) == {}
        assert all(target not in r[:2] for r in stores.graph.relations(user))
        assert target not in {m["memory_id"] for m in list_memories(services, user)}
        run_day(services, 3)  # the batch goes on without it, every tier with the archive
        assert_tiers_agree(services, user, {k: v for k, v in ids.items() if k != "jog"})
    finally:
        mem.close()


@pytest.mark.parametrize("outage", ["killed", "frozen"])
def test_graph_server_lost_during_the_batch_days_commit_writes_wait_and_apply_once(
        redis_url, graph_server, tmp_path, memory_factory, outage):
    users = new_users(2)
    mem = production(tmp_path / "data", redis_url, graph_server, **AUTO_DELETE)
    twin = memory_factory(lifecycle=LifecycleParams(**AUTO_DELETE))  # embedded defaults, never interrupted
    try:
        services = mem.services
        ids = ingest(mem, users)
        for user in users:
            replay(twin.graph, user, conversation(user))
        for day in range(1, 6):
            run_day(services, day)
        graph_before = {u: graph_relations(services, u) for u in users}

        graph_server.save()  # a restarted server comes back with what it had acknowledged
        if outage == "killed":
            graph_server.kill()
        else:
            graph_server.freeze()
        during = run_day(services, 20)  # fifteen days, one transaction each: the cats archived, their link
        # repaired (day 7) and the cats deleted (day 18)
        assert during["days"] == 15 and during["deleted"] > 0
        table = services.stores.archive.memories
        assert set(table.last_days().values()) == {today_of(services, T0 + 20 * DAY)}  # committed
        owed = {action for _u, _m, action in table.owed()}
        assert {"relations", "delete"} <= owed, owed
        settled = {u: lifecycle_rows(services, u) for u in users}
        again = run_day(services, 20)  # the same day again, still without the server
        assert again["days"] == 0 and {u: lifecycle_rows(services, u) for u in users} == settled

        if outage == "killed":
            graph_server.start()
        else:
            graph_server.thaw()
        absorb_handshake_hang(graph_server.port)
        back = run_day(services, 21)
        assert back["days"] == 1
        applied = {**back["applied_before"]}
        assert applied.get("delete", 0) == during["deleted"] and applied.get("relations", 0) >= 1
        assert table.owed_count() == 0
        after = run_day(services, 21)  # nothing left to apply twice
        assert after["days"] == 0 and not after["applied_before"] and not after["applied"]

        for day in range(1, 22):
            run_day(twin.services, day)
        for user in users:
            assert_tiers_agree(services, user, ids[user])
            assert lifecycle_rows(services, user) == lifecycle_rows(twin.services, user)
            assert archive_relations(services, user) == archive_relations(twin.services, user)
            assert graph_relations(services, user) == graph_relations(twin.services, user)
        assert any(graph_before[u] != graph_relations(services, u) for u in users)  # the owed writes changed it
    finally:
        graph_server.thaw()
        mem.close()
