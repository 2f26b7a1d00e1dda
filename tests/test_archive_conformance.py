"""ArchiveStore conformance on a real DuckDB file and on a real PostgreSQL (each behaviour test runs on both), and
the one-process-per-data-dir lock of the embedded file.

Cross-process checks run a second Python interpreter (``sys.executable -c``): DuckDB's file lock and
flock are per process, so only another process can observe them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from lumina_memory.stores.archive_duckdb import ARCHIVE_FILENAME, DuckDBArchive
from lumina_memory.stores.archive_postgres import PostgresArchive
from lumina_memory.stores.archive_sql import SqlArchive
from lumina_memory.stores.datadir_lock import DataDirLock, read_holder
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import segment_id, turn_id
from lumina_memory.stores.models import SegmentRecord, Turn
from lumina_memory.stores.protocols import ArchiveStore

from .archive_engines import ENGINES, open_archive
from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
HOSTILE = "'); DROP TABLE turn_archive; -- 「映画が好き」😀 \"quoted\" \\ back\\slash\n\ttab"


def make_turn(user: str, n: int, ts: float | None = None, text: str | None = None, seg: str = "") -> Turn:
    source = f"D1:{n}"
    return Turn(
        turn_id=turn_id(user, source), source_id=source, user_id=user, speaker="user" if n % 2 else "lumina",
        text=text if text is not None else f"turn {n} of {user}", ts=float(n if ts is None else ts), segment_id=seg,
    )


def make_segment(user: str, turns: list[Turn], end_ts: float, summary: str = "summary") -> SegmentRecord:
    return SegmentRecord(
        segment_id=segment_id(user, turns[0].turn_id), user_id=user,
        turn_ids=[t.turn_id for t in turns], source_ids=[t.source_id for t in turns],
        characters=["lumina", "nox"], start_ts=turns[0].ts, end_ts=end_ts, summary=summary,
        keywords=["映画", "weekend", "it's"], embedding=[0.123456789, -1.0, 3.5e-3, 0.0, 1e-7],
        importance=0.625, valence=-0.25, domain="hobby", close_reason="idle", text="user: hi\nlumina: hello",
        summary_method="offline",
    )


def run_py(code: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], check=False, capture_output=True, text=True, timeout=timeout,
        env=env, cwd=str(REPO),
    )


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def duckdb_archive(data_dir: Path) -> Iterator[DuckDBArchive]:
    store = DuckDBArchive(data_dir)
    yield store
    store.close()


@pytest.fixture(params=ENGINES)
def archive(request: pytest.FixtureRequest, data_dir: Path) -> Iterator[SqlArchive]:
    """The archive on each engine: a DuckDB file in a data dir, or a database of the test's own on the private
    PostgreSQL."""
    store = open_archive(request, data_dir)
    yield store
    store.close()


def test_protocol_and_file_location(duckdb_archive: DuckDBArchive, data_dir: Path) -> None:
    assert isinstance(duckdb_archive, ArchiveStore)
    assert duckdb_archive.backend == "duckdb"
    assert (data_dir / ARCHIVE_FILENAME).exists()


def test_postgres_archive_is_an_archive_store(pg_uri: str) -> None:
    with PostgresArchive(pg_uri, timeout=10) as store:
        assert isinstance(store, ArchiveStore)
        assert store.backend == "postgres"
        assert "password" not in repr(store) and store.data_dir in repr(store)


def test_round_trip_turns_and_segment(archive: SqlArchive) -> None:
    turns = [make_turn("alice", n) for n in range(1, 5)]
    archive.put_turns(turns)
    seg = make_segment("alice", turns, end_ts=4.0)
    archive.put_segment(seg)

    assert archive.all_turns("alice") == turns
    got = archive.get_segment("alice", seg.segment_id)
    assert got is not None
    assert got.model_dump(exclude={"embedding"}) == seg.model_dump(exclude={"embedding"})
    assert len(got.embedding) == len(seg.embedding)
    assert all(abs(a - b) <= 1e-6 for a, b in zip(got.embedding, seg.embedding))
    assert archive.get_segment("alice", "no-such-segment") is None


def test_empty_lists_survive(archive: SqlArchive) -> None:
    turns = [make_turn("alice", 1)]
    seg = make_segment("alice", turns, 1.0).model_copy(update={"keywords": [], "embedding": [], "characters": []})
    archive.put_segment(seg)
    got = archive.get_segment("alice", seg.segment_id)
    assert got is not None and got.keywords == [] and got.embedding == [] and got.characters == []


def test_idempotent_writes_and_segment_id_update(archive: SqlArchive) -> None:
    turns = [make_turn("alice", n) for n in range(1, 4)]
    seg = make_segment("alice", turns, 3.0)
    for _ in range(2):
        archive.put_turns(turns)
        archive.put_segment(seg)
    assert archive.counts("alice") == {"turns": 3, "segments": 1}
    # A turn is first archived under the open segment, then again once its segment closes.
    closed = [t.model_copy(update={"segment_id": seg.segment_id}) for t in turns]
    archive.put_turns(closed + closed[:1])  # a repeat inside one batch is fine too
    assert archive.counts("alice") == {"turns": 3, "segments": 1}
    assert [t.segment_id for t in archive.all_turns("alice")] == [seg.segment_id] * 3
    archive.put_turns([])
    assert archive.counts() == {"turns": 3, "segments": 1}


def test_has_turn_and_get_turns_order(archive: SqlArchive) -> None:
    turns = [make_turn("alice", n) for n in range(1, 6)]
    archive.put_turns(turns)
    assert archive.has_turn("alice", turns[0].turn_id)
    assert not archive.has_turn("alice", turn_id("alice", "D9:9"))
    asked = [turns[3].turn_id, "missing", turns[0].turn_id, turns[4].turn_id]
    assert [t.turn_id for t in archive.get_turns("alice", asked)] == [turns[3].turn_id, turns[0].turn_id, turns[4].turn_id]
    assert archive.get_turns("alice", []) == []


def test_all_turns_keeps_arrival_order_on_equal_timestamps(archive: SqlArchive) -> None:
    # LoCoMo-style: a whole session shares one timestamp; transcript order must survive.
    first = [make_turn("alice", n, ts=100.0) for n in (7, 3, 9)]
    second = [make_turn("alice", n, ts=100.0) for n in (1, 5)]
    archive.put_turns(first)
    archive.put_turns(second)
    archive.put_turns(first)  # re-archiving does not move turns to the end
    assert [t.source_id for t in archive.all_turns("alice")] == ["D1:7", "D1:3", "D1:9", "D1:1", "D1:5"]


def test_segments_newest_first_with_limit(archive: SqlArchive) -> None:
    turns = [make_turn("alice", n) for n in range(1, 7)]
    archive.put_turns(turns)
    for i, end in enumerate((20.0, 50.0, 10.0)):
        archive.put_segment(make_segment("alice", turns[i * 2 : i * 2 + 2], end_ts=end))
    assert [s.end_ts for s in archive.segments("alice")] == [50.0, 20.0, 10.0]
    assert [s.end_ts for s in archive.segments("alice", limit=2)] == [50.0, 20.0]
    assert archive.segments("alice", limit=0) == []
    assert archive.segments("nobody") == []


def test_user_isolation(archive: SqlArchive) -> None:
    a_turns = [make_turn("alice", n) for n in range(1, 4)]
    b_turns = [make_turn("bob", n) for n in range(1, 3)]
    archive.put_turns(a_turns + b_turns)
    a_seg, b_seg = make_segment("alice", a_turns, 3.0), make_segment("bob", b_turns, 2.0)
    archive.put_segment(a_seg)
    archive.put_segment(b_seg)
    assert archive.counts("alice") == {"turns": 3, "segments": 1}
    assert archive.counts("bob") == {"turns": 2, "segments": 1}
    assert archive.counts() == {"turns": 5, "segments": 2}
    assert not archive.has_turn("bob", a_turns[0].turn_id)
    assert archive.get_turns("bob", [t.turn_id for t in a_turns]) == []
    assert archive.get_segment("bob", a_seg.segment_id) is None
    assert [s.segment_id for s in archive.segments("bob")] == [b_seg.segment_id]
    assert {t.user_id for t in archive.all_turns("bob")} == {"bob"}


def test_delete_user_and_audit(archive: SqlArchive) -> None:
    a_turns = [make_turn("alice", n) for n in range(1, 4)]
    b_turns = [make_turn("bob", n) for n in range(1, 3)]
    archive.put_turns(a_turns + b_turns)
    archive.put_segment(make_segment("alice", a_turns, 3.0))
    archive.put_segment(make_segment("bob", b_turns, 2.0))
    archive.append_audit("ingest", "alice", "3 turns")
    archive.append_audit("ingest", "bob", "2 turns")
    archive.append_audit("segment_closed", "alice", "idle")

    assert archive.delete_user("alice") == 4
    assert archive.counts("alice") == {"turns": 0, "segments": 0}
    assert archive.counts("bob") == {"turns": 2, "segments": 1}
    events = archive.audit("alice")
    assert [e["event"] for e in events] == ["ingest", "segment_closed", "user_erased"]
    assert events[-1]["detail"] == "turns=3 segments=1"  # counts only, no content
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert all(e["user_id"] == "alice" for e in events)
    assert [e["event"] for e in archive.audit("bob")] == ["ingest"]
    assert archive.delete_user("alice") == 0
    assert [e["event"] for e in archive.audit("alice")][-2:] == ["user_erased", "user_erased"]


def test_audit_is_append_only_in_order(archive: SqlArchive) -> None:
    for i in range(5):
        archive.append_audit(f"event{i}", "alice", f"detail {i}")
    rows = archive.audit("alice")
    assert [r["event"] for r in rows] == [f"event{i}" for i in range(5)]
    assert all(rows[i]["at"] <= rows[i + 1]["at"] for i in range(4))
    assert set(rows[0]) == {"seq", "at", "event", "user_id", "detail"}
    with pytest.raises(InvalidInput):
        archive.append_audit("", "alice")


def test_persistence_across_reopen(data_dir: Path) -> None:
    turns = [make_turn("alice", n) for n in range(1, 4)]
    seg = make_segment("alice", turns, 3.0)
    with DuckDBArchive(data_dir) as store:
        store.put_turns(turns)
        store.put_segment(seg)
        store.append_audit("ingest", "alice")
    with DuckDBArchive(data_dir) as store:
        assert store.all_turns("alice") == turns
        got = store.get_segment("alice", seg.segment_id)
        assert got is not None and got.turn_ids == seg.turn_ids and got.keywords == seg.keywords
        assert [e["event"] for e in store.audit("alice")] == ["ingest"]
        store.put_turns([make_turn("alice", 4)])
        assert store.counts("alice") == {"turns": 4, "segments": 1}
    # Durable on return: a process killed right after writing (no close, no checkpoint) loses nothing.
    r = run_py(
        f"""
        import os
        from lumina_memory.stores.archive_duckdb import DuckDBArchive
        from lumina_memory.stores.models import Turn
        s = DuckDBArchive({str(data_dir)!r})
        s.put_turns([Turn(turn_id="crash-1", source_id="c1", user_id="alice", speaker="user", text="x", ts=9.0)])
        os._exit(0)
        """
    )
    assert r.returncode == 0, r.stderr
    with DuckDBArchive(data_dir) as store:
        assert store.has_turn("alice", "crash-1")


def test_hostile_text_stored_verbatim(archive: SqlArchive) -> None:
    turn = make_turn("alice", 1, text=HOSTILE)
    archive.put_turns([turn])
    seg = make_segment("alice", [turn], 1.0, summary=HOSTILE)
    archive.put_segment(seg)
    assert archive.all_turns("alice")[0].text == HOSTILE
    got = archive.get_segment("alice", seg.segment_id)
    assert got is not None and got.summary == HOSTILE
    archive.append_audit("note", "alice", HOSTILE)
    assert archive.audit("alice")[-1]["detail"] == HOSTILE
    assert archive.counts() == {"turns": 1, "segments": 1}  # the table is still there
    # Ids are validated before any SQL runs; hostile ids never reach the database.
    with pytest.raises(InvalidInput):
        archive.counts("alice'; --")
    with pytest.raises(InvalidInput):
        archive.put_turns([turn.model_copy(update={"user_id": "x' OR '1'='1"})])


def test_in_memory_archive() -> None:
    with DuckDBArchive(":memory:") as store:
        store.put_turns([make_turn("alice", 1)])
        assert store.counts() == {"turns": 1, "segments": 0}


# --- cross-process locking -------------------------------------------------------------------------
def test_second_process_cannot_open_same_duckdb_file(duckdb_archive: DuckDBArchive, data_dir: Path) -> None:
    r = run_py(
        f"""
        import json
        from lumina_memory.stores.archive_duckdb import DuckDBArchive
        from lumina_memory.stores.errors import DataDirLocked
        try:
            DuckDBArchive({str(data_dir)!r})
        except DataDirLocked as e:
            print(json.dumps({{"holder": e.holder, "message": str(e)}}))
        """
    )
    assert r.returncode == 0, r.stderr  # any other exception (a raw duckdb error) fails here
    out = json.loads(r.stdout)
    assert f"pid={os.getpid()}" in out["holder"]
    assert str(os.getpid()) in out["message"] and "LUMINA_DATA_DIR" in out["message"]


def test_datadir_lock_across_processes(data_dir: Path) -> None:
    lock = DataDirLock(data_dir)
    with lock:
        assert f"pid={os.getpid()}" in read_holder(data_dir)
        r = run_py(
            f"""
            import json
            from lumina_memory.stores.datadir_lock import DataDirLock
            from lumina_memory.stores.errors import DataDirLocked
            try:
                DataDirLock({str(data_dir)!r}).acquire()
            except DataDirLocked as e:
                print(json.dumps({{"holder": e.holder, "message": str(e)}}))
            """
        )
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert f"pid={os.getpid()}" in out["holder"] and str(os.getpid()) in out["message"]
    assert read_holder(data_dir) == ""  # released: no stale holder left behind

    # Released on process exit, however abrupt: a child takes the lock and dies without releasing.
    r = run_py(
        f"""
        import os
        from lumina_memory.stores.datadir_lock import DataDirLock
        DataDirLock({str(data_dir)!r}).acquire()
        print(os.getpid(), flush=True)
        os._exit(0)
        """
    )
    assert r.returncode == 0, r.stderr
    assert f"pid={r.stdout.strip()}" in read_holder(data_dir)  # its description remains...
    with DataDirLock(data_dir):  # ...but the flock went with the process
        assert f"pid={os.getpid()}" in read_holder(data_dir)


def test_datadir_lock_is_reentrant_in_process(data_dir: Path) -> None:
    first, second = DataDirLock(data_dir), DataDirLock(data_dir / "x" / "..")
    first.acquire()
    first.acquire()  # same instance twice: still one reference
    second.acquire()
    assert first.held and second.held
    first.release()
    # Still held by `second`: another process is refused.
    r = run_py(
        f"""
        from lumina_memory.stores.datadir_lock import DataDirLock
        from lumina_memory.stores.errors import DataDirLocked
        try:
            DataDirLock({str(data_dir)!r}).acquire()
            print("acquired")
        except DataDirLocked:
            print("locked")
        """
    )
    assert r.stdout.strip() == "locked", r.stderr
    second.release()
    second.release()  # releasing an unheld lock is a no-op
    assert not first.held and not second.held
    with DataDirLock(data_dir) as again:
        assert again.held


def test_concurrent_threads_share_one_archive(archive: SqlArchive) -> None:
    # LangGraph may run nodes in a thread pool; the archive serialises its one connection.
    from concurrent.futures import ThreadPoolExecutor

    def work(i: int) -> None:
        user = f"user{i % 3}"
        archive.put_turns([make_turn(user, i * 10 + k) for k in range(5)])
        archive.append_audit("ingest", user, str(i))
        archive.counts(user)
        archive.all_turns(user)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(work, range(12)))
    assert archive.counts() == {"turns": 60, "segments": 0}
    assert sum(len(archive.audit(f"user{u}")) for u in range(3)) == 12


def test_write_generation_moves_on_every_write_and_only_then(archive: SqlArchive) -> None:
    """Recall's in-process indexes trust an unchanged generation instead of re-counting rows, so every
    kind of write (and a failed one) must move it, and reads must not."""
    from lumina_memory.nodes.retrieval.turn_index import TurnIndex

    index = TurnIndex()
    turns = [make_turn("alice", n) for n in range(1, 4)]
    archive.put_turns(turns[:2])
    assert len(index.get(archive, "alice").turns) == 2
    before = archive.generation
    archive.all_turns("alice"), archive.counts("alice"), archive.segments("alice")
    assert archive.generation == before
    archive.put_turns(turns[2:])
    assert archive.generation > before
    assert len(index.get(archive, "alice").turns) == 3  # rebuilt: the new turn is searchable at once
    before = archive.generation
    archive.put_segment(make_segment("alice", turns, 3.0))
    assert archive.generation > before
    before = archive.generation
    with pytest.raises(RuntimeError):
        with archive.transaction():
            archive.put_turns([make_turn("alice", 9)])
            raise RuntimeError("crash inside the transaction")
    assert not archive.has_turn("alice", turn_id("alice", "D1:9"))
    if archive.backend == "duckdb":  # PostgreSQL's stamps roll back with the rows: see the rolled-back test below
        assert archive.generation > before
    archive.delete_user("alice")
    assert index.get(archive, "alice").turns == []


def test_a_users_write_stamp_moves_with_that_users_writes_only(archive: SqlArchive) -> None:
    """Per-user indexes compare ``generation_of(user)``: every write of the user's turns or segments (a
    batch, a failed transaction, an erase) moves it; another user's writes, the audit log and reads do not."""
    from lumina_memory.nodes.retrieval.turn_index import TurnIndex

    alice = [make_turn("alice", n) for n in range(1, 5)]
    archive.put_turns(alice[:2])
    stamp = archive.generation_of("alice")

    def moved() -> bool:
        nonlocal stamp
        now = archive.generation_of("alice")
        changed, stamp = now != stamp, now
        return changed

    archive.put_turns([make_turn("bob", 1)])
    archive.put_segments([make_segment("bob", [make_turn("bob", 1)], 1.0)])
    archive.append_audit("note", "alice", "audit rows are not memories")
    archive.all_turns("alice"), archive.counts("alice", which=("turns",)), archive.segments("alice")
    assert not moved()
    archive.put_turns(alice[2:3])
    assert moved()
    archive.put_segments([make_segment("alice", alice[:3], 3.0)])
    assert moved()
    archive.put_segment(make_segment("alice", alice[:3], 3.0, summary="again"))
    assert moved()
    with pytest.raises(RuntimeError):
        with archive.transaction():
            archive.put_turns([alice[3], make_turn("bob", 2)])
            raise RuntimeError("crash inside the transaction")
    assert not archive.has_turn("alice", alice[3].turn_id)
    if archive.backend == "duckdb":  # PostgreSQL's stamps roll back with the rows: see the rolled-back test below
        assert moved()
    stamp = archive.generation_of("alice")
    archive.delete_user("alice")
    assert moved()

    # So bob's writes leave alice's index alone: no count query on alice's next recall.
    index = TurnIndex()
    archive.put_turns(alice[:3])
    assert len(index.get(archive, "alice").turns) == 3
    asked: list[str] = []
    real = archive.counts
    archive.counts = lambda user=None, which=("turns", "segments"): asked.append(user) or real(user, which)  # type: ignore[method-assign]
    archive.put_turns([make_turn("bob", 3)])
    assert len(index.get(archive, "alice").turns) == 3 and asked == []
    archive.put_turns(alice[3:])
    assert len(index.get(archive, "alice").turns) == 4 and asked == ["alice"]


def test_counts_reads_only_the_tables_asked_for(archive: SqlArchive) -> None:
    turns = [make_turn("alice", n) for n in range(1, 4)]
    archive.put_turns(turns)
    archive.put_segment(make_segment("alice", turns, 3.0))
    assert archive.counts("alice") == {"turns": 3, "segments": 1}
    assert archive.counts("alice", which=("segments",)) == {"segments": 1}
    assert archive.counts(which=("turns",)) == {"turns": 3}
    with pytest.raises(InvalidInput, match="which"):
        archive.counts("alice", which=("turns; DROP TABLE turn_archive",))
    assert archive.counts("alice")["turns"] == 3


def test_put_segments_writes_a_batch_in_one_statement(archive: SqlArchive) -> None:
    turns = [make_turn("alice", n) for n in range(1, 7)]
    first = make_segment("alice", turns[:3], 3.0, summary="first")
    second = make_segment("alice", turns[3:], 6.0, summary=HOSTILE).model_copy(update={"keywords": [], "embedding": []})
    archive.put_segments([first, second])
    assert archive.counts("alice")["segments"] == 2
    assert archive.get_segment("alice", second.segment_id) == second
    got = archive.get_segment("alice", first.segment_id)
    assert got is not None and got.model_dump(exclude={"embedding"}) == first.model_dump(exclude={"embedding"})
    # Again, with one changed: an upsert; the last occurrence in a batch wins.
    changed = first.model_copy(update={"importance": 0.9, "summary": "rewritten"})
    archive.put_segments([first, changed, second])
    assert archive.counts("alice")["segments"] == 2
    assert archive.get_segment("alice", first.segment_id).summary == "rewritten"
    assert archive.recent_importances("alice", 10) == [second.importance, 0.9]
    with pytest.raises(InvalidInput):
        archive.put_segments([make_segment("bob", [make_turn("bob", 1)], 1.0), first.model_copy(update={"user_id": "../x"})])
    assert archive.counts("bob")["segments"] == 0
    archive.put_segments([])



def test_a_stamp_read_inside_a_rolled_back_transaction_matches_no_later_one(archive: SqlArchive) -> None:
    """What was read inside a transaction that rolls back (rows that never were) is kept under the stamp read
    there: no later stamp of the user may equal it, the next committed write's included."""
    turns = [make_turn("alice", n) for n in range(1, 4)]
    archive.put_turns(turns[:1])
    before = archive.generation_of("alice")
    with pytest.raises(RuntimeError):
        with archive.transaction():
            archive.put_turns([turns[1]])
            inside = archive.generation_of("alice")
            raise RuntimeError("rolled back")
    assert not archive.has_turn("alice", turns[1].turn_id)
    after_rollback = archive.generation_of("alice")
    archive.put_turns([turns[2]])
    later = archive.generation_of("alice")
    assert later not in (before, inside, after_rollback)
