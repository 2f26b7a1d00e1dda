"""Storage policy B with an ``s3://`` location (L9): old raw turns go to Parquet objects on a real S3
server (SeaweedFS on loopback, tests/s3_server.py), deliberate recall reads them back through DuckDB, and
erasure removes the user's objects while another user's stay."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.registry import open_registry
from lumina_memory.nodes.retention import DAY, cold_turns, enforce_retention
from lumina_memory.stores.cold_turns import ColdTurns
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import user_file_stem
from lumina_memory.stores.models import Turn
from lumina_memory.stores.s3 import S3Location

from .conftest import make_settings
from .s3_server import s3_credentials, s3_server

T0 = 1_700_000_000.0
OLD = ("去年の夏、北海道でオーロラを見たかったんだ", "オーロラ、いつか一緒に見たいね", "寒いのは苦手だけど星空は好き")
NEW = ("最近はパン作りにはまってる", "素敵ですね、どんなパンを焼くのですか", "メロンパンとクロワッサン")
MARK = {"ann": "ANNMARKQZ", "bob": "BOBMARKQW"}
BUCKET, PREFIX = "lumina-cold", "site-a"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    with s3_credentials(), s3_server(tmp_path_factory.mktemp("s3")) as url:
        yield url


def _ingest(mem, user: str) -> None:
    config = {"configurable": {"thread_id": f"cold-{user}"}}
    ctx = {"user_id": user, "respond": False}
    for start, rows in ((T0, OLD), (T0 + 60 * DAY, NEW)):
        for i, text in enumerate(rows):
            turn = {"speaker": "user" if i % 2 == 0 else "lumina", "text": f"{text} {MARK[user]}{i}", "ts": start + i}
            mem.graph.invoke({"turn": turn}, config, context=ctx)
        mem.graph.invoke({"flush": True}, config, context=ctx)


def _objects(endpoint: str) -> dict[str, bytes]:
    s3 = S3Location.from_url(f"s3://{BUCKET}/{PREFIX}", make_settings("/nonexistent-unused", s3_endpoint_url=endpoint))
    return {k: s3.client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in s3.keys_under(PREFIX + "/")}


def test_policy_b_on_s3_moves_old_turns_out_reads_them_back_and_erases_one_user(memory_factory, endpoint, tmp_path):
    mem = memory_factory(retention_raw_turns_days=30, storage_policy="B", s3_endpoint_url=endpoint,
                         storage_policy_b_location=f"s3://{BUCKET}/{PREFIX}")
    for user in MARK:
        _ingest(mem, user)

    report = enforce_retention(mem.services, now=T0 + 61 * DAY)

    assert report["raw_turns"]["turns"] == 6 and report["raw_turns"]["users"] == 2
    objects = _objects(endpoint)
    assert sorted(k.split("/")[1] for k in objects) == sorted(user_file_stem(u) for u in MARK)
    assert all(k.endswith(".parquet") and "ann" not in k and "bob" not in k for k in objects)
    assert not (mem.settings.resolved_data_dir() / "logs").exists()  # nothing kept locally
    found = cold_turns(mem.services, "ann", contains="オーロラ")
    assert [t.text for t in found] == [f"{OLD[0]} ANNMARKQZ0", f"{OLD[1]} ANNMARKQZ1"]
    assert {t.user_id for t in found} == {"ann"}
    assert [t.text for t in cold_turns(mem.services, "bob")] == [f"{t} BOBMARKQW{i}" for i, t in enumerate(OLD)]
    assert cold_turns(mem.services, "nobody") == []

    with open_registry(mem.services) as places:
        place = next(p for p in places if p.name == "cold_turns")
        assert place.count("ann") == 3 and place.count("bob") == 3 and place.raw_paths() == []
        exported = place.export(tmp_path / "export")
    assert exported == 6
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == sorted(user_file_stem(u) for u in MARK)

    plan = erase_plan(mem.services, "ann")
    assert plan["counts"]["cold_turns"] == 3
    erase_user(mem.services, "ann", plan["token"])

    blobs = b"".join(_objects(endpoint).values())
    assert blobs and b"ANNMARKQZ" not in blobs and b"BOBMARKQW" in blobs
    assert cold_turns(mem.services, "ann") == [] and len(cold_turns(mem.services, "bob")) == 3


def test_an_s3_export_restores_into_another_prefix_without_an_erased_user(endpoint, tmp_path):
    settings = make_settings(tmp_path / "data", s3_endpoint_url=endpoint)
    source = ColdTurns(f"s3://{BUCKET}/restore-src", settings)
    for user in MARK:
        source.write(user, [Turn(turn_id=f"{user}-{i}", source_id=f"{user}-{i}", user_id=user, segment_id="",
                                 speaker="user", text=f"{MARK[user]} {i}", ts=T0 + i) for i in range(4)])
    assert source.export(tmp_path / "snap") == 8
    target = ColdTurns(f"s3://{BUCKET}/restore-dst", settings)
    assert target.restore(tmp_path / "snap", is_erased=lambda u: u == "ann") == 4
    assert target.restore(tmp_path / "snap", is_erased=lambda u: u == "ann") == 4  # same names: no duplicates
    assert target.count("ann") == 0 and target.count("bob") == 4
    assert [t.text for t in target.read("bob", contains="bobmark")] == [f"BOBMARKQW {i}" for i in range(4)]
    assert target.files.stems() == [user_file_stem("bob")]


def test_an_s3_location_without_a_bucket_is_refused_naming_the_setting(tmp_path):
    with pytest.raises(InvalidInput) as err:
        ColdTurns.for_settings(make_settings(tmp_path, storage_policy_b_location="s3://"))
    assert err.value.field == "storage_policy_b_location"


def test_erasure_on_a_versioned_bucket_leaves_no_earlier_version_of_the_user(endpoint, tmp_path):
    place = ColdTurns("s3://lumina-cold-versioned/p", make_settings(tmp_path / "data", s3_endpoint_url=endpoint))
    client = place.files.s3.client
    client.create_bucket(Bucket="lumina-cold-versioned")
    client.put_bucket_versioning(Bucket="lumina-cold-versioned", VersioningConfiguration={"Status": "Enabled"})
    for user in MARK:
        for i in range(2):
            place.write(user, [Turn(turn_id=f"{user}-{i}", source_id=f"{user}-{i}", user_id=user, speaker="user",
                                    text=f"{MARK[user]} {i}", ts=T0 + i)])
    assert place.erase("ann") == 2 and place.count("bob") == 2
    listing = client.list_object_versions(Bucket="lumina-cold-versioned")
    left = [e["Key"] for e in [*listing.get("Versions", []), *listing.get("DeleteMarkers", [])]]
    assert len(left) == 2 and all(user_file_stem("bob") in k for k in left)
