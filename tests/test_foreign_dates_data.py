"""bench.foreign_dates_data: a LoCoMo-format file with its dates written in another language (a probe of whether
time cues are read beyond English)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench.foreign_dates_data import LANGUAGES, main, spell_session, translate_question
from bench.locomo_data import load, read_when
from lumina_memory.nodes.retrieval.temporal import time_window

MINI = Path(__file__).parent / "data" / "mini_locomo.json"
NOW = datetime(2023, 12, 1, tzinfo=timezone.utc).timestamp()
QUESTIONS = [
    "What recipe did Priya send to Tomas on October 13, 2023?",
    "What did Ines buy for her bakery on 1 February, 2023?",
    "What went wrong with Tomas's bike in October 2023?",
    "When did Priya go sailing in June?",
    "How many times has Tomas visited the museum in 2023?",
    "Which city did Priya leave 4 years ago?",
    "What did Omar cook the week before August 3, 2023?",
]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_session_date_in_each_language_reads_as_the_same_minute(lang):
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    written = spell_session(lang, when)
    assert "May" not in written and "pm" not in written.lower()
    assert read_when(written) == when, written


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_question_date_in_each_language_opens_the_english_window(lang):
    for question in QUESTIONS:
        written = translate_question(question, lang)
        assert written != question or (lang == "nl" and " in 20" in question)  # Dutch says "in 2023" too
        assert time_window(written, NOW) == time_window(question, NOW) is not None, written


def test_the_words_around_a_date_are_the_language_s_own():
    assert translate_question("What did she say on 8 May, 2023?", "es") == "What did she say el 8 de mayo de 2023?"
    assert translate_question("What happened in July 2023?", "de") == "What happened im Juli 2023?"
    assert translate_question("Which city did he leave 4 years ago?", "ko") == "Which city did he leave 4년 전?"


def test_the_file_keeps_its_turns_clock_and_evidence(tmp_path):
    out = tmp_path / "dev_de.json"
    assert main(["--data", str(MINI), "--language", "de", "--out", str(out)]) == 0
    before, after = load(MINI), load(out)
    assert [c.unreadable_dates for c in after] == [[] for _ in after]
    for a, b in zip(before, after):
        assert [(t.dia_id, t.text, t.ts) for t in a.turns] == [(t.dia_id, t.text, t.ts) for t in b.turns]
        assert [q.evidence for q in a.questions] == [q.evidence for q in b.questions]
    raw, new = json.loads(MINI.read_text(encoding="utf-8")), json.loads(out.read_text(encoding="utf-8"))
    sessions = [(s["conversation"][k], t["conversation"][k]) for s, t in zip(raw, new)
                for k in s["conversation"] if k.endswith("_date_time")]
    assert sessions and all(x != y for x, y in sessions)


def test_an_unknown_language_is_refused():
    with pytest.raises(SystemExit):
        main(["--data", str(MINI), "--language", "xx", "--out", "/dev/null"])
