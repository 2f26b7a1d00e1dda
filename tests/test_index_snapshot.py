"""The recall index kept in a file (issue 19: a process that starts loads a user's index instead of building it
inside their first recall): the loaded index is the built one; a snapshot is used only for the turns it was made
from (a rewrite, a deletion, another reader and a torn file are caught and it is removed); turns archived after it
are added; it is written at write time and erased with the user, never backed up, and emptied by a restore."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.nodes.retrieval import index_snapshot
from lumina_memory.nodes.retrieval.keyword_index import KeywordIndex
from lumina_memory.nodes.retrieval.turn_index import TurnIndex, TurnTable, UserTurns
from lumina_memory.nodes.retrieval.turn_reads import reader
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.recall_snapshots import RecallSnapshotPlace, SnapshotFiles

from .test_turn_index import _same
from .test_turn_reads import CUT, _history, _same_passages

ALICE, BOB = "alice", "bob"


@pytest.fixture
def archive(tmp_path):
    archive = DuckDBArchive(tmp_path)
    yield archive
    archive.close()


def _index(tmp_path, min_turns: int = 1) -> TurnIndex:
    return TurnIndex(passage_cut=CUT, snapshots=SnapshotFiles(tmp_path / "snapshots"), snapshot_min_turns=min_turns)


def _keep(index: TurnIndex, archive, user: str) -> bool:
    """What the flush's last stage does (nodes.retrieval.warm): the current index, then its snapshot."""
    return index.keep_snapshot(user, index.get(archive, user))


def test_a_fresh_process_loads_the_index_it_would_have_built(archive, tmp_path):
    turns = _history(ALICE)
    archive.put_turns(turns)
    first = _index(tmp_path)
    assert _keep(first, archive, ALICE)
    assert first.summary()["snapshots_written"] == 1

    fresh = _index(tmp_path)  # what a process that starts holds
    loaded = fresh.get(archive, ALICE)
    summary = fresh.summary()
    assert summary["snapshots_loaded"] == 1 and summary["rebuilds"] == 0
    assert summary["turns_read"] == summary["reads_decoded"] == 0  # nothing read or decoded: loaded
    built = UserTurns.build(archive.all_turns(ALICE), CUT)
    _same(loaded, built)
    _same_passages(loaded, built)
    assert len(loaded.passage_of) > 2
    # And it answers as the built one does.
    for query in (["moka"], ["python", "version"], ["金閣寺"], ["trail"]):
        assert loaded.search(query, 5) == built.search(query, 5)


def test_turns_archived_after_the_snapshot_are_added_as_a_top_up_adds_them(archive, tmp_path):
    turns = _history(ALICE)
    archive.put_turns(turns[:6])
    assert _keep(_index(tmp_path), archive, ALICE)
    archive.put_turns(turns[6:])  # written by a process that then stopped before its next snapshot

    fresh = _index(tmp_path)
    loaded = fresh.get(archive, ALICE)
    assert fresh.summary()["snapshots_loaded"] == 1 and fresh.summary()["rebuilds"] == 0
    built = UserTurns.build(archive.all_turns(ALICE), CUT)
    _same(loaded, built)
    _same_passages(loaded, built)


@pytest.mark.parametrize("change", ["rewrite", "delete", "reader", "torn", "other_user"])
def test_a_snapshot_that_does_not_fit_the_archive_is_removed_and_the_index_built(archive, tmp_path, change):
    turns = _history(ALICE)
    archive.put_turns(turns)
    files = SnapshotFiles(tmp_path / "snapshots")
    assert _keep(_index(tmp_path), archive, ALICE)
    path = files.existing(ALICE)
    cut = CUT
    if change == "rewrite":  # same ids, same count, one text changed (a count or a sequence number misses it)
        archive.put_turns([turns[1]._replace(text="Melanie: a different trail") if hasattr(turns[1], "_replace")
                           else turns[1].model_copy(update={"text": "Melanie: a different trail"})])
    elif change == "delete":
        archive.delete_turns(ALICE, [turns[0].turn_id])
    elif change == "reader":
        cut = (64, 100)
    elif change == "torn":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif change == "other_user":  # Bob's file put where Alice's would be: it names its user
        archive.put_turns(_history(BOB))
        assert _keep(_index(tmp_path), archive, BOB)
        files.existing(BOB).replace(path)

    fresh = TurnIndex(passage_cut=cut, snapshots=files, snapshot_min_turns=1)
    got = fresh.get(archive, ALICE)
    assert fresh.summary()["snapshots_loaded"] == 0 and fresh.summary()["rebuilds"] == 1
    assert fresh.summary()["snapshots_dropped"] == 1 and files.existing(ALICE) is None
    built = UserTurns.build(archive.all_turns(ALICE), cut)
    _same(got, built)
    _same_passages(got, built)


def test_a_snapshot_is_written_once_worth_it_and_again_after_a_tenth_more_turns(archive, tmp_path):
    turns = [t.model_copy(update={"turn_id": f"{t.turn_id}-{k}", "source_id": f"{t.source_id}-{k}", "ts": t.ts + 1000 * k})
             for k in range(3) for t in _history(ALICE)]
    index = _index(tmp_path, min_turns=12)
    files = index.snapshots
    archive.put_turns(turns[:9])
    assert not _keep(index, archive, ALICE) and files.existing(ALICE) is None  # too few turns to be worth it
    archive.put_turns(turns[9:20])
    assert _keep(index, archive, ALICE)
    archive.put_turns(turns[20:21])  # 21 < 20 × 1.1: not yet
    assert not _keep(index, archive, ALICE)
    assert index_snapshot.meta_of(files.existing(ALICE))["turns"] == 20
    archive.put_turns(turns[21:])
    assert _keep(index, archive, ALICE)
    assert index_snapshot.meta_of(files.existing(ALICE))["turns"] == len(turns)
    # A process that starts knows what is kept from the file, not from memory.
    assert not _keep(_index(tmp_path, min_turns=12), archive, ALICE)
    assert TurnIndex(passage_cut=CUT, snapshots=files, snapshot_min_turns=0).keep_snapshot(
        ALICE, UserTurns.build(turns, CUT)) is False  # 0: none written


def test_the_turns_vectors_come_with_the_snapshot_only_for_the_same_collection(archive, tmp_path):
    archive.put_turns(_history(ALICE))
    index = _index(tmp_path)
    built = index.get(archive, ALICE)
    rng = np.random.default_rng(0)
    built.vectors = rng.standard_normal((len(built.turns), 8)).astype(np.float16)
    built.has_vector = np.ones(len(built.turns), dtype=bool)
    built.has_vector[3] = False

    class Collection:  # only its name and size are read by a snapshot; vectors come from the file
        collection, dim = "turns_usem3_8", 8

    assert index.keep_snapshot(ALICE, built, Collection())
    path = index.snapshots.existing(ALICE)
    table = TurnTable.of(archive.all_turns(ALICE))
    same = index_snapshot.load(path, ALICE, reader(CUT), table, CUT, "turns_usem3_8/8")
    assert np.array_equal(same.vectors, built.vectors) and np.array_equal(same.has_vector, built.has_vector)
    other = index_snapshot.load(path, ALICE, reader(CUT), table, CUT, "turns_e5_384/384")
    assert other.vectors is None  # another embedder's vectors are fetched from its own collection


def test_erasure_removes_the_file_and_a_write_racing_it_does_not_bring_it_back(archive, tmp_path):
    archive.put_turns(_history(ALICE))
    archive.put_turns(_history(BOB))
    index = _index(tmp_path)
    files = index.snapshots
    assert _keep(index, archive, ALICE) and _keep(index, archive, BOB)
    place = RecallSnapshotPlace(SnapshotFiles(tmp_path / "snapshots"))  # the registry's own handle
    assert place.count(ALICE) == place.count(BOB) == 1
    current = index.get(archive, ALICE)
    seen = files.removals
    assert place.erase(ALICE) == 1 and place.count(ALICE) == 0 and place.count(BOB) == 1
    # A write that decided before the erasure finishes after it: dropped.
    assert files.write(ALICE, lambda handle: index_snapshot.write(
        handle, index_snapshot.arrays_of(current, ALICE, reader(CUT), "")), seen) is False
    assert place.count(ALICE) == 0
    # An index the erasure forgot is not written again.
    index.forget(BOB)
    assert place.erase(BOB) == 1
    assert index.keep_snapshot(BOB, current) is False and place.count(BOB) == 0
    assert list((tmp_path / "snapshots").iterdir()) == []


def test_backups_leave_snapshots_out_and_a_restore_empties_the_folder(archive, tmp_path):
    archive.put_turns(_history(ALICE))
    index = _index(tmp_path)
    assert _keep(index, archive, ALICE)
    place = RecallSnapshotPlace(SnapshotFiles(tmp_path / "snapshots"))
    assert place.export(tmp_path / "backup") == 0 and not (tmp_path / "backup").exists()
    assert place.restore(tmp_path / "backup", lambda user: False) == 0
    assert place.count(ALICE) == 0
    # The running process writes them again at its next write-time stage, though it remembers having written them.
    assert _keep(index, archive, ALICE) and place.count(ALICE) == 1


def test_a_restore_makes_the_segment_index_kept_again(archive, tmp_path):
    files, first = _kept_segment_index(archive, tmp_path)
    RecallSnapshotPlace(SnapshotFiles(tmp_path / "snapshots")).restore(tmp_path / "backup", lambda user: False)
    assert files.existing(ALICE, "segments") is None
    assert first.keep_snapshot(archive, ALICE) and files.existing(ALICE, "segments") is not None


def test_files_are_private_and_named_by_a_hash_of_the_user(archive, tmp_path):
    files = SnapshotFiles(tmp_path / "snapshots")
    for hostile in ("../../etc/passwd", "a' OR 1=1 --", "x\x00", ""):
        with pytest.raises(InvalidInput):
            files.path_of(hostile)
    assert files.path_of("Alice") != files.path_of(ALICE)  # file systems that fold case keep them apart
    archive.put_turns(_history(ALICE))
    assert _keep(_index(tmp_path), archive, ALICE)
    (path,) = (tmp_path / "snapshots").iterdir()
    assert ALICE not in path.name and path.name.startswith("u-")
    assert path.stat().st_mode & 0o077 == 0 and (tmp_path / "snapshots").stat().st_mode & 0o077 == 0


def test_a_process_that_starts_answers_its_first_recall_from_the_snapshot_the_flush_wrote(tmp_path, demo_rows):
    """End to end: the flush's last stage writes the snapshot; a new process's first recall loads it and gives
    what a build gives; an erasure through the registry removes it."""
    from lumina_memory.graphs.registry import open_registry
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.retrieval.recall import recall

    from .conftest import Memory

    questions = ["猫の名前は？", "週末はどこに行った？", "What did we say about tea?"]
    first = Memory(tmp_path / "data", recall_snapshot_min_turns=10)
    try:
        replay(first.graph, ALICE, [dict(r, user_id=ALICE) for r in demo_rows[:60]], flush=True)
        assert first.services.turn_index.summary()["snapshots_written"] >= 1
        built = [[i["text"] for i in recall(first.services, ALICE, q, purpose="question", budget=300)] for q in questions]
    finally:
        first.close()
    again = Memory(tmp_path / "data", recall_snapshot_min_turns=10)
    try:
        loaded = [[i["text"] for i in recall(again.services, ALICE, q, purpose="question", budget=300)] for q in questions]
        summary = again.services.turn_index.summary()
        assert summary["snapshots_loaded"] == 1 and summary["rebuilds"] == 0 and summary["turns_read"] == 0
        assert again.services.keyword_index.summary()["snapshots_loaded"] == 1  # the segment index too
        assert loaded == built and any(loaded)
        with open_registry(again.services) as places:
            place = next(p for p in places if p.name == "recall_snapshots")
            assert place.count(ALICE) == 2  # the turn index's and the segment index's
            assert place.erase(ALICE) == 2 and place.count(ALICE) == 0
    finally:
        again.close()


def _segments(user: str, n: int, start: int = 0) -> list:
    from lumina_memory.stores.models import SegmentRecord

    texts = ["user: 京都で金閣寺を見たよ\nlumina: いいね", "user: I went hiking with my dogs\nnox: which trail?",
             "user: 猫のモカが3歳になった\nclarisse: おめでとう", "user: pottery class was fun\nlumina: what did you make?"]
    return [SegmentRecord(segment_id=f"{user}-s{k}", user_id=user, text=texts[k % 4] + f" #{k}", summary="",
                          keywords=[f"kw{k}"], start_ts=1000.0 + k, end_ts=1000.0 + k + 0.5, turn_ids=[], source_ids=[])
            for k in range(start, start + n)]


def _kept_segment_index(archive, tmp_path):
    """Alice's 12 segments indexed, and the index kept as a snapshot: (the files, that index)."""
    files = SnapshotFiles(tmp_path / "snapshots")
    archive.put_segments(_segments(ALICE, 12))
    first = KeywordIndex(snapshots=files)
    first.refresh(archive, ALICE)
    assert first.keep_snapshot(archive, ALICE)
    return files, first


def test_the_segment_index_loads_from_its_snapshot_and_catches_up(archive, tmp_path):
    files, first = _kept_segment_index(archive, tmp_path)
    assert files.existing(ALICE, "segments") is not None
    assert not first.keep_snapshot(archive, ALICE)  # nothing new: kept as it is
    archive.put_segments(_segments(ALICE, 3, start=12))  # after the snapshot

    fresh, built = KeywordIndex(snapshots=files), KeywordIndex()

    def ranked(index, query):  # equal scores may come in another order: the documents' order differs
        return sorted(((sid, round(score, 9)) for sid, score in index.search(archive, ALICE, query, 50)),
                      key=lambda hit: (-hit[1], hit[0]))

    for query in ("金閣寺", "hiking trail", "モカ", "kw13", "pottery"):
        assert ranked(fresh, query) == ranked(built, query) and ranked(built, query), query
    assert fresh.summary()["snapshots_loaded"] == 1 and built.summary()["snapshots_loaded"] == 0
    assert fresh.search(archive, ALICE, "kw14", 5)[0][0] == f"{ALICE}-s14"  # the catch-up's segment


def test_a_segment_snapshot_whose_segments_changed_is_removed(archive, tmp_path):
    files, first = _kept_segment_index(archive, tmp_path)
    # Forgetting clears a segment's text (same ids, same count): the snapshot no longer fits.
    assert archive.clear_segment_texts(ALICE, [f"{ALICE}-s1"]) == 1
    fresh = KeywordIndex(snapshots=files)
    assert sorted(fresh.search(archive, ALICE, "hiking", 50)) == sorted(KeywordIndex().search(archive, ALICE, "hiking", 50))
    assert fresh.summary()["snapshots_dropped"] == 1 and files.existing(ALICE, "segments") is None
    assert f"{ALICE}-s1" not in [sid for sid, _ in fresh.search(archive, ALICE, "hiking", 10)]
    # And a stale in-memory index is never kept: `first` still holds s1's old text (same count, so it did not
    # notice), which a snapshot would carry into the next process.
    first._snapshot_segments.clear()
    assert files.existing(ALICE, "segments") is None
    assert not first.keep_snapshot(archive, ALICE) and files.existing(ALICE, "segments") is None
