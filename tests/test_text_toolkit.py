"""One text toolkit: one sentence splitter, one token counter and a real stemmer, shared by every reader.

Sentences here are invented for these tests.
"""

from __future__ import annotations

import pytest

from lumina_memory.nodes.text.sentences import sentence_spans, sentences
from lumina_memory.nodes.text.token_count import count_tokens, token_spans
from lumina_memory.nodes.text.tokenize import stem, terms


@pytest.mark.parametrize("text, expected", [
    ("I met Mr. Tanaka at the station. He was late!", ["I met Mr. Tanaka at the station.", "He was late!"]),
    ("We need e.g. flour and sugar. The cake took 3.5 hours.", ["We need e.g. flour and sugar.", "The cake took 3.5 hours."]),
    ('Dr. Patel said "Rest." Then she left? Yes.', ['Dr. Patel said "Rest."', "Then she left?", "Yes."]),
    ("I like J. K. Rowling's books. So do I. My cat is 4.", ["I like J. K. Rowling's books.", "So do I.", "My cat is 4."]),
    ("Steps:\n1. Boil the water.\n2. Add the pasta.", ["Steps:", "1. Boil the water.", "2. Add the pasta."]),
    ("I was like... you know, tired. Anyway, bye.", ["I was like... you know, tired.", "Anyway, bye."]),
    ("Visit example.com for the v1.2 notes. Done.", ["Visit example.com for the v1.2 notes.", "Done."]),
    ("We bought pears, etc. and went home. It was 5 p.m. Then it rained.",
     ["We bought pears, etc. and went home.", "It was 5 p.m.", "Then it rained."]),
    ("Look at this [image: a cat on a sofa]", ["Look at this", "[image: a cat on a sofa]"]),
    ("I said no. See No. 5 below.", ["I said no.", "See No. 5 below."]),
], ids=["title", "eg-decimal", "quote", "initials", "list", "ellipsis", "dots-in-words", "etc-pm", "attachment", "no"])
def test_english_sentences(text, expected):
    assert sentences(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("昨日は映画を見た。とても面白かった！また行きたいな？", ["昨日は映画を見た。", "とても面白かった！", "また行きたいな？"]),
    ("彼は「行こう。」と言った。私も行った。", ["彼は「行こう。」と言った。", "私も行った。"]),
    ("「明日は晴れるかな？」「たぶんね。」", ["「明日は晴れるかな？」", "「たぶんね。」"]),
    ("猫を飼っている。名前はモカ。３．５キロある。", ["猫を飼っている。", "名前はモカ。", "３．５キロある。"]),
    ("楽しかった!また行く", ["楽しかった!", "また行く"]),  # NFKC's form of ！
    ("次は「何。」？ いいね", ["次は「何。」？", "いいね"]),
], ids=["marks", "quote-goes-on", "two-quotes", "fullwidth-decimal", "nfkc-bang", "mark-after-quote"])
def test_japanese_sentences(text, expected):
    assert sentences(text) == expected


def test_korean_and_chinese_sentences():
    assert sentences("저는 서울에 살아요. 고양이를 좋아해요! 당신은요?") == ["저는 서울에 살아요.", "고양이를 좋아해요!", "당신은요?"]
    assert sentences("我住在上海。我喜欢猫！你呢？") == ["我住在上海。", "我喜欢猫！", "你呢？"]
    assert sentences("他说：“我们走吧。”然后就走了。") == ["他说：“我们走吧。”", "然后就走了。"]


def test_spans_quote_the_original_text():
    text = "  First line.  Second one!\n\n  「三つ目。」 "
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["First line.", "Second one!", "「三つ目。」"]
    assert sentence_spans("") == () and sentence_spans(" \n ") == ()


def test_an_unclosed_quote_does_not_swallow_the_line():
    assert sentences("「ええと。そうだね。") == ["「ええと。", "そうだね。"]


def test_every_reader_splits_with_the_one_splitter():
    """Knowledge extraction, procedure outcomes, passage windows and knowledge-base probes cut at the same places."""
    from lumina_memory.nodes.kb.chunk import sentence_spans as kb_spans
    from lumina_memory.nodes.knowledge.extract import sentences as extract_sentences
    from lumina_memory.nodes.knowledge.procedure_outcomes import verdict_of

    text = "彼は「行こう。」と言った。I met Mr. Tanaka at the station today. He was late!"
    assert extract_sentences(text) == sentences(text)
    assert [text[a:b] for a, b in kb_spans(text, min_tokens=1)] == sentences(text)
    # "Dr." is no sentence end: the outcome of the second sentence is still read.
    assert verdict_of("I asked Dr. Lee about the recipe. It turned out great!") == "success"


def test_token_counter_korean_japanese_english():
    assert count_tokens("I like cats") == 3
    assert count_tokens("猫が好き。") == 5
    assert count_tokens("저는 서울에 살아요") == 8  # Hangul syllables count one each, like kana
    assert count_tokens("모카 is 3") == 2 + 2
    assert count_tokens("") == 0
    for text in ("저는 서울에 살아요. I live in Seoul.", "「猫が好き。」と言った", "ｶﾀｶﾅ and ＡＢＣ"):
        assert count_tokens(text) == len(token_spans(text))


def test_one_token_counter_everywhere():
    """Chunks, passage windows and the budget agree on Korean (they used to count it by words in one place and
    by syllables in another)."""
    from lumina_memory.nodes.retrieval import budget
    from lumina_memory.nodes.text import chunking

    korean = "저는 서울에 살아요 " * 300
    assert budget.count_tokens is count_tokens and chunking.token_spans is token_spans
    chunks = chunking.chunk_text(korean.strip(), 2000, 200)
    assert len(chunks) > 1 and all(count_tokens(c) <= 2000 for c in chunks)


def test_stemmer_is_snowball():
    assert stem("hobbies") == stem("hobby")
    assert stem("cities") == stem("city")
    assert stem("news") == "news"  # not "new"
    assert stem("running") == stem("runs") == "run"
    assert terms("My hobbies") == terms("my hobby")
    assert terms("cities I visited") == terms("a city I visit")
    assert "new" not in terms("any news today?")


def test_lexical_indexes_share_one_term_function():
    """The BM25 indexes read terms through tokenize.terms / read_once, which stem the same way."""
    from lumina_memory.nodes.text.tokenize import read_once

    assert list(read_once("The kids painted two cities")[0]) == terms("The kids painted two cities")
