"""bench.respelled_dates_data: the same LoCoMo-format file with its dates spelled otherwise (a probe of whether
temporal recall holds across date formats)."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench.locomo_data import load, read_when
from bench.respelled_dates_data import DAY_SPELLINGS, SESSION_SPELLINGS, main, respell_question, respell_session
from lumina_memory.nodes.retrieval.temporal import time_window

MINI = Path(__file__).parent / "data" / "mini_locomo.json"
NOW = datetime(2023, 12, 1, tzinfo=timezone.utc).timestamp()


def test_every_spelling_of_a_session_date_reads_as_the_same_minute():
    for k in range(len(SESSION_SPELLINGS)):
        written = respell_session("1:56 pm on 8 May, 2023", k)
        assert written != "1:56 pm on 8 May, 2023"
        assert read_when(written) == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), written


@pytest.mark.parametrize("question", [
    "What recipe did Priya send to Tomas on October 13, 2023?",
    "What did Ines buy for her bakery on 1 February, 2023?",
    "What went wrong with Tomas's bike in October 2023?",
])
def test_every_spelling_of_a_question_date_opens_the_same_window(question):
    original = time_window(question, NOW)
    assert original is not None
    counter = itertools.count()
    spellings = {respell_question(question, counter) for _ in range(len(DAY_SPELLINGS))}
    assert len(spellings) > 1 and question not in spellings
    for written in spellings:
        assert time_window(written, NOW) == original, written


def test_a_day_respelled_is_not_read_again_as_a_month():
    # "October 13, 2023" -> "the 13th of October 2023": the month pattern must not turn it into "October of 2023".
    counter = itertools.count(2)
    assert respell_question("on October 13, 2023?", counter) == "on the 13th of October 2023?"


def test_the_file_keeps_its_turns_clock_and_evidence(tmp_path):
    out = tmp_path / "respelled.json"
    assert main(["--data", str(MINI), "--out", str(out)]) == 0
    before, after = load(MINI), load(out)
    assert [c.unreadable_dates for c in after] == [[] for _ in after]
    for a, b in zip(before, after):
        assert [(t.dia_id, t.text, t.ts) for t in a.turns] == [(t.dia_id, t.text, t.ts) for t in b.turns]
        assert [q.evidence for q in a.questions] == [q.evidence for q in b.questions]
    raw, new = json.loads(MINI.read_text(encoding="utf-8")), json.loads(out.read_text(encoding="utf-8"))
    sessions = [(s["conversation"][k], t["conversation"][k]) for s, t in zip(raw, new)
                for k in s["conversation"] if k.endswith("_date_time")]
    assert sessions and all(x != y for x, y in sessions)
