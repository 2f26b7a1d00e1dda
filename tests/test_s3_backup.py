"""Backups on S3 through boto3, against a real S3 server on loopback (SeaweedFS, tests/s3_server.py)."""

from __future__ import annotations

import hashlib
import os

import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.backup import take_backup
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.s3 import S3Location

from .conftest import make_settings
from .s3_server import ACCESS_KEY, SECRET_KEY, s3_server

MARK = {"gil": "GILMARKQZ", "gil2": "HALMARKQW"}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    try:
        with s3_server(tmp_path_factory.mktemp("s3")) as url:
            yield url
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _location(endpoint: str, url: str, multipart_mb: int = 5) -> S3Location:
    settings = make_settings("/nonexistent-unused", s3_endpoint_url=endpoint, s3_multipart_mb=multipart_mb)
    return S3Location.from_url(url, settings)


def test_large_files_go_up_in_parts_and_come_back_identical(endpoint, tmp_path):
    location = _location(endpoint, "s3://lumina-backups/parts")
    staged = location.stage("snap-1")
    (staged / "place").mkdir()
    big = os.urandom(12 * 1024 * 1024)
    (staged / "place" / "big.bin").write_bytes(big)
    (staged / "place" / "small.jsonl").write_text('{"a": 1}\n')
    location.commit("snap-1", staged, '{"places": {}}\n')
    assert location.snapshots() == ["snap-1"]
    head = location.client.head_object(Bucket="lumina-backups", Key="parts/snap-1/place/big.bin")
    assert head["ETag"].strip('"').endswith("-3")  # a multipart upload's ETag counts its parts (3 x 5 MB)
    with location.fetch("snap-1") as folder:
        assert hashlib.sha256((folder / "place" / "big.bin").read_bytes()).digest() == hashlib.sha256(big).digest()
        assert (folder / "manifest.json").read_text() == '{"places": {}}\n'


def test_an_upload_interrupted_midway_leaves_no_backup_listed(endpoint, tmp_path):
    location = _location(endpoint, "s3://lumina-backups/broken")

    class Place:
        name = "big"

        def export(self, dest):
            (dest / "big.bin").write_bytes(os.urandom(11 * 1024 * 1024))
            return 1

    sent = {"bytes": 0}

    def fail_midway(n: int) -> None:
        sent["bytes"] += n
        if sent["bytes"] > 6 * 1024 * 1024:
            raise ConnectionResetError("network dropped mid-upload")

    location.progress = fail_midway
    with pytest.raises(ConnectionResetError):
        take_backup([Place()], location)
    assert sent["bytes"] > 6 * 1024 * 1024
    assert location.snapshots() == [] and location.partials() == []
    location.progress = None
    take_backup([Place()], location)
    assert len(location.snapshots()) == 1


def test_backup_erase_restore_through_s3(endpoint, tmp_path):
    url = "s3://lumina-backups/site-a"
    settings = make_settings(tmp_path / "data", s3_endpoint_url=endpoint, backup_location=url)
    services, graph, conn = _open(settings)
    try:
        for user in MARK:
            replay(graph, user, [{"speaker": "user" if i % 2 == 0 else "nox", "ts": 1_760_000_000 + 60 * i,
                                  "text": f"映画の話 その{i} {MARK[user]}", "source_id": f"{user}-{i}"} for i in range(10)])
        manifest = backup_now(services)
        assert manifest["places"]["archive.turn_archive"]["count"] == 20
        location = _location(endpoint, url)
        assert location.snapshots() == [manifest["id"]]
        erase_user(services, "gil", erase_plan(services, "gil")["token"])
        with location.fetch(manifest["id"]) as folder:
            blobs = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
        assert MARK["gil"].encode() not in blobs and MARK["gil2"].encode() in blobs
        assert location.read_text("erasure-ledger.json") is not None
    finally:
        services.close()
        conn.close()
        stop_server(settings)
    target_settings = make_settings(tmp_path / "restored", s3_endpoint_url=endpoint, backup_location=url)
    target, _graph, target_conn = _open(target_settings)
    try:
        report = restore_from(target, url)
        assert report["snapshots"] == [manifest["id"]]
        assert target.stores.archive.counts("gil") == {"turns": 0, "segments": 0}
        assert target.stores.archive.counts("gil2")["turns"] == 10
    finally:
        target.close()
        target_conn.close()
        stop_server(target_settings)


def _plant_s3_partial(location: S3Location, staging_root, sid: str, text: str) -> None:
    """What a backup killed mid-upload leaves: its staged folder (writer gone) and the parts already up."""
    import json
    import subprocess

    from lumina_memory.stores.backup_location import PARTIAL, WRITER

    dead = subprocess.Popen(["true"])
    dead.wait()
    folder = staging_root / f"{PARTIAL}{sid}"
    (folder / "vectors.turns").mkdir(parents=True)
    (folder / "vectors.turns" / "points.jsonl").write_text(json.dumps({"user_id": "gil", "record": {"text": text}}) + "\n")
    (folder / WRITER).write_text(json.dumps({"host": os.uname().nodename, "pid": dead.pid, "at": 0}))
    location.ensure_bucket()
    location.client.put_object(Bucket=location.bucket, Key=location.key_of(sid, "vectors.turns/points.jsonl"),
                               Body=(folder / "vectors.turns" / "points.jsonl").read_bytes())


def test_erasure_reaches_an_s3_backup_that_is_not_the_default_and_its_killed_partials(endpoint, tmp_path):
    url = "s3://lumina-backups/site-b"
    settings = make_settings(tmp_path / "data", s3_endpoint_url=endpoint)  # default location: a local folder
    services, graph, conn = _open(settings)
    location = _location(endpoint, url)
    staging = tmp_path / "data" / "backup-staging"
    try:
        for user in MARK:
            replay(graph, user, [{"speaker": "user" if i % 2 == 0 else "nox", "ts": 1_760_000_000 + 60 * i,
                                  "text": f"旅の話 その{i} {MARK[user]}", "source_id": f"{user}-{i}"} for i in range(6)])
        manifest = backup_now(services, url)
        _plant_s3_partial(location, staging, "20260101T000000000000Z-dead00", MARK["gil"])
        assert location.partials() == ["20260101T000000000000Z-dead00"]
        report = erase_user(services, "gil", erase_plan(services, "gil")["token"])
        assert report["unreachable"] == {}
        assert list(report["backups"][url]) == [manifest["id"]] and report["backups"][url][manifest["id"]] >= 6
        assert report["partials"][url]["removed"] == ["20260101T000000000000Z-dead00"]
        assert location.partials() == [] and not any(staging.glob(".partial-*"))
        with location.fetch(manifest["id"]) as folder:
            blobs = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
        assert MARK["gil"].encode() not in blobs and MARK["gil2"].encode() in blobs
        assert location.read_text("erasure-ledger.json") is not None
    finally:
        services.close()
        conn.close()
        stop_server(settings)
    target_settings = make_settings(tmp_path / "restored", s3_endpoint_url=endpoint)
    target, _graph, target_conn = _open(target_settings)
    try:
        report = restore_from(target, url)
        assert url in [a["where"] for a in report["ledgers_applied"]]
        assert target.stores.archive.counts("gil") == {"turns": 0, "segments": 0}
        assert target.stores.archive.counts("gil2")["turns"] == 6
    finally:
        target.close()
        target_conn.close()
        stop_server(target_settings)


def test_the_next_backup_cleans_a_killed_s3_backups_partial(endpoint, tmp_path):
    url = "s3://lumina-backups/site-c"
    settings = make_settings(tmp_path / "data", s3_endpoint_url=endpoint, backup_location=url)
    services, graph, conn = _open(settings)
    location = _location(endpoint, url)
    try:
        replay(graph, "gil2", [{"speaker": "user", "ts": 1_760_000_000 + 60 * i, "text": f"話 {i}",
                                "source_id": f"g-{i}"} for i in range(4)])
        _plant_s3_partial(location, tmp_path / "data" / "backup-staging", "20260101T000000000000Z-dead01", "x")
        manifest = backup_now(services)
        assert location.partials() == [] and location.snapshots() == [manifest["id"]]
        assert not any((tmp_path / "data" / "backup-staging").glob(".partial-*"))
    finally:
        services.close()
        conn.close()
        stop_server(settings)


def test_a_restore_from_s3_killed_half_way_is_resumed(endpoint, tmp_path):
    import signal
    import subprocess
    import sys

    from bench.faults import REPO, cli_env, stop_private_redis, tier_ids
    from lumina_memory.stores.backup import restore_mark

    from .test_restore_resume import KILL_IN_VECTORS

    url = "s3://lumina-backups/site-d"
    settings = make_settings(tmp_path / "data", s3_endpoint_url=endpoint, backup_location=url)
    services, graph, conn = _open(settings)
    try:
        for user in MARK:
            replay(graph, user, [{"speaker": "user" if i % 2 == 0 else "nox", "ts": 1_760_000_000 + 600 * i,
                                  "text": f"山の話 その{i} {MARK[user]}", "source_id": f"{user}-{i}"} for i in range(8)],
                   flush=True)
        backup_now(services)
        expected = tier_ids(services, list(MARK))
    finally:
        services.close()
        conn.close()
        stop_server(settings)
    target = tmp_path / "target"
    env = cli_env(target, LUMINA_S3_ENDPOINT_URL=endpoint)
    run = subprocess.run([sys.executable, "-c", KILL_IN_VECTORS, url], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=600)
    stop_private_redis(target)
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    assert restore_mark(target)["location"] == url
    target_settings = make_settings(target, s3_endpoint_url=endpoint)
    resumed, _graph, target_conn = _open(target_settings)
    try:
        report = restore_from(resumed, url)
        assert "archive.turn_archive" in report["resumed"]
        assert restore_mark(target) is None
        assert tier_ids(resumed, list(MARK)) == expected
    finally:
        resumed.close()
        target_conn.close()
        stop_server(target_settings)


def test_keys_are_listed_under_their_prefix_only_and_a_missing_bucket_lists_none(endpoint):
    location = _location(endpoint, "s3://lumina-keys/a/b")
    other = _location(endpoint, "s3://lumina-keys/a/bc")
    assert location.key_of("u1", "x.parquet") == "a/b/u1/x.parquet" and location.key_of() == "a/b"
    assert location.keys_under(location.key_of() + "/") == []  # no bucket yet: nothing, no error
    location.ensure_bucket()
    location.ensure_bucket()  # an existing bucket is kept
    for loc, name in ((location, "u1/x"), (location, "u2/y"), (other, "u1/z")):
        loc.client.put_object(Bucket=loc.bucket, Key=loc.key_of(name), Body=b"1")
    assert sorted(location.keys_under(location.key_of("u1") + "/")) == ["a/b/u1/x"]
    assert sorted(location.keys_under(location.key_of() + "/")) == ["a/b/u1/x", "a/b/u2/y"]
