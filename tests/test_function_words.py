"""A question's function words in languages without a stop list are no keywords (nodes/text/function_words.py).

"¿Cuál es mi profesión?" shares no content word with "Trabajo de técnica de laboratorio en el hospital.", so BM25
ranked first every turn holding "es" and "mi", and the user's job fell out of a small budget."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.budget import pack
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.function_words import content_terms, query_language
from lumina_memory.nodes.text.tokenize import terms

T0 = 1_790_000_000


@pytest.mark.parametrize("query,dropped,kept", [
    ("¿Cuál es mi profesión?", {"es", "mi"}, {"profesión"}),
    ("Was ist mein Beruf?", {"ist"}, {"beruf"}),
    ("Quelle est ma profession ?", {"est"}, {"profession"}),
    ("Qual é a minha profissão?", {"minha"}, {"profissão"}),
    ("ما هي وظيفتي؟", {"ما"}, {"وظيفتي"}),
    ("मेरा पेशा क्या है?", {"क्या", "है"}, {"पेशा"}),  # vowel signs are marks: still words
    ("¿Dónde está mi trabajo nuevo?", {"mi"}, {"trabajo"}),  # common, yet a content word: under Zipf 6
    ("Was ist in Raum 3 passiert?", {"ist"}, {"raum", "3"}),  # numbers stay what is asked about
])
def test_the_querys_function_words_are_dropped_and_its_content_words_kept(query, dropped, kept):
    before = terms(query)
    after = content_terms(query, before)
    assert dropped <= set(before) and not dropped & set(after)
    assert {t for word in kept for t in terms(word)} <= set(after)  # as the index reads them (profession → profess)


@pytest.mark.parametrize("query", ["What is my profession?", "When did Priya go to the grief support group?",
                                   "What is the API server port at the moment?", "モカは何歳？", "我是做什么工作的？"])
def test_english_japanese_and_unsegmented_languages_are_left_to_their_own_readers(query):
    assert content_terms(query, terms(query)) == terms(query)


def test_a_query_of_function_words_only_keeps_them_and_no_terms_stay_none():
    assert content_terms("¿Qué es eso?", ["qué", "es", "eso"]) == ["qué", "es", "eso"]
    assert content_terms("¿Cuál es mi profesión?", []) == []
    assert query_language("?") is None


def test_recall_finds_the_users_job_when_the_question_shares_only_function_words_with_others(memory_factory, tmp_path):
    """The bench's Spanish chats (bench.multilingual_data, the set's seed): a user's facts among a friend's
    look-alikes and small talk, most of them "Mi … es …"; the job is asked for within 64 tokens."""
    import json

    from bench.locomo_data import load
    from bench.multilingual_data import generate

    path = tmp_path / "es.json"
    path.write_text(json.dumps(generate(per_language=3, languages=("es",)), ensure_ascii=False), encoding="utf-8")
    found = {(two_back, on): 0 for two_back in (0.5, 0.0) for on in (True, False)}
    for conv in load(str(path), None):
        (asked,) = [q for q in conv.questions if "profesión" in q.question]
        rows = [{"speaker": t.speaker, "text": t.text, "ts": t.ts, "source_id": t.dia_id} for t in conv.turns]
        for two_back in (0.5, 0.0):
            mem = memory_factory(recall_keyword_context2=two_back)
            replay(mem.graph, "lucia", rows)
            for on in (True, False):
                items = recall(mem.services, "lucia", asked.question, purpose="question", budget=64,
                               disabled=() if on else ("function_words",))
                found[(two_back, on)] += set(asked.evidence) <= pack(items, 64)[1]
    assert found[(0.5, True)] == 3 and found[(0.0, True)] == 3
    # Reading "es" and "mi" as keywords ranks the turns holding them first. With the turn two back carried
    # (the default), this small set finds the job even so (3 of 3): the contrast shows with one turn back only.
    assert found[(0.0, False)] < 3
