"""Knowledge bases are erased and backed up with the rest (L10, L11): a per-user KB goes with its user
(records, passages, raw bytes, backups), a shared KB stays; a backup restores both into a new data dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.registry import open_registry
from lumina_memory.nodes.kb.add import add_files
from lumina_memory.nodes.kb.manage import list_kbs
from lumina_memory.nodes.kb.search import read_kb, search_kb
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings
from .kb_docs import long_text

ERASED, KEPT = "alice", "alice2"
MARK = {ERASED: "ZEBRAKBQX", KEPT: "OKAPIKBQY"}
SHARED_MARK = "LLAMAKBQZ"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _raw_hits(paths, needle: bytes) -> list[str]:
    found = []
    for root in paths:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
        found += [str(p) for p in files if needle in p.read_bytes()]
    return found


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb-erase")
    settings = make_settings(root / "data", backup_location=str(root / "backups"))
    services = open_services(settings)
    try:
        services.stores.archive._db.live().execute("PRAGMA force_compression='uncompressed'")  # a raw scan sees text
        add_files(services, "manual", [_write(root / "docs" / "manual.txt",
                                              long_text(f"共有マニュアルの目印は{SHARED_MARK}です。", 80))])
        for user in (ERASED, KEPT):
            add_files(services, "diary", [_write(root / user / "diary.txt",
                                                 long_text(f"私だけの合言葉は{MARK[user]}です。", 80))], user_id=user)
        backup_now(services)
        with open_registry(services) as places:
            planned = {p.name: p.count(ERASED) for p in places}
        report = erase_user(services, ERASED, erase_plan(services, ERASED)["token"], actor="test")
        with open_registry(services) as places:
            left = {p.name: p.count(ERASED) for p in places}
            raw = [path for place in places if place.name in ("vectors.kb",) or place.name.startswith("archive.")
                   for path in place.raw_paths()]
        yield {"root": root, "settings": settings, "services": services, "planned": planned, "report": report,
               "left": left, "raw": raw}
    finally:
        services.close()
        stop_server(settings)


def test_erasure_takes_the_users_kb_records_and_passages(world):
    planned, left = world["planned"], world["left"]
    assert planned["vectors.kb"] > 0 and planned["archive.kb_documents"] == 1 and planned["archive.kb_chunks"] > 0
    assert planned["archive.kb_bases"] == 1
    assert world["report"]["removed"]["vectors.kb"] == planned["vectors.kb"]
    assert {k: v for k, v in left.items() if k.startswith(("vectors.kb", "archive.kb_")) and v} == {}


def test_the_other_user_and_the_shared_kb_are_untouched(world):
    services = world["services"]
    kept = search_kb(services, "合言葉", user_id=KEPT, names=["diary"], limit=1)
    assert MARK[KEPT] in kept[0]["text"]
    shared = search_kb(services, "共有マニュアルの目印", user_id=KEPT, names=["manual"], limit=1)
    assert SHARED_MARK in shared[0]["text"]
    assert {k["kb"] for k in list_kbs(services, ERASED)} == {"manual"}
    assert all(MARK[ERASED] not in h["text"] for h in search_kb(services, "合言葉", user_id=ERASED, limit=20))


def test_no_raw_byte_of_the_erased_users_kb_is_left(world):
    root = world["root"]
    needle = MARK[ERASED].encode()
    assert _raw_hits([*world["raw"], root / "data", root / "backups"], needle) == []
    # ...while the same scan finds the kept user's KB, so it would have found a leak
    assert _raw_hits([root / "data"], MARK[KEPT].encode()) and _raw_hits([root / "backups"], MARK[KEPT].encode())


def test_a_backup_restores_shared_and_per_user_kbs_without_the_erased_user(world, tmp_path):
    settings = make_settings(tmp_path / "restored")
    services = open_services(settings)
    try:
        report = restore_from(services, str(world["root"] / "backups"))
        assert report["restored"]["vectors.kb"] > 0 and report["restored"]["archive.kb_documents"] == 2
        hit = search_kb(services, "共有マニュアルの目印", names=["manual"], limit=1)[0]
        assert SHARED_MARK in hit["text"] and SHARED_MARK in read_kb(services, hit["id"])
        kept = search_kb(services, "合言葉", user_id=KEPT, names=["diary"], limit=1)[0]
        assert MARK[KEPT] in kept["text"] and read_kb(services, kept["id"], user_id=KEPT)
        assert {(k["kb"], k["user_id"]) for k in list_kbs(services, everyone=True)} == {("manual", None), ("diary", KEPT)}
        assert all(MARK[ERASED] not in h["text"] for h in search_kb(services, "合言葉", user_id=ERASED, limit=20))
    finally:
        services.close()
        stop_server(settings)
