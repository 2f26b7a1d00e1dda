"""Words in scripts Sudachi's dictionary does not know (Hangul, Arabic, Devanagari, Hebrew, Thai …).

Sudachi reads them as symbols, and symbols were dropped: a Korean or Arabic conversation had no terms at all, so
every keyword channel (turn, passage, segment BM25, keywords, concepts) was blind to it and recall leaned on the
vectors alone. Words of space-separated scripts are now terms as written (case-folded); Hangul and the scripts
written without spaces (Thai, Lao, Khmer, Myanmar) are read as overlapping character pairs, as Lucene's CJK
bigram filter reads them, so 「서울」 is found in 「서울에서」 (Seoul + "in") and 「ตลาด」 in a Thai sentence.
Chinese: Sudachi reads Han characters with a Japanese dictionary (「最近我特别爱吃麻辣烫」 came out as 特 / 别爱 / 吃麻 /
辛い / 烫), so a text without any kana also gets its Han runs in overlapping pairs: 「爱吃」 and 「最近」 meet the question.
Japanese, English and the Latin, Greek and Cyrillic scripts Sudachi already reads are unchanged.
"""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.tokenize import nouns, stem, terms

SENTENCES = {
    "ko": "나는 어제 서울에서 친구를 만났어요",
    "ar": "التقيت بصديقي في القاهرة أمس",
    "hi": "मैं कल दिल्ली में अपने दोस्त से मिला",
    "he": "פגשתי את חבר שלי בתל אביב",
    "th": "ฉันไปตลาดเมื่อวานนี้",
    "km": "ខ្ញុំទៅផ្សារ",
}


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_every_script_gives_terms(lang):
    assert len(terms(SENTENCES[lang])) >= 2, lang


def test_space_separated_words_are_terms_as_written():
    assert terms("التقيت بصديقي في القاهرة أمس") == ["التقيت", "بصديقي", "في", "القاهرة", "أمس"]
    assert "दिल्ली" in terms(SENTENCES["hi"]) and "अपने" in terms(SENTENCES["hi"])  # vowel signs stay in the word
    assert "אביב" in terms(SENTENCES["he"])
    assert "القاهرة" in nouns(SENTENCES["ar"])


def test_hangul_and_thai_are_read_in_character_pairs():
    assert "서울" in terms("서울에서") and set(terms("서울")) <= set(terms(SENTENCES["ko"]))
    assert terms("서울") == ["서울"] and terms("집") == ["집"]
    assert set(terms("ตลาด")) <= set(terms(SENTENCES["th"]))
    assert not set(terms("ตลาด")) <= set(terms("ฉันไปโรงเรียนเมื่อวานนี้"))  # another place: not all its pairs


def test_text_without_kana_also_gets_its_han_characters_in_pairs():
    fact, question = terms("最近我特别爱吃麻辣烫。"), terms("我最近爱吃什么？")
    assert {"最近", "爱吃"} <= set(fact) & set(question)
    assert "麻辣" in fact and "护士" in terms("我在医院当护士。")
    assert {"我家", "的狗"} <= set(terms("我家的狗叫豆豆。")) & set(terms("我家的狗叫什么名字来着？"))


def test_japanese_with_kana_gets_no_pairs():
    assert terms("東京駅で友達に会った") == ["東京駅", "友達", "会う"]
    assert "京駅" not in terms("東京駅で友達に会った")


@pytest.mark.parametrize("text,expected", [
    # English words as the Snowball stemmer gives them (caroline → carolin), the same in documents and queries.
    ("Caroline went to the LGBTQ support group yesterday",
     [stem(w) for w in ("caroline", "went", "lgbtq", "support", "group", "yesterday")]),
    ("うちの猫のモカが今日でちょうど3歳になったんだ", ["うち", "猫", "モカ", "丁度", "3"]),
    ("Dün İstanbul'da arkadaşımla buluştum", ["dün", "i̇stanbul", "da", "arkadaşımla", "buluştum"]),
    ("Вчера я встретил друга в Москве", ["вчера", "я", "встретил", "друга", "в", "москве"]),
    ("😀👍 ok!! ★☆ →", []),
    ("ーーー 々 (´・ω・｀)", []),  # Japanese letters Sudachi calls symbols, and a kaomoji's pieces, are no words
    ("すごーーい！", ["凄い"]),
])
def test_scripts_sudachi_reads_and_symbols_are_unchanged(text, expected):
    assert terms(text) == expected


T0 = 1_790_000_000


def test_recall_finds_a_korean_and_an_arabic_message_by_its_words(memory_factory):
    mem = memory_factory()
    texts = ["나는 어제 서울에서 친구를 만났어요", "좋았겠네요!", "다음 주에는 부산에 갈 거예요", "재미있겠다",
             "التقيت بصديقي في القاهرة أمس", "رائع!", "سأسافر إلى الإسكندرية الأسبوع القادم", "ممتع"]
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": T0 + 3600 * i, "source_id": f"m{i}"}
            for i, t in enumerate(texts)]
    replay(mem.graph, "yuna", rows)
    # The vector channels off: what is found, the words found.
    words_only = dict(disabled=("turn_content", "midterm", "graph"))
    for question, wanted in (("부산", "m2"), ("서울", "m0"), ("الإسكندرية", "m6"), ("القاهرة", "m4")):
        items = recall(mem.services, "yuna", question, purpose="question", budget=40, **words_only)
        assert items and wanted in items[0]["source_ids"], (question, items)
