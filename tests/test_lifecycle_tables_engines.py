"""The lifecycle, semantic and turn-read tables on both engines (an embedded DuckDB file, a real PostgreSQL): the
same behaviour from the same SQL, hostile ids and broken Unicode refused by name, one user never seeing another's
rows, and on PostgreSQL two processes sharing one memory (a write through one is read through the other, and
caches keyed by the users' write stamps follow)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.archive_postgres import PostgresArchive
from lumina_memory.stores.duckdb_connection import GuardedConnection
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import turn_id
from lumina_memory.stores.memories_duckdb import MemoryTable
from lumina_memory.stores.models import SegmentRecord, Turn
from lumina_memory.stores.pg_connection import PostgresConnection
from lumina_memory.stores.records import WRITTEN_BY_BATCH
from lumina_memory.stores.semantic_duckdb import SemanticTable
from lumina_memory.stores.turn_reads_duckdb import TurnReadsTable, text_md5
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

ALICE, BOB = "alice", "bob@example.org"
HOSTILE = ["../etc/passwd", "'; DROP TABLE memories; --", "x') OR ('1'='1", "MATCH (n) DETACH DELETE n",
           "a\ud800b", "", "x" * 129, "1..2"]


@pytest.fixture(params=["duckdb", "postgres"])
def archive(request, tmp_path) -> Iterator:
    store = DuckDBArchive(tmp_path) if request.param == "duckdb" else PostgresArchive(request.getfixturevalue("pg_uri"))
    try:
        yield store
    finally:
        store.close()


def _memory(user: str, memory_id: str, created: float, **over) -> dict:
    row = dict(memory_id=memory_id, user_id=user, created=created, category="work", intensity=0.6, valence="joy",
               valence_score=0.4, arousal=55.0, tags=["映画", "it's"], decay=0.1, memory_days=0.0, retention=0.6,
               level=1, protected=False, recalled=False, recall_count=0, unbatched=True, idle_days=0.0,
               archived_on=-1, archive_reason=0, revival_requested=False, emotion_path="offline")
    return row | over


def _segment(user: str, segment_id: str, ts: float) -> SegmentRecord:
    return SegmentRecord(segment_id=segment_id, user_id=user, turn_ids=[f"t-{segment_id}"], source_ids=["D:1"],
                         characters=["lumina"], start_ts=ts - 60, end_ts=ts, summary="s", keywords=["猫", "cat"],
                         embedding=[0.25, -0.5, 1.0], close_reason="topic", text=f"user: {segment_id}")


def _fill(archive, user: str, n: int) -> list[str]:
    ids = [f"{user[:1]}m:{i}" for i in range(n)]
    for i, memory_id in enumerate(ids):
        archive.put_segment(_segment(user, memory_id, 1000.0 + i))
    assert archive.memories.insert_new([_memory(user, m, 1000.0 + i) for i, m in enumerate(ids)]) == ids
    return ids


def _recalled(table: MemoryTable, user: str) -> list[str]:
    arrays, ids, _ = table.load([user])
    return [i for i, flag in zip(ids, arrays["recalled"]) if flag]


def test_tables_open_on_both_engines_and_again(archive):
    db = archive._db
    MemoryTable(db), SemanticTable(db), TurnReadsTable(db)  # step 1 applied once: a second open changes nothing
    with db.read() as con:
        steps = con.execute("SELECT component, step FROM lumina_migrations WHERE component IN "
                            "('memories', 'semantic', 'turn_reads') ORDER BY component, step").fetchall()
        assert steps == [("memories", 1), ("memories", 2), ("semantic", 1), ("turn_reads", 1)]
        for table in ("memories", "memory_relations", "lifecycle_days", "memory_forgotten", "lifecycle_outbox",
                      "semantic_memories", "turn_reads"):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)


def test_memories_encode_relate_flag_protect_and_delete(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 4)
    bob = _fill(archive, BOB, 2)
    assert table.insert_new([_memory(ALICE, ids[0], 5.0), _memory(ALICE, "am:new", 2000.0),
                             _memory(ALICE, "am:new", 3000.0, tags=[])]) == ["am:new"]  # the first of a pair
    assert [(r["created"], r["tags"]) for r in table.rows(ALICE, memory_ids=["am:new"])] == [(2000.0, ["映画", "it's"])]
    recent = table.recent_with_segments(ALICE, until=1002.0, limit=2, include=[ids[0]])
    assert [r["memory_id"] for r in recent] == [ids[2], ids[1], ids[0]]
    assert recent[0]["characters"] == ["lumina"] and recent[0]["keywords"] == ["猫", "cat"]
    assert np.allclose(recent[0]["embedding"], [0.25, -0.5, 1.0])
    mine = [r["memory_id"] for r in table.recent_with_segments(ALICE, until=1e9, limit=10)]
    assert [r["memory_id"] for r in table.recent_with_segments(ALICE, until=1e9, limit=10, include=bob)] == mine

    assert table.add_relations(ALICE, [(ids[1], ids[0], "continues", 0.9), (ids[0], ids[1], "continues", 0.1),
                                       (ids[2], ids[0], "references", 0.5)], day=7) == 2
    assert table.add_relations(ALICE, [(ids[0], ids[1], "continues", 0.3)], day=8) == 0  # either way round
    assert [(r["src"], r["dst"], r["kind"], r["created_day"]) for r in table.relations(ALICE)] == [
        (ids[1], ids[0], "continues", 7), (ids[2], ids[0], "references", 7)]
    assert table.owed(actions=("relations",)) == [(ALICE, "*", "relations")]

    assert table.mark_recalled(ALICE, [ids[0], ids[1], *bob], now=50.0, deliberate=False) == 2
    assert table.mark_recalled(ALICE, [ids[0]], now=51.0, deliberate=True) == 1
    view, gone = table.recall_view(ALICE)
    assert set(view) == {*ids, "am:new"} and gone == frozenset()
    assert view[ids[0]]["tags"] == ["映画", "it's"] and view[ids[0]]["level"] == 1
    assert _recalled(table, ALICE) == ids[:2] and _recalled(table, BOB) == []
    assert [r["revival_requested"] for r in table.rows(ALICE, memory_ids=ids[:1])] == [False]  # level 1: no revival

    assert table.set_protected(ALICE, ids[0], True, cap=1)["changed"] is True
    with pytest.raises(InvalidInput, match="MAX_PROTECTED_MEMORIES=1"):
        table.set_protected(ALICE, ids[1], True, cap=1)
    with pytest.raises(InvalidInput, match="not found"):
        table.set_protected(ALICE, bob[0], True, cap=5)  # bob's memory, through alice
    assert table.protected_count(ALICE) == 1 and table.protected_count(BOB) == 0

    assert table.delete(ALICE, bob[0]) == 0 and len(table.rows(BOB)) == 2
    assert table.delete(ALICE, ids[1]) == 1 and table.delete(ALICE, ids[1]) == 0
    assert [r["src"] for r in table.relations(ALICE)] == [ids[2]]
    rows = table.rows(ALICE, memory_ids=[ids[0], ids[2], bob[1]])
    assert [r["memory_id"] for r in rows] == [ids[0], ids[2]] and rows[0]["source_ids"] == ["D:1"]
    assert rows[0]["segment_text"] == f"user: {ids[0]}" and rows[0]["protected"] is True
    assert table.level_counts(ALICE) == {1: 4} and table.level_counts() == {1: 6}


def test_the_batch_day_round_trips_its_columns(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 5)
    _fill(archive, BOB, 3)
    table.start_users([ALICE], day=10, now=1.0)
    assert table.due_users(11) == {ALICE: 10, BOB: None} and table.due_users(10, users=[ALICE, BOB]) == {BOB: None}
    arrays, loaded, seq = table.load([BOB, ALICE])
    assert list(loaded) == [f"bm:{i}" for i in range(3)] + ids and list(arrays["group"]) == [0] * 3 + [1] * 5
    assert arrays["category"].dtype == np.int8 and set(arrays["category"]) == {1}  # "work"
    assert np.isnan(arrays["revival_requested_at"]).all() and arrays["level"].dtype == np.int8

    mine = slice(3, 8)
    values = {k: np.asarray(arrays[k][mine]).copy() for k in WRITTEN_BY_BATCH}
    values["level"][:] = [2, 3, 4, 1, 1]
    values["retention"][:] = [0.5, 0.25, 0.125, 1.0, 0.75]
    values["recall_count"][:] = [0, 1, 2, 3, 2**40]
    values["revival_requested_at"][:] = [np.nan, 12.5, np.nan, np.nan, np.nan]
    relations = [(ALICE, ids[0], ids[1], "same_topic", 0.8)]
    table.write_day([ALICE, ALICE], 11, seq[mine], values, {int(seq[3]): "要約 it's", int(seq[4]): None},
                    relations, [(ALICE, ids[2], "reembed")], [int(seq[7])], now=2.0)
    after, after_ids, _ = table.load([ALICE])
    assert list(after_ids) == ids[:4]
    assert list(after["level"]) == [2, 3, 4, 1] and list(after["recall_count"]) == [0, 1, 2, 3]
    assert list(after["retention"]) == [0.5, 0.25, 0.125, 1.0]
    assert np.isnan(after["revival_requested_at"][[0, 2, 3]]).all() and after["revival_requested_at"][1] == 12.5
    assert table.rows(ALICE, memory_ids=[ids[0]])[0]["text"] == "要約 it's"
    assert table.forgotten(ALICE, ids) == {ids[4]} and table.forgotten(BOB, ids) == set()
    assert table.relation_rows([ALICE, BOB]) == relations
    assert table.last_days() == {ALICE: 11} and table.due_users(12) == {ALICE: 11, BOB: None}
    assert table.owed() == [(ALICE, ids[2], "reembed")] and table.owed_count() == 1
    bob_before = table.load([BOB])
    table.queue(BOB, "bm:0", "payload")
    table.settle([(ALICE, ids[2], "reembed"), (BOB, "bm:1", "payload")])
    assert table.owed() == [(BOB, "bm:0", "payload")]
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(bob_before[0].values(), table.load([BOB])[0].values()))
    empty, none, no_seq = table.load(["nobody"])
    assert len(none) == 0 and len(no_seq) == 0 and all(len(v) == 0 for v in empty.values())


def test_semantic_memories_grow_shrink_and_stay_with_their_user(archive):
    table = archive.semantic

    def row(sid: str, user: str, episodes: list[str]) -> dict:
        return dict(semantic_id=sid, user_id=user, text="猫のモカ it's", keywords=["猫", "O'Neil"], episode_ids=episodes,
                    first_ts=1.0, last_ts=2.0, days=2, method="offline", created=1.0, updated=1.0)

    assert table.upsert([row("s1", ALICE, ["e1", "e2", "e3", "e4"]), row("s2", ALICE, ["e2", "e5"]),
                         row("s3", BOB, ["e2", "e3"])]) == 3
    assert table.upsert([row("s1", ALICE, ["e1", "e2", "e3", "e4", "e6"]) | {"updated": 5.0}]) == 1
    assert table.forget_episodes(ALICE, ["e2", "e3"]) == 1  # s2 is left with one episode
    items = table.items(ALICE)
    assert [(i["semantic_id"], i["episode_ids"], i["updated"]) for i in items] == [("s1", ["e1", "e4", "e6"], 5.0)]
    assert items[0]["keywords"] == ["猫", "O'Neil"]
    assert [i["episode_ids"] for i in table.items(BOB)] == [["e2", "e3"]]
    assert table.delete(ALICE, ["s3"]) == 0 and table.delete(ALICE, ["s1", "s1"]) == 1 and len(table.items(BOB)) == 1
    with pytest.raises(InvalidInput, match="text"):
        table.upsert([row("s4", ALICE, ["e1", "e2"]) | {"text": "bad \ud800"}])
    assert table.items(ALICE) == []


def test_turn_reads_follow_their_turns_text(archive):
    turns = [Turn(turn_id=turn_id(u, f"D:{n}"), source_id=f"D:{n}", user_id=u, speaker="user", text=f"猫 {u} {n}",
                  ts=float(n), segment_id="s1") for u in (ALICE, BOB) for n in range(3)]
    archive.put_turns(turns)
    table = archive.turn_reads
    a, b = turns[:3], turns[3:]
    rows = [(t.turn_id, text_md5(t.text), f"read {t.text}") for t in a]
    assert table.put(ALICE, "r1", rows + [(a[0].turn_id, text_md5(a[0].text), "again")]) == 3
    assert table.put(ALICE, "r1", [(b[0].turn_id, text_md5(b[0].text), "bob's")]) == 0  # not alice's turn
    assert table.put(ALICE, "r1", [(a[1].turn_id, text_md5("other text"), "stale")]) == 0
    stored = table.stored(ALICE, "r1")
    assert stored == {a[0].turn_id: "again", a[1].turn_id: f"read {a[1].text}", a[2].turn_id: f"read {a[2].text}"}
    assert table.stored(ALICE, "r2") == {} and table.stored(BOB, "r1") == {}
    assert table.stored(ALICE, "r1", [a[2].turn_id, b[1].turn_id]) == {a[2].turn_id: f"read {a[2].text}"}
    archive.put_turns([a[1].model_copy(update={"text": "rewritten"})])
    assert a[1].turn_id not in table.stored(ALICE, "r1")
    assert table.count(ALICE) == 2 and table.count(BOB) == 0


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_ids_are_refused_by_name_and_change_nothing(archive, bad):
    table = archive.memories
    ids = _fill(archive, ALICE, 2)
    calls = [
        lambda: table.insert_new([_memory(bad, "am:x", 1.0)]),
        lambda: table.insert_new([_memory(ALICE, bad, 1.0)]),
        lambda: table.mark_recalled(bad, ids, 1.0, False),
        lambda: table.mark_recalled(ALICE, [bad], 1.0, True),
        lambda: table.add_relations(ALICE, [(ids[0], bad, "continues", 1.0)], 1),
        lambda: table.rows(ALICE, memory_ids=[bad]),
        lambda: table.delete(bad, ids[0]),
        lambda: table.load([ALICE, bad]),
        lambda: table.queue(ALICE, bad, "reembed"),
        lambda: archive.semantic.forget_episodes(ALICE, [bad]),
        lambda: archive.semantic.delete(bad, ["s1"]),
        lambda: archive.turn_reads.stored(bad, "r1"),
    ]
    for call in calls:
        with pytest.raises(InvalidInput):
            call()
    assert [r["memory_id"] for r in table.rows(ALICE)] == ids and table.owed() == []


def test_broken_unicode_is_refused_by_name(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 1)
    for tags in (["ok", "\udc80"], ["a\x1fb"], [""], ["nul\x00"]):
        with pytest.raises(InvalidInput, match="tags"):
            table.insert_new([_memory(ALICE, "am:9", 1.0, tags=tags)])
    with pytest.raises(InvalidInput, match="emotion_path"):
        table.insert_new([_memory(ALICE, "am:9", 1.0, emotion_path="\ud800")])
    with pytest.raises(InvalidInput, match="keywords"):
        archive.semantic.upsert([dict(semantic_id="s1", user_id=ALICE, text="t", keywords=["a\x00"], episode_ids=["e1", "e2"],
                                      first_ts=1.0, last_ts=2.0, days=2, method="offline", created=1.0, updated=1.0)])
    arrays, _, seq = table.load([ALICE])
    values = {k: arrays[k] for k in WRITTEN_BY_BATCH}
    with pytest.raises(InvalidInput, match="texts"):
        table.write_day([ALICE], 3, seq, values, {int(seq[0]): "half \ud83d"}, None, [], [], 1.0)
    assert [r["memory_id"] for r in table.rows(ALICE)] == ids and table.last_days() == {}
    assert table.insert_new([_memory(ALICE, "am:bare", 9999.0, tags=[])]) == ["am:bare"]
    assert table.rows(ALICE, memory_ids=["am:bare"])[0]["tags"] == []


def test_two_processes_share_one_memory(pg_uri):
    first, second = PostgresArchive(pg_uri), PostgresArchive(pg_uri)
    try:
        ids = _fill(first, ALICE, 3)
        assert second.memories.insert_new([_memory(ALICE, ids[0], 1.0), _memory(ALICE, "am:b", 1.0)]) == ["am:b"]
        view, _ = second.memories.recall_view(ALICE)
        assert set(view) == {*ids, "am:b"}
        loads = second.memories._recall_cache.loads
        second.memories.recall_view(ALICE)
        assert second.memories._recall_cache.loads == loads  # the stamp did not move: kept
        first.memories.delete(ALICE, ids[1])
        view, _ = second.memories.recall_view(ALICE)  # the other process's write moved the shared stamp
        assert ids[1] not in view and second.memories._recall_cache.loads == loads + 1
        ids.remove(ids[1])

        # Recall flags kept by one process are set again once another process's batch consumed them.
        assert second.memories.mark_recalled(ALICE, [ids[0]], 5.0, False) == 1
        arrays, _, seq = first.memories.load([ALICE])
        values = {k: arrays[k] for k in WRITTEN_BY_BATCH}
        values["recalled"] = np.zeros(len(seq), bool)
        first.memories.write_day([ALICE], 1, seq, values, {}, None, [], [], 2.0)
        assert _recalled(second.memories, ALICE) == []
        assert second.memories.mark_recalled(ALICE, [ids[0]], 6.0, False) == 1
        assert _recalled(first.memories, ALICE) == [ids[0]]

        first.semantic.upsert([dict(semantic_id="s1", user_id=ALICE, text="t", keywords=[], episode_ids=ids,
                                    first_ts=1.0, last_ts=2.0, days=2, method="offline", created=1.0, updated=1.0)])
        assert second.semantic.forget_episodes(ALICE, ids[:2]) == 1 and first.semantic.items(ALICE) == []
        assert second.memories.level_counts(BOB) == {}
    finally:
        first.close()
        second.close()


def test_a_guarded_file_keeps_its_tables_across_reopen(tmp_path):
    path = str(tmp_path / "a.duckdb")
    db = GuardedConnection(path, str(tmp_path), "archive", ())
    MemoryTable(db).start_users([ALICE], 3, 1.0)
    db.close()
    db = GuardedConnection(path, str(tmp_path), "archive", ())
    try:
        assert MemoryTable(db).last_days() == {ALICE: 3}
    finally:
        db.close()


def test_a_postgres_connection_opens_the_tables_without_the_archive(pg_uri):
    db = PostgresConnection(pg_uri, "archive")
    try:
        table = MemoryTable(db)
        table.start_users([ALICE], 4, 1.0)
        assert table.last_days() == {ALICE: 4} and db.applied_steps("memories") == [1, 2]
        assert SemanticTable(db).items(ALICE) == [] and db.applied_steps("turn_reads") == []
    finally:
        db.close()
