"""The four lexical searches of recall rank as plain BM25 says they should (issue 45: one BM25 implementation).

Segment keyword search, turn search (alone and with the words of the turns an answer follows), unified search
over short turns and long turns' passages, and passage search are checked against a reference written here in
plain Python, term by term, on a small invented corpus in English and Japanese: the same documents in the same
order with the same scores. The reference is the formula, not a copy of the code under test.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from lumina_memory.nodes.retrieval.channels import unified_search
from lumina_memory.nodes.retrieval.keyword_index import KeywordIndex
from lumina_memory.nodes.retrieval.turn_index import UserTurns
from lumina_memory.nodes.text.passages import passage_units
from lumina_memory.nodes.text.tokenize import terms
from lumina_memory.nodes.text.transliterate import index_keys, with_aliases
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.ids import turn_id
from lumina_memory.stores.models import SegmentRecord, Turn

K1, B = 1.2, 0.75
USER = "pin-user"
CUT = (40, 60)  # passage windows of ~40 tokens for turns over 60

LINES = [
    "Caroline: I went hiking with my dogs near Seattle on Friday",
    "Melanie: which trail did you take with the dogs?",
    "Caroline: the Rattlesnake Ledge trail, the dogs loved it",
    "Melanie: 京都で金閣寺を見たよ、紅葉がきれいだった",
    "Caroline: 紅葉の季節の京都はいいね",
    "Melanie: pottery class was fun, I made a bowl for my kids",
    "Caroline: 猫のモカが3歳になった",
    "Melanie: happy birthday Moka! does Moka like the dogs?",
    "Caroline: Moka ignores the dogs and sleeps all day",
    "Melanie: my kids want a cat like Moka now",
]


def _long_reply(topic: str, n: int) -> str:
    return "\n".join(f"- Step {k}: Melanie pinned the {topic} version to 3.{k} for release {n} of the build."
                     for k in range(1, 14))


def _turns() -> list[Turn]:
    texts = [*LINES[:5], _long_reply("Python", 1), *LINES[5:], _long_reply("Rust", 2), "Caroline: thanks, the Python pin helped"]
    return [Turn(turn_id=turn_id(USER, f"D:{n}"), source_id=f"D:{n}", user_id=USER, segment_id=f"s{n // 4}",
                 speaker="user" if n % 2 else "lumina", text=text, ts=1000.0 + 60 * n + (7200 if n == 8 else 0))
            for n, text in enumerate(texts)]


def _bm25(docs: list[tuple[Counter, float]], query: list[str], n: int | None = None) -> list[float]:
    """Plain BM25 of each document (term counts, length) for ``query``; ``n`` documents in the statistics."""
    n = len(docs) if n is None else n
    avg = (sum(length for _, length in docs) / len(docs)) or 1.0
    out = [0.0] * len(docs)
    for term in dict.fromkeys(query):
        df = sum(1 for counts, _ in docs if counts.get(term))
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for d, (counts, length) in enumerate(docs):
            tf = counts.get(term, 0.0)
            if tf:
                out[d] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
    return out


def _ranked(scores: list[float], limit: int) -> list[tuple[int, float]]:
    order = sorted((d for d, s in enumerate(scores) if s), key=lambda d: (-scores[d], d))
    return [(d, scores[d]) for d in order[:limit]]


def _same_ranking(got, want) -> None:
    assert [g[:-1] for g in got] == [w[:-1] for w in want]
    assert [g[-1] for g in got] == pytest.approx([w[-1] for w in want], rel=1e-6)  # lengths are kept as float32


def _turn_doc(text: str) -> tuple[Counter, float]:
    words = terms(text)
    return Counter(words) + Counter(index_keys(text)), float(len(words))


def _passage_docs(text: str) -> list[tuple[Counter, float]]:
    units, windows = passage_units(text, *CUT)
    out = []
    for first, last in windows:
        words, keys = [], {}
        for a, b in units[first:last]:
            words += terms(text[a:b])
            keys.update(dict.fromkeys(index_keys(text[a:b])))
        out.append((Counter(words) + Counter(list(keys)), float(len(words))))
    return out


QUERIES = ["Where did Caroline go hiking with the dogs?", "モカは何歳？", "Moka", "京都の紅葉",
           "which Python version was pinned", "Rust release build", "kids pottery bowl", "nothing matches zzz"]


@pytest.fixture(scope="module")
def index() -> UserTurns:
    return UserTurns.build(_turns(), CUT)


@pytest.mark.parametrize("query", QUERIES)
def test_turn_search_is_plain_bm25_over_the_turns(index, query):
    docs = [_turn_doc(t.text) for t in _turns()]
    _same_ranking(index.search(terms(query), 6), _ranked(_bm25(docs, terms(query)), 6))


@pytest.mark.parametrize("query", QUERIES)
def test_turn_search_with_context_counts_the_words_of_the_turns_an_answer_follows(index, query):
    """A turn's document holds the previous turn's words at weight 1.0 and the words of the turn two back at 0.5,
    when they are one exchange (same segment, or under an hour apart)."""
    turns = _turns()
    own = [_turn_doc(t.text) for t in turns]
    follows = [False] + [turns[i].segment_id == turns[i - 1].segment_id or abs(turns[i].ts - turns[i - 1].ts) < 3600
                         for i in range(1, len(turns))]
    docs = []
    for i, (counts, length) in enumerate(own):
        counts, length = Counter(counts), length
        if follows[i]:
            counts.update({t: 1.0 * c for t, c in own[i - 1][0].items()})
            length += 1.0 * own[i - 1][1]
            if i >= 2 and follows[i - 1]:
                counts.update({t: 0.5 * c for t, c in own[i - 2][0].items()})
                length += 0.5 * own[i - 2][1]
        docs.append((counts, length))
    got = index.search(terms(query), 6, context=1.0, context2=0.5)
    _same_ranking(got, _ranked(_bm25(docs, terms(query)), 6))


@pytest.mark.parametrize("query", QUERIES)
def test_passage_search_is_bm25_over_the_passages_with_each_turn_at_its_best_passage(index, query):
    turns = _turns()
    where, docs = [], []
    for i, t in enumerate(turns):
        if index.token_counts[i] > CUT[1]:
            for part, doc in enumerate(_passage_docs(t.text)):
                where.append((i, part))
                docs.append(doc)
    assert len(docs) == len(index.passages.doc_turn) > 0
    best: dict[int, tuple[int, float]] = {}
    for d, score in _ranked(_bm25(docs, terms(query)), len(docs)):
        best.setdefault(where[d][0], (where[d][1], score))
    _same_ranking(index.passages.search(terms(query), 3), [(t, p, s) for t, (p, s) in list(best.items())[:3]])


@pytest.mark.parametrize("query", QUERIES)
def test_unified_search_scores_short_turns_and_passages_as_one_collection(index, query):
    turns = _turns()
    docs, owner = [], []
    for i, t in enumerate(turns):
        if index.token_counts[i] > CUT[1]:
            for doc in _passage_docs(t.text):
                docs.append(doc)
                owner.append(i)
        else:
            docs.append(_turn_doc(t.text))
            owner.append(i)
    per_turn = [0.0] * len(turns)
    for d, score in enumerate(_bm25(docs, terms(query))):
        per_turn[owner[d]] = max(per_turn[owner[d]], score)
    _same_ranking(unified_search(index, terms(query), 6), _ranked(per_turn, 6))


@pytest.mark.parametrize("query", QUERIES)
def test_segment_keyword_search_is_bm25_over_each_segment_text_and_keywords(tmp_path, query):
    segments = [("seg-a", "\n".join(LINES[:3]), ["hiking", "Seattle"]), ("seg-b", "\n".join(LINES[3:5]), ["京都"]),
                ("seg-c", "\n".join(LINES[5:8]), ["pottery", "モカ"]), ("seg-d", "\n".join(LINES[8:]), ["cat"]),
                ("seg-e", _long_reply("Python", 1), ["python"])]
    archive = DuckDBArchive(tmp_path)
    try:
        archive.put_segments([SegmentRecord(segment_id=s, user_id=USER, turn_ids=[], source_ids=[], characters=[],
                                            start_ts=float(k), end_ts=float(k), summary=text, keywords=kw, embedding=[],
                                            importance=0.5, text=text) for k, (s, text, kw) in enumerate(segments)])
        got = KeywordIndex().search(archive, USER, query, 4)
    finally:
        archive.close()
    docs = [_turn_doc(text + "\n" + " ".join(kw)) for _, text, kw in segments]
    want = _ranked(_bm25(docs, list(with_aliases(query, terms(query)))), 4)
    _same_ranking(got, [(segments[d][0], s) for d, s in want])
