"""Backups on S3 through boto3, against a real S3 server on loopback (SeaweedFS, tests/s3_server.py)."""

from __future__ import annotations

import hashlib
import os

import pytest

from graphs.cli import _open
from graphs.erase import backup_now, erase_plan, erase_user, restore_from
from graphs.replay import replay
from stores.backup import take_backup
from stores.redis_server import stop_server
from stores.s3 import S3Location

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
