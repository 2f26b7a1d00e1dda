"""Session dates of LoCoMo-format files written in other languages (the harness takes any file of the format).

A held-out set translated into Spanish, German, Korean or Chinese writes its session dates the way that language
does. A date the loader cannot read falls back to the previous session + 1 day, which keeps the order but puts
every session on the wrong day: every temporal question would then be measured against a made-up clock. The
loader reads these forms, and says how many dates it could not read instead of guessing in silence.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from bench.locomo_data import load, parse_when

NEVER = datetime(1999, 1, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("written, expected", [
    ("8 de mayo de 2023, 13:56", "2023-05-08 13:56"),          # Spanish
    ("1:56 p. m. del 8 de mayo de 2023", "2023-05-08 13:56"),  # Spanish, 12-hour clock
    ("8. Mai 2023, 13:56 Uhr", "2023-05-08 13:56"),            # German
    ("8 mars 2023 à 13h56", "2023-03-08 13:56"),               # French
    ("8 février 2023", "2023-02-08 12:00"),                    # French, no time: noon, as in English
    ("8 maggio 2023 13:56", "2023-05-08 13:56"),               # Italian
    ("8 de março de 2023", "2023-03-08 12:00"),                # Portuguese
    ("8 mei 2023 13:56", "2023-05-08 13:56"),                  # Dutch
    ("2023년 5월 8일 오후 1:56", "2023-05-08 13:56"),           # Korean
    ("2023년 5월 8일 오전 12시 5분", "2023-05-08 00:05"),       # Korean, 시/분
    ("2023年5月8日 下午1点56分", "2023-05-08 13:56"),           # Chinese
    ("2023年5月8日 上午9点", "2023-05-08 09:00"),               # Chinese, the hour alone
    ("May 8, 2023 1:56 pm", "2023-05-08 13:56"),               # English, month first
    ("08.05.2023 13:56", "2023-05-08 13:56"),                  # day first with dots (German, Russian, …)
    ("8.5.2023, 1:56 PM", "2023-05-08 13:56"),                 # the same, unpadded, 12-hour clock
    ("2023.05.08 13:56", "2023-05-08 13:56"),                  # year first with dots (Korean, Hungarian)
    ("Monday 8 May 2023, 13:56", "2023-05-08 13:56"),          # a weekday first
    ("May 8, 2023 at 1:56 PM", "2023-05-08 13:56"),
])
def test_session_dates_in_other_languages(written, expected):
    assert parse_when(written, NEVER).strftime("%Y-%m-%d %H:%M") == expected


def test_what_was_read_before_reads_the_same():
    assert parse_when("1:56 pm on 8 May, 2023", NEVER).strftime("%Y-%m-%d %H:%M") == "2023-05-08 13:56"
    assert parse_when("12:48 am on 1 February, 2023", NEVER).strftime("%H:%M") == "00:48"
    assert parse_when("2023年5月8日（月）午後1時56分", NEVER).strftime("%Y-%m-%d %H:%M") == "2023-05-08 13:56"
    assert parse_when("3 days ago", NEVER) == NEVER  # no date in it: the fallback, as before


def test_unreadable_session_dates_are_counted(tmp_path):
    turns = [{"speaker": "A", "dia_id": "D1:1", "text": "hola"}]
    sample = {"sample_id": "s", "conversation": {
        "speaker_a": "A", "speaker_b": "B",
        "session_1": turns, "session_1_date_time": "8 de mayo de 2023, 13:56",
        "session_2": [{**turns[0], "dia_id": "D2:1"}], "session_2_date_time": "el día después",
        "session_3": [{**turns[0], "dia_id": "D3:1"}],
    }, "qa": []}
    path = tmp_path / "s.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    (conv,) = load(path)
    assert conv.unreadable_dates == ["session_2", "session_3"]
    days = [datetime.fromtimestamp(t.ts, timezone.utc).strftime("%Y-%m-%d") for t in conv.turns]
    assert days == ["2023-05-08", "2023-05-09", "2023-05-10"]  # the order kept, a day apart
