"""Backups and restore (L10): round trip into a new data dir, the manifest, erasure reaching backups,
the ledger keeping erased users out of any restore, pruning."""

from __future__ import annotations

import json
import shutil

import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.backup import BackupCorrupt, manifests, prune
from lumina_memory.stores.backup_location import LocalLocation
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

USERS = ("erin", "frank")
QUESTIONS = ("猫の名前と年齢って何だっけ？", "クラリスに教わったチーズケーキ、何度で何分焼くんだっけ？")


class Opened:
    def __init__(self, data_dir, backups):
        self.settings = make_settings(data_dir, backup_location=str(backups))
        self.services, self.graph, self.conn = _open(self.settings)

    def close(self):
        self.services.close()
        self.conn.close()
        stop_server(self.settings)

    def picture(self) -> dict:
        """What must survive a round trip: stats per user and overall, recall answers, store items."""
        out = {"all": _stats(self.services, None)}
        for user in USERS:
            out[user] = _stats(self.services, user)
            out[f"{user}/recall"] = [[(i["text"], round(i["score"], 6)) for i in
                                      recall(self.services, user, q, purpose="question", limit=5)] for q in QUESTIONS]
        with open_registry(self.services) as places:
            out["places"] = {p.name: [p.count(u) for u in USERS] for p in places if not p.name.startswith("cache.")}
        return out


def _stats(services, user):
    stats = tier_stats(services, user)
    stats.pop("paths")
    stats.pop("costs")  # what the operations cost: this process's own records, not the memory's
    stats.pop("recall_index")  # this process's index counters (turns read, reads decoded), not data
    stats.pop("segment_index")
    return stats


def _filled(root) -> Opened:
    """The demo conversation for both users (frank's last segment left open) and a store item each."""
    opened = Opened(root / "data", root / "backups")
    rows = [json.loads(line) for line in DEMO_TRANSCRIPT.open(encoding="utf-8") if line.strip()]
    for user in USERS:
        replay(opened.graph, user, [dict(r, user_id=user) for r in rows], flush=(user == "erin"))
    store = make_store(opened.settings, embedder=opened.services.embedder)
    for user in USERS:
        store.put(("memories", user), "tea", {"text": f"{user} likes green tea"})
    store.close()
    return opened


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """Shared by the tests that only read the data dir (backups add snapshots, nothing else)."""
    root = tmp_path_factory.mktemp("backup")
    opened = _filled(root)
    yield root, opened
    opened.close()


@pytest.fixture
def own_source(tmp_path):
    """A data dir of its own, for a test that erases a user: the shared one must keep both for the others."""
    opened = _filled(tmp_path / "own")
    yield tmp_path / "own", opened
    opened.close()


def test_backup_writes_a_manifest_of_counts_and_checksums(source):
    root, opened = source
    manifest = backup_now(opened.services)
    assert manifest["places"]["archive.turn_archive"]["count"] == 2 * 102 - manifest_open_turns(opened)
    for name in ("midterm.redis", "archive.session_archive", "vectors.segments", "vectors.turns", "graph",
                 "store.items", "checkpoints"):
        assert manifest["places"][name]["count"] > 0, name
        for rel, f in manifest["places"][name]["files"].items():
            assert len(f["sha256"]) == 64 and f["bytes"] > 0
    snapshot = root / "backups" / manifest["id"]
    assert (snapshot / "manifest.json").stat().st_mode & 0o777 == 0o600
    assert (snapshot / "archive.turn_archive" / "turn_archive.parquet").exists()
    assert [m["id"] for m in manifests(LocalLocation(root / "backups"))][-1] == manifest["id"]


def manifest_open_turns(opened) -> int:
    """frank's last segment is still open (never flushed): its turns are in the checkpoint, not the archive."""
    return 2 * 102 - opened.services.stores.archive.counts()["turns"]


def test_round_trip_into_a_new_data_dir_gives_identical_stats_and_answers(source, tmp_path):
    root, opened = source
    manifest = backup_now(opened.services)
    before = opened.picture()
    assert all(before["places"]["archive.knowledge_items"]) and all(before["places"]["archive.memories"])  # issue 17/18 state is in the round trip
    target = Opened(tmp_path / "restored", root / "backups")
    try:
        report = restore_from(target.services, str(root / "backups"), manifest["id"])
        assert report["not_restored"] == []
        assert report["restored"]["archive.turn_archive"] == manifest["places"]["archive.turn_archive"]["count"]
        after = target.picture()
        assert after == before
        # frank's open segment came back with his thread: a flush archives it in the restored dir.
        target.graph.invoke({"flush": True}, {"configurable": {"thread_id": "user:frank"}},
                            context={"user_id": "frank", "respond": False})
        assert target.services.stores.archive.counts("frank")["turns"] == 102
        with pytest.raises(InvalidInput, match="empty data directory"):
            restore_from(target.services, str(root / "backups"), manifest["id"])
    finally:
        target.close()


def test_a_corrupt_snapshot_is_refused_before_anything_is_written(source, tmp_path):
    root, opened = source
    manifest = backup_now(opened.services, str(tmp_path / "copy"))
    parquet = tmp_path / "copy" / manifest["id"] / "archive.turn_archive" / "turn_archive.parquet"
    data = bytearray(parquet.read_bytes())
    data[len(data) // 2] ^= 0xFF
    parquet.write_bytes(bytes(data))
    target = Opened(tmp_path / "restored", tmp_path / "copy")
    try:
        with pytest.raises(BackupCorrupt, match="turn_archive.parquet"):
            restore_from(target.services, str(tmp_path / "copy"), manifest["id"])
        assert target.services.stores.archive.counts() == {"turns": 0, "segments": 0}
    finally:
        target.close()


def test_an_interrupted_backup_is_never_listed(source, tmp_path):
    root, opened = source

    class Boom(RuntimeError):
        pass

    with open_registry(opened.services) as places:
        def explode(dest):
            raise Boom("disk full")

        places[3].export = explode  # a real failure half-way through the places
        from lumina_memory.stores.backup import take_backup

        location = LocalLocation(tmp_path / "b")
        with pytest.raises(Boom):
            take_backup(places, location)
    assert location.snapshots() == [] and location.partials() == []


def test_erasure_rewrites_backups_and_the_ledger_keeps_the_user_out(own_source, tmp_path):
    root, opened = own_source
    manifest = backup_now(opened.services)
    # A copy erasure does not know about (an operator's offline copy).
    shutil.copytree(root / "backups" / manifest["id"], tmp_path / "offline" / manifest["id"])
    erase_user(opened.services, "erin", erase_plan(opened.services, "erin")["token"])
    rewritten = json.loads((root / "backups" / manifest["id"] / "manifest.json").read_text())
    assert rewritten["places"]["archive.turn_archive"]["count"] == manifest["places"]["archive.turn_archive"]["count"] - 102
    assert b"erin" not in (root / "backups" / manifest["id"] / "vectors.turns" / "points.jsonl").read_bytes()
    # Restore of the rewritten backup into a new data dir: erin absent, frank intact.
    target = Opened(tmp_path / "restored", root / "backups")
    try:
        restore_from(target.services, str(root / "backups"), manifest["id"])
        assert target.services.stores.archive.counts("erin") == {"turns": 0, "segments": 0}
        assert target.services.stores.archive.counts("frank") == opened.services.stores.archive.counts("frank")
    finally:
        target.close()
    # The offline copy still holds erin; restoring it where the ledger is (the erased data dir) leaves her out.
    frank_before = opened.picture()["places"]
    report = restore_from(opened.services, str(tmp_path / "offline"), manifest["id"], allow_non_empty=True)
    assert report["restored"]["archive.turn_archive"] > 0
    with open_registry(opened.services) as places:
        assert {p.name: p.count("erin") for p in places if not p.name.startswith("cache.")} == \
               {p.name: 0 for p in places if not p.name.startswith("cache.")}
    assert opened.picture()["places"] == frank_before


def test_erasure_reaches_backups_of_places_this_configuration_lacks(source, tmp_path):
    from lumina_memory.stores.backup import forget_in_backups

    root, opened = source
    manifest = backup_now(opened.services, str(tmp_path / "b"))
    location = LocalLocation(tmp_path / "b")
    removed = forget_in_backups([], location, "frank")  # no place known: rewritten by file format
    assert removed[manifest["id"]] > 0
    snapshot = tmp_path / "b" / manifest["id"]
    for rel in ("vectors.turns/points.jsonl", "graph/Segment.jsonl", "midterm.redis/keys.jsonl"):
        assert b"frank" not in (snapshot / rel).read_bytes(), rel
    import duckdb

    rows = duckdb.sql(f"SELECT count(*) FROM read_parquet('{snapshot}/archive.turn_archive/turn_archive.parquet') "
                      "WHERE user_id = 'frank'").fetchall()
    assert rows == [(0,)]
    rewritten = manifests(location)[-1]
    assert backups_verify(snapshot, rewritten) == []


def backups_verify(folder, manifest):
    from lumina_memory.stores.backup import verify

    return verify(folder, manifest)


def test_prune_keeps_the_newest(tmp_path, source):
    root, opened = source
    where = tmp_path / "pruned"
    made = [backup_now(opened.services, str(where), groups=["redis"])["id"] for _ in range(3)]
    location = LocalLocation(where)
    assert prune(location, keep=2, max_age_days=None) == made[:1]
    assert location.snapshots() == made[1:]
    assert prune(location, keep=5, max_age_days=1, now=manifests(location)[-1]["created_at"] + 3 * 86_400) == made[1:2]
    assert location.snapshots() == made[2:]
