"""README claims Redis Cluster for mid-term: the adapter against a real three-node cluster on loopback,
started from the redis-server we ship, running the same MidTermStore contract as the other servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.cluster

from lumina_memory.stores import ids
from lumina_memory.stores.midterm_redis import RedisMidTerm
from tests.redis_cluster import redis_cluster
from tests.test_midterm_conformance import (  # noqa: F401 - collected here, run against the cluster
    make_settings,
    new_user,
    record,
    test_delete_segments_in_chunks,
    test_delete_segments_removes_only_those_segments_of_that_user,
    test_delete_user_removes_all_and_only_that_user,
    test_expiry,
    test_invalid_ids_are_rejected,
    test_put_segments_writes_a_batch_across_users_or_nothing,
    test_recent_newest_first_with_limit,
    test_reput_is_idempotent,
    test_round_trip,
    test_ttl_is_set,
    test_user_isolation,
)

TTL = 300


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_cluster(tmp_path_factory.mktemp("cluster")) as ports:
        yield f"redis://127.0.0.1:{ports[0]}"


@pytest.fixture
def store(cluster_url: str, tmp_path: Path) -> Iterator[RedisMidTerm]:
    mid = RedisMidTerm.from_settings(make_settings(tmp_path, redis_url=cluster_url))
    assert mid.backend == "redis-cluster"  # found by asking the server, no setting needed
    assert isinstance(mid._client, redis.cluster.RedisCluster)
    mid._client.flushdb(target_nodes=redis.cluster.RedisCluster.PRIMARIES)
    yield mid
    mid.close()


def test_users_spread_over_the_nodes_and_each_users_keys_share_a_slot(store: RedisMidTerm) -> None:
    users = [new_user() for _ in range(30)]
    store.put_segments([record(u, f"s{i}", 10.0 + i) for u in users for i in range(2)], TTL)
    client = store._client
    nodes = {client.get_node_from_key(ids.redis_recent_key(u)).name for u in users}
    assert len(nodes) == 3, nodes  # the data really is spread over the cluster
    for u in users:
        slots = {client.keyslot(k) for k in (ids.redis_recent_key(u), ids.redis_segment_key(u, "s0"),
                                             ids.redis_segment_key(u, "s1"))}
        assert len(slots) == 1
    assert store.count() == 60 and store.count(users[0]) == 2
    assert [r.segment_id for r in store.recent_segments(users[3], 5)] == ["s1", "s0"]


def test_missing_finds_absent_records_across_nodes(store: RedisMidTerm) -> None:
    users = [new_user() for _ in range(12)]
    store.put_segments([record(u, "here", 1.0) for u in users], TTL)
    asked = [(u, "here") for u in users] + [(u, "gone") for u in users]
    assert store.missing(asked) == [(u, "gone") for u in users]
