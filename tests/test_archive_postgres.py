"""The archive on one PostgreSQL shared by several processes (issue 47): each ``PostgresArchive`` here stands for a
process (its own connection pool, its own in-process state), all on one real database of the private server.

What the conformance suite (tests/test_archive_conformance.py) runs on both engines is not repeated: here are what
only a shared server has: writes seen at once by the others, the same transcript from two writers, one audit
chain from several, erasure and backups of the server's tables (across engines), and a server that is down.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.archive_postgres import PostgresArchive
from lumina_memory.stores.audit import AuditPlace
from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.ids import AUDIT_TABLE, TURNS_TABLE

from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_archive_conformance import HOSTILE, make_segment, make_turn

KEY = b"k" * 32


@pytest.fixture
def two(pg_uri: str) -> Iterator[tuple[PostgresArchive, PostgresArchive]]:
    a, b = PostgresArchive(pg_uri, timeout=10), PostgresArchive(pg_uri, timeout=10)
    yield a, b
    a.close()
    b.close()


def _sql(archive, sql: str, params: list | None = None) -> None:
    """What someone with write access to the database does behind the archive's back."""
    with archive._db.tx() as con:
        con.execute(sql, params)


def test_each_process_sees_the_others_writes_at_once(two) -> None:
    a, b = two
    turns = [make_turn("alice", n) for n in range(1, 5)]
    stamp = b.generation_of("alice")
    b.missing_turns("alice", [t.turn_id for t in turns])  # b asks first: nothing is remembered as absent
    a.put_turns(turns)
    assert b.generation_of("alice") != stamp
    assert [t.turn_id for t in b.all_turns("alice")] == [t.turn_id for t in turns]
    assert b.has_turn("alice", turns[0].turn_id) and b.missing_turns("alice", [turns[1].turn_id]) == []
    segment = make_segment("alice", turns, 4.0)
    a.put_segment(segment)
    got = b.get_segment("alice", segment.segment_id)
    assert got is not None and got.model_dump(exclude={"embedding"}) == segment.model_dump(exclude={"embedding"})
    assert b.kept("alice", "n", lambda: len(b.segments("alice"))) == 1
    b.put_segments([make_segment("alice", turns[2:], 5.0, summary="second")])
    assert a.counts("alice") == {"turns": 4, "segments": 2}
    assert b.kept("alice", "n", lambda: len(b.segments("alice"))) == 2  # b's own cache followed the stamp
    assert a.kept("alice", "n", lambda: len(a.segments("alice"))) == 2
    a.delete_user("alice")
    assert b.all_turns("alice") == [] and b.segments("alice") == []


def test_the_same_transcript_from_two_processes_at_once_leaves_no_duplicate(two) -> None:
    a, b = two
    turns = [make_turn("alice", n) for n in range(1, 41)]
    segments = [make_segment("alice", turns[i:i + 4], float(i + 4)) for i in range(0, 40, 4)]
    errors: list[BaseException] = []

    def ingest(archive) -> None:
        try:
            for i in range(0, 40, 4):
                with archive.transaction():
                    archive.put_turns(turns[i:i + 4])
                    archive.put_segments([segments[i // 4]])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ingest, args=(x,)) for x in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert a.counts("alice") == {"turns": 40, "segments": 10}
    assert [t.turn_id for t in b.all_turns("alice")] == [t.turn_id for t in turns]
    with a._db.read() as con:
        (distinct,) = con.execute(f"SELECT count(DISTINCT ingest_seq) FROM {TURNS_TABLE}").fetchone()
    assert distinct == 40
    with a._db.read() as con:  # each batch's first arrival number is an index lookup, not a scan of every turn
        plan = " ".join(r[0] for r in con.execute(f"EXPLAIN SELECT max(ingest_seq) FROM {TURNS_TABLE}").fetchall())
    assert f"{TURNS_TABLE}_seq_idx" in plan


def test_a_reader_following_arrival_numbers_misses_no_turn_of_concurrent_writers(two) -> None:
    """Arrival numbers are handed out in commit order: a reader that asks from the last one it saw gets every turn
    once, even when a writer takes its number, another writes meanwhile, and the first commits last."""
    a, b = two
    first, second = make_turn("alice", 1), make_turn("alice", 2)
    reader = PostgresArchive(a.database, timeout=10)
    seen: list[str] = []
    try:
        with a.transaction():
            a.put_turns([first])  # a's arrival number is taken; a has not committed
            other = threading.Thread(target=b.put_turns, args=([second],))
            other.start()
            while other.is_alive() and not _waiting_for_a_lock(reader):
                other.join(0.01)  # until b has written, or waits for a
            new, last = reader.turns_since("alice", 0)
            seen += [t.turn_id for t in new]
        other.join()
        new, last = reader.turns_since("alice", last)
        seen += [t.turn_id for t in new]
    finally:
        reader.close()
    assert sorted(seen) == sorted([first.turn_id, second.turn_id])


def _waiting_for_a_lock(archive) -> bool:
    with archive._db.read() as con:
        (n,) = con.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND wait_event_type = 'Lock'").fetchone()
    return n > 0


def test_users_never_mix_and_hostile_ids_are_refused(two) -> None:
    a, b = two
    odd = "bob'; DROP TABLE turn_archive; --"
    a.put_turns([make_turn("alice", 1, text=HOSTILE)])
    b.put_turns([make_turn("bob", 1)])
    for bad in ("../alice", odd, "MATCH (n) DETACH DELETE n", "alice\ud800", ""):
        with pytest.raises(InvalidInput):
            b.put_turns([make_turn("bob", 2).model_copy(update={"user_id": bad})])
        with pytest.raises(InvalidInput):
            b.all_turns(bad)
    with pytest.raises(InvalidInput):
        a.put_turns([make_turn("alice", 3, text="lone \ud800 surrogate")])
    assert [t.text for t in b.all_turns("alice")] == [HOSTILE]
    assert [t.user_id for t in a.all_turns("bob")] == ["bob"]
    assert b.get_turns("bob", [make_turn("alice", 1).turn_id]) == []  # another user's id reads nothing
    assert a.counts() == {"turns": 2, "segments": 0}


def test_one_audit_chain_from_several_processes(two) -> None:
    a, b = two
    logs = [a.audit_trail(KEY), b.audit_trail(KEY)]
    for i in range(6):  # alternately
        logs[i % 2].append("settings_changed", "cli", None, f'{{"n": {i}}}')

    def many(log) -> None:
        for i in range(10):
            log.append("backup", "maintenance", "carol", f'{{"i": {i}}}')

    threads = [threading.Thread(target=many, args=(log,)) for log in logs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for log in logs:
        assert log.verify() == {"ok": True, "rows": 26, "broken_at": None, "problem": "", "notice": ""}
    rows = logs[0].rows()
    assert all(r["prev_hash"] == p["hash"] for p, r in zip(rows, rows[1:]))
    assert "carol" not in str(rows)
    _sql(a, f"UPDATE {AUDIT_TABLE} SET detail = 'nothing happened' WHERE seq = 3")
    result = logs[1].verify()
    assert not result["ok"] and result["broken_at"] == 3 and "content" in result["problem"]


def test_removing_the_last_audit_rows_shows_against_the_head_row(two) -> None:
    a, b = two
    log = a.audit_trail(KEY)
    for i in range(4):
        log.append("settings_changed", "cli", None, f'{{"n": {i}}}')
    _sql(b, f"DELETE FROM {AUDIT_TABLE} WHERE seq = 4")
    result = b.audit_trail(KEY).verify()
    assert not result["ok"] and "removed from its end" in result["problem"]
    _sql(b, "UPDATE lumina_audit_head SET head = replace(head, '\"rows\": 4', '\"rows\": 3')")
    assert "seal" in b.audit_trail(KEY).verify()["problem"]  # a head moved back without the key


def test_erasure_reaches_every_table_and_rewrites_them(two) -> None:
    a, b = two
    turns = [make_turn("alice", n) for n in range(1, 4)]
    a.put_turns(turns + [make_turn("bob", 1)])
    a.put_segment(make_segment("alice", turns, 3.0))
    a.put_outbox([("alice", make_segment("alice", turns, 3.0).segment_id, ["redis"], "")])
    a.append_audit("ingest", "alice", "3 turns")
    # Another tier's table in the same database (its own place erases it): not one of the archive's places.
    _sql(a, "CREATE TABLE other_tier (user_id VARCHAR, embedding vector(3))")
    _sql(a, "INSERT INTO other_tier VALUES ('alice', '[1,2,3]')")
    places = b.user_data_places()
    assert all(p.raw_paths() == [] for p in places)  # the server's files are not this host's
    held = {p.name: p.count("alice") for p in places if p.count("alice")}
    assert held == {"archive.turn_archive": 3, "archive.session_archive": 1, "archive.derive_outbox": 1,
                    AuditPlace.name: 1}
    for place in places:
        place.erase("alice")
    for place in places:
        place.scrub()  # VACUUM FULL of the tables erased from
    assert all(p.count("alice") == 0 for p in places)
    assert a.all_turns("alice") == [] and [t.user_id for t in a.all_turns("bob")] == ["bob"]
    with a._db.read() as con:
        assert con.execute("SELECT count(*) FROM other_tier").fetchone() == (1,)


@pytest.mark.parametrize("direction", ["duckdb->postgres", "postgres->duckdb"])
def test_a_backup_restores_across_engines(direction: str, pg_uri: str, tmp_path: Path) -> None:
    duck = DuckDBArchive(tmp_path / "data")
    pg = PostgresArchive(pg_uri, timeout=10)
    try:
        source, target = (duck, pg) if direction.startswith("duckdb") else (pg, duck)
        turns = [make_turn("alice", n, text=HOSTILE if n == 2 else None) for n in range(1, 4)]
        source.put_turns(turns + [make_turn("erased", 1)])
        segment = make_segment("alice", turns, 3.0).model_copy(update={"keywords": [], "embedding": [0.5, -0.25]})
        source.put_segment(segment)
        source.put_outbox([("alice", segment.segment_id, ["redis", "graph"], "keep")])
        log = source.audit_trail(KEY)
        log.append("backup", "cli", "alice")
        exported = {}
        for place in source.user_data_places():
            exported[place.name] = place.export(tmp_path / "snap" / place.name)
        assert exported["archive.turn_archive"] == 4 and exported[AuditPlace.name] == 1
        for place in target.user_data_places():
            place.restore(tmp_path / "snap" / place.name, lambda u: u == "erased")
        assert [t.model_dump() for t in target.all_turns("alice")] == [t.model_dump() for t in turns]
        assert target.all_turns("erased") == []
        assert target.get_segment("alice", segment.segment_id) == segment
        assert [r["stages"] for r in target.outbox("alice")] == [["redis", "graph"]]
        restored = target.audit_trail(KEY)
        assert restored.rows()[0]["user_ref"] == log.ref("alice")
        restored.append("restore", "cli")  # the sequence continues after the restored rows
        assert [r["seq"] for r in restored.rows()][-1] > 1 and restored.verify()["ok"]
    finally:
        duck.close()
        pg.close()


def test_a_server_that_is_down_drops_us_or_was_closed_is_named(pg_uri: str, tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="PostgreSQL"):
        PostgresArchive(f"postgresql://nobody@/none?host={tmp_path}", timeout=1)
    archive = PostgresArchive(pg_uri, timeout=10)
    archive.put_turns([make_turn("alice", 1)])
    other = PostgresArchive(pg_uri, timeout=10)
    _sql(other, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()")  # the server drops every connection of the first archive
    other.close()
    try:
        found = archive.all_turns("alice")
    except StoreUnavailable as exc:  # the dropped connection, named; the pool replaces it
        assert "PostgreSQL" in str(exc)
        found = archive.all_turns("alice")
    assert [t.turn_id for t in found] == [make_turn("alice", 1).turn_id]
    archive.close()
    with pytest.raises(StoreUnavailable, match="archive store unavailable"):
        archive.all_turns("alice")
    archive.close()  # idempotent
