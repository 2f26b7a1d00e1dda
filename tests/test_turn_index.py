"""The per-user turn index follows the archive: topped up with new turns (exactly what a rebuild would
give), rebuilt after an erase or a back-filled history, and bounded in how many users it keeps."""

from __future__ import annotations

import numpy as np
import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import Timings, recall
from lumina_memory.nodes.retrieval.turn_index import IndexedTurn, TurnTable
from lumina_memory.nodes.retrieval.turn_index import TurnIndex, UserTurns
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.ids import turn_id
from lumina_memory.stores.models import Turn

ALICE = "alice"


def _turn(user: str, n: int, ts: float, text: str, segment: str = "s1") -> Turn:
    return Turn(turn_id=turn_id(user, f"D:{n}"), source_id=f"D:{n}", user_id=user, segment_id=segment,
                speaker="user" if n % 2 else "lumina", text=text, ts=ts)


def _same(a: UserTurns, b: UserTurns) -> None:
    assert a.turns == b.turns and a.position == b.position and a.labels == b.labels and a.speakers == b.speakers
    assert a.postings.keys() == b.postings.keys()
    for term, (idx, tf) in a.postings.items():
        assert np.array_equal(idx, b.postings[term][0]) and np.array_equal(tf, b.postings[term][1]), term
    assert np.array_equal(a.lengths, b.lengths) and a.avg == pytest.approx(b.avg)
    assert {k: list(v) for k, v in a.members.items()} == {k: list(v) for k, v in b.members.items()}
    assert np.array_equal(a.same_exchange, b.same_exchange) and np.array_equal(a.ts, b.ts)
    assert a.segment_ids == b.segment_ids and np.array_equal(a.segment_of, b.segment_of)
    assert a.segment_code == b.segment_code and a.point_position == b.point_position
    assert np.array_equal(a.token_counts, b.token_counts) and len(a.token_counts) == len(a.turns)
    assert list(a.label_array) == list(a.labels) == list(b.label_array)
    assert a.prefix_counts == b.prefix_counts and a.label_counts == b.label_counts


TEXTS = ["Caroline: 京都で金閣寺を見たよ", "Melanie: いいね、紅葉は？", "Caroline: I went hiking with my dogs",
         "Melanie: which trail?", "Caroline: 箱根の温泉にも行った", "Melanie: pottery class was fun",
         "Caroline: 猫のモカが3歳になった", "Melanie: happy birthday Moka!"]


def test_new_turns_extend_the_index_exactly_as_a_rebuild(tmp_path):
    archive = DuckDBArchive(tmp_path)
    try:
        turns = [_turn(ALICE, n, 1000.0 + 60 * n, t, f"s{n // 3}") for n, t in enumerate(TEXTS)]
        index = TurnIndex()
        archive.put_turns(turns[:3])
        assert len(index.get(archive, ALICE).turns) == 3 and index.rebuilds == 1
        archive.put_turns(turns[3:5])
        archive.put_turns(turns[5:])
        grown = index.get(archive, ALICE)
        assert index.rebuilds == 1 and index.extensions == 1  # topped up, not rebuilt
        _same(grown, UserTurns.build(archive.all_turns(ALICE)))
        assert grown.labels[:3] == ("Caroline", "Melanie", "Caroline")  # prefixes seen 3+ times name speakers
        assert [turns[i].turn_id for i, _ in grown.search(["moka"], 5)] == [turns[7].turn_id]
        # Once the speakers are known, a top-up labels only its own turns (and a newcomer's prefix too,
        # the third time it is seen).
        more = [_turn(ALICE, 10 + n, 2000.0 + 60 * n, t, f"s{10 + n // 2}") for n, t in enumerate(
            ["Caroline: 次は北海道", "Ken: hello there", "Melanie: 雪まつり?", "Ken: I'm Ken", "Ken: Melanie's cousin"])]
        for n in range(1, len(more) + 1):
            archive.put_turns(more[n - 1 : n])
            grown = index.get(archive, ALICE)
            _same(grown, UserTurns.build(archive.all_turns(ALICE)))
        assert index.rebuilds == 1 and index.extensions == 6
        assert grown.labels[-5:] == ("Caroline", "Ken", "Melanie", "Ken", "Ken") and "Ken" in grown.speakers

        # A turn from before the newest one (a back-filled history) cannot be appended: rebuilt, in order.
        early = _turn(ALICE, 99, 500.0, "Caroline: 最初の会話")
        archive.put_turns([early])
        rebuilt = index.get(archive, ALICE)
        assert index.rebuilds == 2 and rebuilt.turns[0].turn_id == early.turn_id
        _same(rebuilt, UserTurns.build(archive.all_turns(ALICE)))
        # An erase shrinks the archive: rebuilt, empty.
        archive.delete_user(ALICE)
        assert index.get(archive, ALICE).turns == [] and index.rebuilds == 3
    finally:
        archive.close()


def test_at_most_max_users_indexes_are_kept(tmp_path):
    archive = DuckDBArchive(tmp_path)
    try:
        for u in range(4):
            archive.put_turns([_turn(f"user{u}", 1, 1000.0, f"turn of user {u}")])
        index = TurnIndex(max_users=2)
        first = index.get(archive, "user0")
        index.get(archive, "user1")
        assert index.get(archive, "user0") is first  # recently used: still held
        index.get(archive, "user2")  # user1 was least recently used
        assert index.get(archive, "user0") is first and index.rebuilds == 3
        index.get(archive, "user1")
        assert index.rebuilds == 4  # built again on demand, from the archive
    finally:
        archive.close()


def test_live_chat_tops_up_vectors_and_recalls_the_newest_segment(memory, demo_rows):
    """Through the graph: the index held after a first recall takes in each newly closed segment
    (its turns and vectors) without a rebuild, and recall finds what was just said."""
    services = memory.services
    replay(memory.graph, ALICE, demo_rows[:60])
    recall(services, ALICE, "猫", budget=300)
    assert services.turn_index.rebuilds == 1
    replay(memory.graph, ALICE, demo_rows[60:90])
    recall(services, ALICE, "猫", budget=300)
    held = services.turn_index.get(services.stores.archive, ALICE, services.stores.turns)
    held_vectors = held.vectors.copy()
    replay(memory.graph, ALICE, demo_rows[90:])
    extended = services.turn_index.extensions  # each flush tops the index up (nodes/retrieval/warm.py)
    timings = Timings()
    items = recall(services, ALICE, "チーズケーキは何度で焼くんだっけ？", budget=300, timings=timings)
    assert services.turn_index.rebuilds == 1 and extended >= 2 and services.turn_index.extensions == extended
    # The index a running query still holds keeps its own view: its rows unchanged, none added.
    assert held.vectors.shape == held_vectors.shape and np.array_equal(held.vectors, held_vectors)
    # Every stage after the embedding is timed, and the stages add up to no more than the whole search.
    assert set(timings.stages) == {"index", "candidates", "rank", "rerank", "pack"}
    assert all(v >= 0 for v in timings.stages.values()) and sum(timings.stages.values()) <= timings.search_ms + 0.005  # rounding
    index = services.turn_index.get(services.stores.archive, ALICE, services.stores.turns)
    assert index.has_vector.all() and len(index.turns) == len(demo_rows)
    fresh = UserTurns.build(services.stores.archive.all_turns(ALICE))
    fresh.load_vectors(services.stores.turns, ALICE)
    _same(index, fresh)
    assert np.array_equal(index.vectors, fresh.vectors)
    assert any("焼" in item["text"] for item in items)


def test_segment_keyword_index_catches_up_with_new_segments_only(tmp_path):
    from lumina_memory.nodes.retrieval.keyword_index import KeywordIndex
    from lumina_memory.stores.models import SegmentRecord

    archive = DuckDBArchive(tmp_path)

    def segment(n: int, text: str, keywords: list[str]) -> SegmentRecord:
        return SegmentRecord(segment_id=f"seg-{n}", user_id=ALICE, turn_ids=[], source_ids=[], characters=[], start_ts=float(n),
                             end_ts=float(n), summary=text, keywords=keywords, embedding=[], importance=0.5, text=text)

    try:
        index = KeywordIndex(max_users=4)
        archive.put_segments([segment(1, "京都で紅葉を見た", ["kyoto"]), segment(2, "pottery class with the kids", ["pottery"])])
        assert [s for s, _ in index.search(archive, ALICE, "kyoto", 5)] == ["seg-1"]  # the first keyword is a term too
        archive.put_segment(segment(3, "温泉でゆっくりした", ["hakone"]))
        seen = []
        real = archive.segment_texts
        archive.segment_texts = lambda user, since=0.0: seen.append(since) or real(user, since)  # watch what is read
        assert [s for s, _ in index.search(archive, ALICE, "hakone 温泉", 5)] == ["seg-3"]
        assert seen and seen[0] > 0  # only segments archived since the last look were read
        assert {s for s, _ in index.search(archive, ALICE, "pottery kyoto", 5)} == {"seg-1", "seg-2"}
        archive.delete_user(ALICE)
        archive.put_segment(segment(4, "new start", ["fresh"]))
        assert index.search(archive, ALICE, "kyoto", 5) == []  # erased: the index started over
        assert [s for s, _ in index.search(archive, ALICE, "fresh", 5)] == ["seg-4"]
    finally:
        archive.close()


def test_turn_table_reads_like_the_list_of_turns_it_was_made_from():
    turns = [Turn(turn_id=f"t{i}", source_id=f"s{i}", user_id="alice", speaker="user", text=f"テキスト{i}", ts=float(i),
                  segment_id=f"g{i // 2}") for i in range(5)]
    table = TurnTable.of(turns[:3])
    grown = table + turns[3:]
    assert len(table) == 3 and len(grown) == 5  # the table it grew from is left as it was
    assert grown[-1] == IndexedTurn("t4", "s4", "alice", "user", "テキスト4", 4.0, "g2")
    assert [t.text for t in grown] == [t.text for t in turns] and grown[1:3] == [grown[1], grown[2]]
    assert grown == TurnTable.of(turns) and grown != table and grown.column("segment_id") == ("g0", "g0", "g1", "g1", "g2")


def test_an_index_leaves_no_per_turn_container_on_the_garbage_collectors_books():
    # A list of 10,000 strings is one object, but every full collection walks its items; at 100 users'
    # indexes that was ~300 ms charged to whichever recall triggered it.
    import gc

    turns = [_turn(ALICE, n, 1_700_000_000.0 + 60 * n, f"{TEXTS[n % len(TEXTS)]} #{n}", segment=f"s{n // 6}")
             for n in range(600)]
    index = UserTurns.build(turns[:400]).extended(turns[400:])
    gc.collect()
    grown = [(name, len(value)) for name, value in vars(index).items()
             if isinstance(value, (list, tuple, set, dict)) and gc.is_tracked(value) and len(value) > 50]
    grown += [(name, len(index.turns)) for name in IndexedTurn._fields if gc.is_tracked(index.turns.column(name))]
    assert grown == []
    assert index.turns.column("text")[599] == turns[599].text and index.labels[0] == "Caroline"


def test_keyword_search_in_context_reads_the_turn_each_reply_answers():
    """A reply is about what it answers: "They loved the dinosaur bones!" is found for "kids at the museum"
    through the question before it, but never across an exchange (another segment, hours later)."""
    hour = 3600.0
    turns = [
        _turn(ALICE, 1, 0.0, "Caroline: How were the kids at the museum?", "s1"),
        _turn(ALICE, 2, 30.0, "Melanie: They loved the dinosaur bones!", "s1"),
        _turn(ALICE, 3, 60.0, "Caroline: I painted a lake yesterday.", "s1"),
        _turn(ALICE, 4, 5 * hour, "Melanie: The garden is blooming.", "s2"),  # a new exchange: no carry
        _turn(ALICE, 5, 5 * hour + 30, "Caroline: Lovely, I love gardens.", "s2"),
        _turn(ALICE, 6, 5 * hour + 60, "Melanie: My kids planted tomatoes.", "s2"),
    ]
    index = UserTurns.build(turns)
    from lumina_memory.nodes.text.tokenize import terms

    q = terms("What did the kids like at the museum?")
    alone = [i for i, _ in index.search(q, 10)]
    paired = dict(index.search(q, 10, context=1.0))
    assert 1 not in alone and 1 in paired  # the reply, through its question
    assert 0 in paired and paired[0] > paired[1]  # the question itself still ranks first
    assert 3 not in paired  # "lake" turn answers nothing about kids
    # 5 hours and a segment apart: turn 4 does not carry turn 3's words.
    assert [i for i, _ in index.search(terms("painted lake"), 10, context=1.0)] == [2]
    # Weight 0 is the plain BM25, score for score.
    assert index.search(q, 10, context=0.0) == index.search(q, 10)


def test_a_reply_to_a_follow_up_question_is_found_through_the_turn_it_follows_up():
    """ "I loved 'The Salt Orchard'" → "What did it teach you?" → "Patience, mostly." The answer says
    neither the book nor "loved"; it is found by the keyword channel through its speaker's own turn two
    back, as long as all three are one exchange — and by default settings, not only when asked for."""
    from lumina_memory.nodes.retrieval.channels import keyword_ranking
    from lumina_memory.nodes.text.tokenize import terms
    from lumina_memory.stores.settings import LuminaSettings

    hour = 3600.0
    turns = [
        _turn(ALICE, 1, 0.0, "Priya: I just finished reading The Salt Orchard, I loved it.", "s1"),
        _turn(ALICE, 2, 30.0, "Tomas: Oh nice, what did it teach you?", "s1"),
        _turn(ALICE, 3, 60.0, "Priya: Patience, mostly, and how to ask for help.", "s1"),
        _turn(ALICE, 4, 90.0, "Tomas: The garden is blooming.", "s1"),
        _turn(ALICE, 5, 120.0, "Priya: Lovely.", "s1"),
        # The same words two turns back, but across a new exchange (a day later): no carry.
        _turn(ALICE, 6, 24 * hour, "Priya: The Salt Orchard is on my shelf again.", "s2"),
        _turn(ALICE, 7, 24 * hour + 30, "Tomas: The weather turned cold.", "s2"),
        _turn(ALICE, 8, 48 * hour, "Priya: We adopted a puppy today.", "s3"),
    ]
    index = UserTurns.build(turns)
    q = terms("What did she take away from the book The Salt Orchard?")
    one_back = dict(index.search(q, 10, context=1.0))
    two_back = dict(index.search(q, 10, context=1.0, context2=0.5))
    assert 2 not in one_back and 2 in two_back  # the answer, through the turn it follows up
    assert two_back[0] > two_back[2]  # the turn that names the book still ranks above it
    assert 7 not in two_back  # two back across an exchange: nothing carried
    assert index.search(q, 10, context=1.0, context2=0.0) == index.search(q, 10, context=1.0)

    settings = LuminaSettings()
    assert 2 in keyword_ranking(index, q, 10, settings, {})  # the default reads two back
    assert 2 not in keyword_ranking(index, q, 10, settings, {"keyword_context": False})  # the ablation switch


def test_one_users_slow_build_does_not_hold_up_another_users_recall(tmp_path, monkeypatch):
    """A cold build of a user with long replies takes tens of seconds; the other users' indexes are handed out
    meanwhile. An erase waits for the build in progress, so the erased user's index is not put back after it."""
    import threading

    archive = DuckDBArchive(tmp_path)
    try:
        archive.put_turns([_turn("slow", 1, 1000.0, "turn of the slow user")])
        archive.put_turns([_turn("quick", 1, 1000.0, "turn of the quick user")])
        index = TurnIndex()
        entered, release = threading.Event(), threading.Event()
        real = UserTurns.build

        def build(turns, *args, **kwargs):
            if turns and turns[0].user_id == "slow":
                entered.set()
                assert release.wait(30)
            return real(turns, *args, **kwargs)

        monkeypatch.setattr(UserTurns, "build", staticmethod(build))
        got = _while_one_user_builds(index, lambda: index.get(archive, "slow"), lambda: index.get(archive, "quick"),
                                     entered, release)
        assert got.turns[0].text == "turn of the quick user"
    finally:
        release.set()
        archive.close()


def _while_one_user_builds(index, slow_call, quick_call, entered, release):
    """Start ``slow_call`` (its build waits on ``release`` once it set ``entered``), then check that ``quick_call``
    for another user answers meanwhile and that forgetting the slow user waits for its build and leaves nothing of
    it. Returns the quick call's answer."""
    import threading

    slow = threading.Thread(target=slow_call)
    slow.start()
    assert entered.wait(10)
    got: list = []
    quick = threading.Thread(target=lambda: got.append(quick_call()))
    quick.start()
    quick.join(10)
    assert got, "held up by the other user's build"
    forgotten = threading.Thread(target=index.forget, args=("slow",))
    forgotten.start()
    forgotten.join(0.2)
    assert forgotten.is_alive()  # the erase waits for the build in progress
    release.set()
    slow.join(10)
    forgotten.join(10)
    assert not forgotten.is_alive() and "slow" not in index._users and "slow" not in index._user_locks
    return got[0]


def _long_reply(n: int, japanese: bool) -> str:
    if japanese:
        lines = [f"{k}. キャロラインは第{n}回の会議で東京駅の近くの店を{k}回勧めた。" for k in range(1, 40)]
    else:
        lines = [f"- Step {k}: Melanie pinned the Python version to 3.{k} for release {n} of the build." for k in range(1, 40)]
    return "\n".join(lines)


def test_long_replies_are_read_once_and_indexed_as_a_rebuild_would_with_their_passages(tmp_path):
    """A long reply is read sentence by sentence, once, for its own terms and its passages' (issue 19: a cold
    build read each reply three times). What it holds is what reading it whole gives; topped up with more
    replies, the index, passages included, is what a rebuild gives."""
    from collections import Counter

    from lumina_memory.nodes.retrieval.passage_index import long_turn_terms
    from lumina_memory.nodes.text.passages import passage_spans
    from lumina_memory.nodes.text.tokenize import terms
    from lumina_memory.nodes.text.transliterate import index_keys

    cut = (128, 160)
    reply = _long_reply(1, True)
    read = long_turn_terms(reply, cut)
    assert read is not None and len(read.passages) == len(passage_spans(reply, *cut)) > 1
    assert Counter(read.terms) == Counter(terms(reply)) and set(read.keys) == set(index_keys(reply))
    for (a, b), (passage_terms, keys) in zip(passage_spans(reply, *cut), read.passages):
        assert Counter(passage_terms) == Counter(terms(reply[a:b])) and set(keys) == set(index_keys(reply[a:b]))
    assert long_turn_terms("Caroline: a short chat turn", cut) is None

    archive = DuckDBArchive(tmp_path)
    try:
        turns = [_turn(ALICE, n, 1000.0 + 60 * n, _long_reply(n, n % 4 == 1) if n % 2 else f"Caroline: question {n}?", f"s{n // 4}")
                 for n in range(12)]
        index = TurnIndex(passage_cut=cut)
        archive.put_turns(turns[:5])
        index.get(archive, ALICE)
        archive.put_turns(turns[5:])
        grown = index.get(archive, ALICE)
        assert index.rebuilds == 1 and index.extensions == 1
        rebuilt = UserTurns.build(archive.all_turns(ALICE), cut)
        _same(grown, rebuilt)
        assert grown.passage_of == rebuilt.passage_of and len(grown.passage_of) > 12
        p, q = grown.passages, rebuilt.passages
        assert np.array_equal(p.doc_turn, q.doc_turn) and np.array_equal(p.doc_part, q.doc_part)
        assert np.array_equal(p.lengths, q.lengths) and p.postings.keys() == q.postings.keys()
        for term, (idx, tf) in p.postings.items():
            assert np.array_equal(idx, q.postings[term][0]) and np.array_equal(tf, q.postings[term][1]), term
        # The katakana name is found from latin letters, in the passage that says it.
        from lumina_memory.nodes.text.transliterate import with_aliases

        hits = p.search(with_aliases("Caroline", terms("Caroline")), 3)
        assert hits and all(grown.turns[t].text.startswith("1. キャロライン") for t, _, _ in hits)
    finally:
        archive.close()


def test_one_users_slow_segment_index_build_does_not_hold_up_another_users_search(tmp_path, monkeypatch):
    """The segment keyword index, like the turn index, builds under one lock per user: a cold build of one
    user (seconds at 1,000 long segments) no longer stalls every other user's segment search. An erase waits
    for the build in progress, so the erased user's index is not put back after it."""
    import threading

    from lumina_memory.nodes.retrieval import keyword_index as module
    from lumina_memory.stores.models import SegmentRecord

    def segment(user: str, text: str) -> SegmentRecord:
        return SegmentRecord(segment_id=f"{user}-seg", user_id=user, turn_ids=[], source_ids=[], characters=[], start_ts=1.0,
                             end_ts=1.0, summary=text, keywords=[], embedding=[], importance=0.5, text=text)

    archive = DuckDBArchive(tmp_path)
    entered, release = threading.Event(), threading.Event()
    try:
        archive.put_segments([segment("slow", "the slow user's pottery"), segment("quick", "the quick user's pottery")])
        index = module.KeywordIndex()
        real = module._catch_up

        def catch_up(user_index, rows, *rest):
            if rows and rows[0][0] == "slow-seg":
                entered.set()
                assert release.wait(30)
            return real(user_index, rows, *rest)

        monkeypatch.setattr(module, "_catch_up", catch_up)
        got = _while_one_user_builds(index, lambda: index.search(archive, "slow", "pottery", 5),
                                     lambda: index.search(archive, "quick", "pottery", 5), entered, release)
        assert [s for s, _ in got] == ["quick-seg"]
    finally:
        release.set()
        archive.close()


def test_a_cold_segment_index_sums_its_documents_from_the_turn_index_as_reading_them_would(tmp_path, monkeypatch):
    """Building a user's segment keyword index after their turn index (a process that starts), a segment whose
    text is its turns' "speaker: text" lines is summed from the turns' indexed terms instead of read again; the
    index is the one reading every text gives. A segment whose text is not its turns' lines (cleared by forgetting,
    written otherwise) is read as before."""
    from lumina_memory.nodes.retrieval import keyword_index as module
    from lumina_memory.nodes.retrieval.segment_terms import MIN_SEGMENTS
    from lumina_memory.stores.models import SegmentRecord

    lines = ["キャロラインは京都で抹茶を買った。", "Melanie went hiking with Bob near Seattle.", "ボブのギターは赤い。",
             "Caroline: the pottery class was on Friday", "Nox: そういえば、東京駅のカフェはどう？"]
    turns, segments = [], []
    for s in range(MIN_SEGMENTS + 6):
        members = [_turn(ALICE, 10 * s + k, 100.0 * s + k, f"{lines[(s + k) % len(lines)]} ({s}.{k})", f"seg-{s}") for k in range(3)]
        text = "\n".join(f"{t.speaker}: {t.text}" for t in members)
        if s == 3:
            text = ""  # cleared by forgetting
        elif s == 4:
            text = "a summary written some other way"
        turns += members
        segments.append(SegmentRecord(segment_id=f"seg-{s}", user_id=ALICE, turn_ids=[t.turn_id for t in members],
                                      source_ids=[t.source_id for t in members], characters=["lumina"], start_ts=100.0 * s,
                                      end_ts=100.0 * s + 2, summary="", keywords=["抹茶", f"kw{s}"], embedding=[], importance=0.5,
                                      text=text))
    archive = DuckDBArchive(tmp_path)
    try:
        archive.put_turns(turns)
        archive.put_segments(segments)
        user_turns = TurnIndex().get(archive, ALICE)
        read = []
        real_add = module._UserIndex.add
        monkeypatch.setattr(module._UserIndex, "add", lambda self, sid, text, digest=b"": read.append(sid) or real_add(self, sid, text, digest))
        summed = module.KeywordIndex()
        summed.refresh(archive, ALICE, user_turns)
        assert sorted(read) == ["seg-3", "seg-4"]  # only the two whose text is not their turns' lines
        read.clear()
        plain = module.KeywordIndex()
        plain.refresh(archive, ALICE)
        assert len(read) == len(segments)
        a, b = summed._users[ALICE], plain._users[ALICE]
        assert a.ids == b.ids and a.lengths == b.lengths
        assert a._compiled().keys() == b._compiled().keys()
        for term, (docs, tf) in b._compiled().items():
            assert np.array_equal(a._compiled()[term][0], docs) and np.array_equal(a._compiled()[term][1], tf), term
        for query in ("抹茶を買ったのは？", "Who went hiking near Seattle?", "ボブ", "Bob's guitar", "kw12"):
            assert summed.search(archive, ALICE, query, 5) == plain.search(archive, ALICE, query, 5), query
    finally:
        archive.close()
