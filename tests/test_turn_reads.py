"""The reads the recall index keeps in the archive (issue 19: no tokenising a whole history inside the first
recall of a process that starts): a fresh index built from them is the index built from the texts; a read is
used only with the text and the reader it came from; no read outlives its turn (rewrite, retention, erasure)."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.nodes.retrieval.turn_index import TurnIndex, UserTurns
from lumina_memory.nodes.retrieval.turn_reads import decode, encode, read_turns
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.turn_reads_duckdb import text_md5

from .test_turn_index import _long_reply, _same, _turn

CUT = (128, 160)
ALICE, BOB = "alice", "bob"


def _history(user: str) -> list:
    texts = ["Caroline: 京都で金閣寺を見たよ", "Melanie: which trail? I went hiking with my dogs", _long_reply(2, True),
             "Caroline: 猫のモカが3歳になった", _long_reply(4, False), "Melanie: happy birthday Moka!", "", "😀 ✓",
             "moka\x1fcat \x1c\x1d\x1e dog"]  # the kept form's separators in a text
    return [_turn(user, n, 1000.0 + 60 * n, t, f"s{n // 3}") for n, t in enumerate(texts)]


def _same_passages(a: UserTurns, b: UserTurns) -> None:
    assert a.passage_of == b.passage_of
    p, q = a.passages, b.passages
    assert np.array_equal(p.doc_turn, q.doc_turn) and np.array_equal(p.doc_part, q.doc_part)
    assert np.array_equal(p.lengths, q.lengths) and p.postings.keys() == q.postings.keys()
    for term, (idx, tf) in p.postings.items():
        assert np.array_equal(idx, q.postings[term][0]) and np.array_equal(tf, q.postings[term][1]), term


def test_every_read_round_trips_through_its_kept_form():
    texts = [t.text for t in _history(ALICE)]
    made = read_turns(texts, CUT)
    assert made.fresh == list(range(len(texts))) and set(made.units) == {2, 4}  # the two long replies
    for i in range(len(texts)):
        kept = encode(int(made.counts[i]), made.reads[i], made.units.get(i))
        assert kept is not None
        count, read = decode(kept)
        assert count == made.counts[i] and read == made.reads[i], texts[i]
    again = read_turns(texts, CUT, {i: encode(int(made.counts[i]), made.reads[i], made.units.get(i)) for i in range(len(texts))})
    assert again.fresh == [] and again.reads == made.reads and np.array_equal(again.counts, made.counts)
    # A term holding a separator is not kept (the turn is read again each build), never kept garbled.
    from lumina_memory.nodes.retrieval.passage_index import LongTurnTerms

    assert encode(3, LongTurnTerms(["a\x1fb"], (), []), None) is None
    # A kept read that does not parse is read again, never trusted.
    assert decode("garbage") is None and decode("3\x1c1,2\x1c") is None
    assert read_turns(texts[:1], CUT, {0: "garbage"}).fresh == [0]


def test_a_fresh_process_builds_the_same_index_from_the_kept_reads_without_reading_a_text(tmp_path):
    archive = DuckDBArchive(tmp_path)
    try:
        turns = _history(ALICE)
        archive.put_turns(turns[:5])
        first = TurnIndex(passage_cut=CUT)
        first.get(archive, ALICE)
        archive.put_turns(turns[5:])  # a top-up (the flush's last stage) keeps its reads too
        first.get(archive, ALICE)
        assert first.summary()["turns_read"] == len(turns) and archive.turn_reads.count(ALICE) == len(turns)

        fresh = TurnIndex(passage_cut=CUT)  # what a process that starts holds
        built = fresh.get(archive, ALICE)
        assert fresh.summary() | {"users": 0} == {"users": 0, "rebuilds": 1, "top_ups": 0, "turns_read": 0,
                                                  "reads_decoded": len(turns), "snapshots_loaded": 0,
                                                  "snapshots_written": 0, "snapshots_dropped": 0}
        from_texts = UserTurns.build(archive.all_turns(ALICE), CUT)
        _same(built, from_texts)
        _same_passages(built, from_texts)
        assert len(built.passage_of) > 2
        # Other passage settings are another reader: those read the texts again, and keep their own reads.
        other = TurnIndex(passage_cut=(64, 100))
        other.get(archive, ALICE)
        assert other.summary()["turns_read"] == len(turns)
    finally:
        archive.close()


def test_a_rewritten_turn_is_read_again_and_its_old_read_is_gone(tmp_path):
    archive = DuckDBArchive(tmp_path)
    try:
        turns = _history(ALICE)
        archive.put_turns(turns)
        TurnIndex(passage_cut=CUT).get(archive, ALICE)
        rewritten = turns[0].model_copy(update={"text": "Caroline: 大阪で通天閣を見たよ"})
        archive.put_turns([rewritten])
        with archive._db.read() as con:
            old = con.execute("SELECT count(*) FROM turn_reads WHERE text_md5 = ?", [text_md5(turns[0].text)]).fetchone()[0]
        assert old == 0  # dropped with the rewrite, not left to the md5 check
        fresh = TurnIndex(passage_cut=CUT)
        built = fresh.get(archive, ALICE)
        assert fresh.summary()["turns_read"] == 1 and fresh.summary()["reads_decoded"] == len(turns) - 1
        assert built.search(["通天閣"], 3) and not built.search(["金閣寺"], 3)
        # A read made from a text that changed before it was kept is not kept.
        read = encode(5, read_turns([turns[1].text], CUT).reads[0], None)
        assert archive.turn_reads.put(ALICE, "someone", [(turns[1].turn_id, text_md5("another text"), read)]) == 0
        # Nor is one of another user's turn, or of a turn that is gone.
        assert archive.turn_reads.put(BOB, "someone", [(turns[1].turn_id, text_md5(turns[1].text), read)]) == 0
        archive.delete_turns(ALICE, [turns[1].turn_id])
        assert archive.turn_reads.put(ALICE, "someone", [(turns[1].turn_id, text_md5(turns[1].text), read)]) == 0
    finally:
        archive.close()


def test_retention_and_erasure_take_the_reads_with_the_turns(tmp_path):
    archive = DuckDBArchive(tmp_path)
    try:
        for user in (ALICE, BOB):
            archive.put_turns(_history(user))
            TurnIndex(passage_cut=CUT).get(archive, user)
        n = len(_history(ALICE))
        assert archive.turn_reads.count(ALICE) == archive.turn_reads.count(BOB) == n
        archive.delete_turns(ALICE, [t.turn_id for t in _history(ALICE)[:3]])
        assert archive.turn_reads.count(ALICE) == n - 3
        archive.delete_user(ALICE)
        assert archive.turn_reads.count(ALICE) == 0 and archive.turn_reads.count(BOB) == n
    finally:
        archive.close()


@pytest.mark.parametrize("hostile", ["../etc", "x' OR '1'='1", "a}) DETACH DELETE n //", ""])
def test_hostile_ids_are_refused_before_any_query(tmp_path, hostile):
    archive = DuckDBArchive(tmp_path)
    try:
        archive.put_turns(_history(BOB))
        TurnIndex(passage_cut=CUT).get(archive, BOB)
        with pytest.raises(InvalidInput):
            archive.turn_reads.stored(hostile, "r")
        with pytest.raises(InvalidInput):
            archive.turn_reads.put(hostile, "r", [("t", "m", "x")])
        assert archive.turn_reads.count(BOB) == len(_history(BOB))
    finally:
        archive.close()


def test_the_erasure_registry_backs_up_and_erases_the_reads(memory):
    """The reads are an archive table with a user_id column: a registry place like the turns themselves, filled
    at write time (the flush's last stage tops the index up and keeps what it read)."""
    import json

    from lumina_memory.graphs.registry import open_registry
    from lumina_memory.graphs.replay import DEMO_TRANSCRIPT, replay

    rows = [json.loads(line) for line in DEMO_TRANSCRIPT.open(encoding="utf-8") if line.strip()][:30]
    replay(memory.graph, ALICE, [dict(r, user_id=ALICE) for r in rows], flush=True)
    archived = memory.services.stores.archive.counts(ALICE)["turns"]
    with open_registry(memory.services) as places:
        place = next(p for p in places if p.name == "archive.turn_reads")
        assert place.count(ALICE) == archived > 0
        assert place.erase(ALICE) == archived and place.count(ALICE) == 0


def test_reads_that_cannot_be_kept_leave_the_index_built_and_say_so(tmp_path, caplog, monkeypatch):
    """Keeping reads is a derived write: an archive that refuses it (here: closed under the index) costs the next
    build a re-read, never the recall that built the index."""
    import logging

    from lumina_memory.nodes.retrieval.turn_reads import keep_reads

    # graphs.logging_setup (run by other tests in this process) stops the lumina tree propagating to caplog's handler.
    monkeypatch.setattr(logging.getLogger("lumina"), "propagate", True)

    archive = DuckDBArchive(tmp_path)
    turns = _history(ALICE)
    archive.put_turns(turns)
    texts = [t.text for t in turns]
    reads = read_turns(texts, CUT)
    archive.close()
    with caplog.at_level("WARNING", logger="lumina.recall"):
        assert keep_reads(archive, ALICE, [t.turn_id for t in turns], texts, CUT, reads) == 0
    assert "not kept" in caplog.text
