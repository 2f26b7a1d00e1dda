"""Erasure reaches every copy (issue 44): every location a backup was written to is remembered and scrubbed,
partial backups included; a location it cannot reach is reported and retried; a restore applies every
ledger it can reach, says which, and warns where nothing can know of an erasure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.replay import replay
from lumina_memory.stores import known_locations
from lumina_memory.stores.backup import clean_partials
from lumina_memory.stores.backup_location import PARTIAL, WRITER, LocalLocation
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

MARK = {"ivy": "IVYMARKQZ", "jon": "JONMARKQW"}


class Dir:
    """An opened data dir (default backups beside it) holding both users' turns."""

    def __init__(self, data_dir, *, fill: bool = True):
        self.settings = make_settings(data_dir)
        self.services, self.graph, self.conn = _open(self.settings)
        if fill:
            for user, mark in MARK.items():
                replay(self.graph, user, [{"speaker": "user" if i % 2 == 0 else "nox", "ts": 1_760_000_000 + 60 * i,
                                           "text": f"映画の話 その{i} {mark}", "source_id": f"{user}-{i}"}
                                          for i in range(10)])

    def turns(self, user: str) -> int:
        return self.services.stores.archive.counts(user)["turns"]

    def close(self) -> None:
        self.services.close()
        self.conn.close()
        stop_server(self.settings)


def _bytes(folder) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def _erase(d: Dir, user: str) -> dict:
    return erase_user(d.services, user, erase_plan(d.services, user)["token"])


def test_a_backup_to_another_folder_is_scrubbed_and_restores_without_the_erased_user(tmp_path):
    src = Dir(tmp_path / "data")
    try:
        backup_now(src.services, str(tmp_path / "elsewhere"))
        assert str((tmp_path / "elsewhere").resolve()) in known_locations.known(tmp_path / "data")
        report = _erase(src, "ivy")
        assert str((tmp_path / "elsewhere").resolve()) in report["backups"]
        assert report["unreachable"] == {}
    finally:
        src.close()
    blobs = _bytes(tmp_path / "elsewhere")
    assert MARK["ivy"].encode() not in blobs and MARK["jon"].encode() in blobs
    assert (tmp_path / "elsewhere" / "erasure-ledger.json").exists()
    target = Dir(tmp_path / "new", fill=False)
    try:
        restore_from(target.services, str(tmp_path / "elsewhere"))
        assert target.turns("ivy") == 0 and target.turns("jon") == 10
    finally:
        target.close()


def test_a_copy_taken_before_the_erasure_keeps_the_user_out_where_a_ledger_knows_and_warns_where_none_can(tmp_path):
    src = Dir(tmp_path / "data")
    default = tmp_path / "data-backups"
    try:
        backup_now(src.services)
        shutil.copytree(default, tmp_path / "copy")  # an operator's copy, made before the erasure
        _erase(src, "ivy")
        assert MARK["ivy"].encode() in _bytes(tmp_path / "copy")  # nothing can reach an unknown copy
        # Into the same data dir: its ledger knows the erasure.
        report = restore_from(src.services, str(tmp_path / "copy"), allow_non_empty=True)
        assert src.turns("ivy") == 0 and src.turns("jon") == 10
        assert any(a["where"].startswith("data dir") and a["erasures"] == 1 for a in report["ledgers_applied"])
        assert report["warnings"] == []
    finally:
        src.close()
    # Into a new data dir on the machine where the erasing data dir lives: the manifest names it.
    near = Dir(tmp_path / "near", fill=False)
    try:
        report = restore_from(near.services, str(tmp_path / "copy"))
        assert near.turns("ivy") == 0 and near.turns("jon") == 10
        assert f"data dir {(tmp_path / 'data').resolve()}" in [a["where"] for a in report["ledgers_applied"]]
        assert report["warnings"] == []
    finally:
        near.close()
    # Into a new data dir where the erasing data dir and its locations are out of reach: nothing can know.
    shutil.move(tmp_path / "data", tmp_path / "gone")
    shutil.move(default, tmp_path / "gone-backups")
    far = Dir(tmp_path / "far", fill=False)
    try:
        report = restore_from(far.services, str(tmp_path / "copy"))
        assert len(report["warnings"]) == 1 and "cannot know" in report["warnings"][0]
        assert far.turns("ivy") == 10  # what the warning says: this restore could not keep her out
    finally:
        far.close()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _plant_partial(root, sid: str, pid: int, text: str):
    folder = root / f"{PARTIAL}{sid}"
    (folder / "vectors.turns").mkdir(parents=True)
    rows = [{"user_id": u, "record": {"text": f"{text} {m}"}} for u, m in MARK.items()]
    (folder / "vectors.turns" / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / WRITER).write_text(json.dumps({"host": os.uname().nodename, "pid": pid, "at": 0}))
    return folder


def test_partial_backups_are_removed_when_stale_and_scrubbed_while_written(tmp_path):
    src = Dir(tmp_path / "data")
    where = tmp_path / "b"
    try:
        backup_now(src.services, str(where))
        stale = _plant_partial(where, "20260101T000000000000Z-dead00", _dead_pid(), "stale")
        live = _plant_partial(where, "20260101T000000000000Z-live00", os.getpid(), "live")
        report = _erase(src, "ivy")
        loc = str(where.resolve())
        assert report["partials"][loc]["removed"] == ["20260101T000000000000Z-dead00"]
        assert report["partials"][loc]["scrubbed"] == {"20260101T000000000000Z-live00": 1}
        assert not stale.exists()
        text = (live / "vectors.turns" / "points.jsonl").read_text()
        assert MARK["ivy"] not in text and MARK["jon"] in text
        # The next backup cleans a killed backup's leftover (and leaves the live one alone).
        stale = _plant_partial(where, "20260101T000000000000Z-dead01", _dead_pid(), "stale")
        backup_now(src.services, str(where))
        assert not stale.exists() and live.exists()
        assert LocalLocation(where).partials() == ["20260101T000000000000Z-live00"]
    finally:
        src.close()


def test_backups_list_cleans_a_killed_backups_partial(tmp_path):
    where = tmp_path / "b"
    stale = _plant_partial(where, "20260101T000000000000Z-dead02", _dead_pid(), "stale")
    env = {**os.environ, "LUMINA_DATA_DIR": str(tmp_path / "data"), "LUMINA_LLM": "offline"}
    out = subprocess.run(["lumina-memory", "backups", "--list", "--location", str(where), "--json"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [] and not stale.exists()
    assert clean_partials(LocalLocation(where)) == []


def test_an_unreachable_location_is_reported_owed_and_scrubbed_by_the_next_backup(tmp_path):
    src = Dir(tmp_path / "data")
    where = tmp_path / "usb"
    try:
        backup_now(src.services, str(where))
        shutil.move(where, tmp_path / "usb-unplugged")  # the disk is unmounted
        report = _erase(src, "ivy")
        assert "missing" in report["unreachable"][str(where.resolve())]
        assert not where.exists()  # not created anew where the disk mounts
        assert known_locations.owed(tmp_path / "data") == {str(where.resolve()): ["ivy"]}
        shutil.move(tmp_path / "usb-unplugged", where)
        assert MARK["ivy"].encode() in _bytes(where)
        backup_now(src.services)  # maintenance's backups retry what is owed
        assert known_locations.owed(tmp_path / "data") == {}
        blobs = _bytes(where)
        assert MARK["ivy"].encode() not in blobs and MARK["jon"].encode() in blobs
    finally:
        src.close()
