"""The residue test (L11): two users ingested and backed up, one erased, then every store's content and
every raw byte of the data dir and the backup location scanned for the erased user's strings and ids.

It walks the registry (export of every place = every table, key, payload, node, checkpoint and store
item; ``raw_paths`` of every place), so a place added later is scanned without changing this test.
The erased id, "alice", is a prefix of the other user's, "alice2": isolation is tested at the same time.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
from pathlib import Path

import pytest

from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user
from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, thread_config, replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

ERASED, KEPT = "alice", "alice2"
MARK = {ERASED: "ZEBRAMARKQX", KEPT: "OKAPIMARKQY"}
QUESTIONS = ("猫の名前と年齢って何だっけ？", "ノクスがおすすめしてくれた映画、なんだったっけ？")
# The erased id as a whole token: "alice" inside "alice2" is the other user.
ID_RE = re.compile(rb"(?:^|[^A-Za-z0-9_.@-])" + ERASED.encode() + rb"(?![A-Za-z0-9_.@-])")


def _rows(user: str) -> list[dict]:
    rows = [json.loads(line) for line in DEMO_TRANSCRIPT.open(encoding="utf-8") if line.strip()]
    return [dict(r, user_id=user, text=f"{r['text']} {MARK[user]}{i}") for i, r in enumerate(rows)]


_MAGIC = ((b"\x1f\x8b", gzip.decompress), (b"BZh", bz2.decompress), (b"\xfd7zXZ", lzma.decompress))


def _decoded(data: bytes) -> list[bytes]:
    """The bytes and, where they are a compressed stream (gzip, bz2, xz, zstd), their decompressed form."""
    out = [data]
    for magic, decode in _MAGIC:
        if data.startswith(magic):
            out.append(decode(data))
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        import zstandard

        out.append(zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 28))
    return out


def _has_id(blob: bytes) -> bool:
    start = blob.find(ERASED.encode())
    while start >= 0:
        if ID_RE.match(blob, max(0, start - 1)) or ID_RE.match(blob, start):
            return True
        start = blob.find(ERASED.encode(), start + 1)
    return False


def _hits(root: Path, needles: list[bytes]) -> list[str]:
    """Files under ``root`` whose bytes hold a needle or the erased id (as a whole token)."""
    found = []
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
    for path in files:
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            continue  # a socket, or gone while we walked
        for blob in _decoded(data):
            found += [f"{path}: {n[:40]!r}" for n in needles if n in blob]  # `in` is a fast byte search
            if _has_id(blob):
                found.append(f"{path}: the id {ERASED!r}")
    return sorted(set(found))


@pytest.fixture(scope="module")
def erased_world(tmp_path_factory):
    root = tmp_path_factory.mktemp("residue")
    # Snapshots of the recall index from the first turns (issue 19), so the raw scan covers them too.
    settings = make_settings(root / "data", backup_location=str(root / "backups"), recall_snapshot_min_turns=2)
    services, graph, conn = _open(settings)
    try:
        # Uncompressed on disk, so a raw scan can see text (DuckDB's FSST and Redis' LZF would hide it).
        services.stores.archive._db.live().execute("PRAGMA force_compression='uncompressed'")
        services.stores.midterm._client.config_set("rdbcompression", "no")
        for user in (ERASED, KEPT):
            replay(graph, user, _rows(user), flush=False)  # the last segment stays open in the checkpoint
        store = make_store(settings, embedder=services.embedder)
        for user in (ERASED, KEPT):
            store.put(("memories", user), "pet", {"text": f"cat Mugi {MARK[user]}"})
            store.put((user, "profile"), "name", {"text": f"likes tea {MARK[user]}"})
        store.close()
        answers = [[i["text"] for i in recall(services, KEPT, q, purpose="question", limit=5)] for q in QUESTIONS]
        with open_registry(services) as places:
            before = {p.name: p.count(KEPT) for p in places}
            ids_of_erased = [t.turn_id for t in services.stores.archive.all_turns(ERASED)]
            ids_of_erased += [s.segment_id for s in services.stores.archive.segments(ERASED)]
            planned = {p.name: p.count(ERASED) for p in places}
        backup_now(services)
        plan = erase_plan(services, ERASED)
        report = erase_user(services, ERASED, plan["token"], actor="test")
        with open_registry(services) as places:
            left = {p.name: p.count(ERASED) for p in places}
        # The user's thread had an open segment: a flush now must find nothing to archive.
        graph.invoke({"flush": True}, thread_config(ERASED), context={"user_id": ERASED, "respond": False})
        archived_after_flush = services.stores.archive.counts(ERASED)
        # That run made a new (empty) thread for the id; erasing again removes it before the raw scan.
        erase_user(services, ERASED, erase_plan(services, ERASED)["token"], actor="test")
        with open_registry(services) as places:
            after = {p.name: p.count(KEPT) for p in places}
            exported = root / "exported"
            for place in places:
                place.export(exported / place.name)
            raw = [path for place in places for path in place.raw_paths()]
        answers_after = [[i["text"] for i in recall(services, KEPT, q, purpose="question", limit=5)] for q in QUESTIONS]
        yield {
            "root": root, "plan": plan, "planned": planned, "report": report, "before": before, "after": after,
            "left": left, "ids": ids_of_erased, "answers": (answers, answers_after), "raw": raw,
            "exported": exported, "archived_after_flush": archived_after_flush,
        }
    finally:
        services.close()
        conn.close()
        stop_server(settings)


# Caches of texts not filed by user: erasure empties them whole, so their counts are everyone's.
SHARED_CACHES = ("cache.embedder", "cache.text_derivations")


def test_the_plan_counted_the_user_everywhere_they_were(erased_world):
    planned = erased_world["planned"]
    for name in ("midterm.redis", "archive.turn_archive", "archive.session_archive", "vectors.segments",
                 "vectors.turns", "graph", "store.items", "checkpoints",
                 "archive.memories", "archive.knowledge_items",  # the lifecycle's and the knowledge's rows
                 "cache.recall_reads",  # what recall keeps between queries (issue 19)
                 "recall_snapshots",  # the recall index kept in a file (issue 19)
                 "cache.text_derivations"):
        assert planned[name] > 0, name
    assert planned["store.items"] == 2
    assert erased_world["report"]["removed"]["archive.turn_archive"] == planned["archive.turn_archive"]


def test_nothing_of_the_erased_user_is_left_in_any_place(erased_world):
    left = {k: v for k, v in erased_world["left"].items() if k != "cache.embedder"}
    assert {k: v for k, v in left.items() if v} == {}


def test_a_flush_on_the_erased_users_thread_archives_nothing(erased_world):
    assert erased_world["archived_after_flush"] == {"turns": 0, "segments": 0}
    assert erased_world["planned"]["checkpoints"] == 1  # the thread held an open segment before


def test_the_other_users_counts_and_answers_are_unchanged(erased_world):
    before = {k: v for k, v in erased_world["before"].items() if k not in SHARED_CACHES}
    after = {k: v for k, v in erased_world["after"].items() if k not in SHARED_CACHES}
    assert before == after
    assert before["archive.turn_archive"] > 0 and before["store.items"] == 2
    answers, answers_after = erased_world["answers"]
    assert answers == answers_after and any(answers)


def test_no_store_content_holds_the_erased_users_strings(erased_world):
    needles = [MARK[ERASED].encode()] + [i.encode() for i in erased_world["ids"]]
    assert len(erased_world["ids"]) > 10
    assert _hits(erased_world["exported"], needles) == []
    # ...and the same scan does find the other user, so it would have found a leak.
    assert _hits(erased_world["exported"], [MARK[KEPT].encode()])


def test_no_raw_byte_in_the_data_dir_or_the_backups_holds_them(erased_world):
    root = erased_world["root"]
    needles = [MARK[ERASED].encode()] + [i.encode() for i in erased_world["ids"]]
    places = [root / "data", root / "backups", *erased_world["raw"]]
    hits = [h for where in places for h in _hits(where, needles)]
    assert hits == []
    assert _hits(root / "backups", [MARK[KEPT].encode()]), "the backup still holds the other user"
