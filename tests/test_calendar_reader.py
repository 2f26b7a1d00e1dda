"""The one calendar reader: invented expressions in English and Japanese read by recall's cue finder, by the
knowledge extractor's dates and by the session-stamp reader, and the month and weekday names written once
(nodes/text/calendar/names.py) for all of them."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from lumina_memory.nodes.knowledge import dates as knowledge_dates
from lumina_memory.nodes.retrieval import temporal_latin, temporal_scripts, temporal_text
from lumina_memory.nodes.retrieval.temporal import time_window
from lumina_memory.nodes.text.calendar import names, stamps
from lumina_memory.nodes.text.calendar.stamps import read_when

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2024, 6, 19, 12, tzinfo=timezone.utc).timestamp()  # a Wednesday
UTC = ZoneInfo("UTC")


def _days(query: str) -> tuple[date, date]:
    window = time_window(query, NOW)
    assert window is not None, query
    return tuple(datetime.fromtimestamp(t, timezone.utc).date() for t in window)


def _covers(query: str, first: date, last: date, outside: tuple[date, ...]) -> None:
    start, end = _days(query)
    assert start <= first and last <= end, (query, start, end)
    for day in outside:
        assert not start <= day <= end, (query, day, start, end)


@pytest.mark.parametrize("query", ["what did the vet say on 14 March 2023?", "2023年3月14日に獣医は何て言った？",
                                   "¿Qué dijo el veterinario el 14 de marzo de 2023?", "and on March 14th, 2023?"])
def test_an_absolute_date_is_its_day(query):
    _covers(query, date(2023, 3, 14), date(2023, 3, 14), (date(2023, 3, 20), date(2024, 3, 14)))


@pytest.mark.parametrize("query", ["which bakery did I try last month?", "先月はどのパン屋に行った？"])
def test_last_month_is_the_calendar_month_before(query):
    _covers(query, date(2024, 5, 1), date(2024, 5, 31), (date(2024, 3, 31), date(2024, 6, 18)))


def test_the_first_third_of_last_month():
    _covers("先月の上旬に買った傘はどこ？", date(2024, 5, 1), date(2024, 5, 10), (date(2024, 5, 20), date(2024, 4, 15)))


def test_the_end_of_the_fiscal_year_is_late_march():
    _covers("年度末の棚卸しはどうだった？", date(2024, 3, 15), date(2024, 3, 31), (date(2024, 2, 20), date(2024, 4, 15)))


@pytest.mark.parametrize("query", ["what did we cook last Friday?", "先週の金曜日に何を作った？"])
def test_a_weekday_of_last_week(query):
    _covers(query, date(2024, 6, 14), date(2024, 6, 14), (date(2024, 6, 7), date(2024, 6, 18)))


@pytest.mark.parametrize("query", ["where was I between August 11 and 15, 2023?", "2023年8月11日から15日まで何してた？"])
def test_a_range_of_days_said_with_one_month(query):
    _covers(query, date(2023, 8, 11), date(2023, 8, 15), (date(2023, 8, 20), date(2023, 8, 5)))


@pytest.mark.parametrize(("text", "english", "future", "day"), [
    ("I'm seeing the dentist next Thursday", True, True, date(2024, 6, 27)),
    ("来週の木曜日に歯医者に行く", False, True, date(2024, 6, 27)),
    ("I planted the tulips on Sept 3rd", True, False, date(2023, 9, 3)),
    ("Ada and I hiked on 2 February", True, False, date(2024, 2, 2)),
    ("12月5日に金沢へ行く", False, True, date(2024, 12, 5)),
    ("I repaint the fence on saturday", True, True, date(2024, 6, 22)),
])
def test_knowledge_dates_resolve_against_when_it_was_said(text, english, future, day):
    mention = knowledge_dates.find_date(text, NOW, UTC, future=future, english=english)
    assert mention is not None and mention.day == day


@pytest.mark.parametrize(("stamp", "expected"), [
    ("4:10 pm on 2 February, 2024", datetime(2024, 2, 2, 16, 10)),
    ("2 de febrero de 2024, 16:10", datetime(2024, 2, 2, 16, 10)),
    ("2024年2月2日 午後4時10分", datetime(2024, 2, 2, 16, 10)),
    ("02.03.2024", datetime(2024, 3, 2, 12)),  # dotted: day first
    ("2 กุมภาพันธ์ 2567", datetime(2024, 2, 2, 12)),  # the Buddhist era
    ("February 2nd, 2024", datetime(2024, 2, 2, 12)),  # not a fixed form: read by dateparser
    ("2-Feb-2024 4:10 pm", datetime(2024, 2, 2, 16, 10)),
])
def test_session_stamps(stamp, expected):
    assert read_when(stamp) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("stamp", ["yesterday 2024", "release 2.3", "sometime in spring", ""])
def test_a_stamp_without_a_written_day_and_year_is_none(stamp):
    assert read_when(stamp) is None


def test_month_and_weekday_names_are_the_ones_of_names():
    assert temporal_text.MONTHS is names.MONTHS
    assert knowledge_dates.MONTHS is names.MONTHS and knowledge_dates.EN_WEEKDAYS is names.EN_WEEKDAYS
    assert set(temporal_text.WEEKDAYS) == set(names.EN_WEEKDAYS)
    assert temporal_latin.MONTHS == names.latin_months()
    assert set(stamps._MONTHS) >= set(names.MONTHS) | set(names.latin_months())
    assert temporal_scripts._THAI_MONTHS == names.script_months("th")


# Month names listed in each alphabet the readers know (a definition, not a month named in prose).
_MONTH_LISTS = re.compile(r"january\W+february|enero\W+febrero|janvier\W+février|января\W+февраля|जनवरी\W+फ|يناير\W+فبراير"
                          r"|มกราคม\W+กุมภาพันธ์|\bjan\W+feb\b", re.I)
_READERS = ["nodes/retrieval/temporal*.py", "nodes/knowledge/dates.py", "nodes/knowledge/*_time.py",
            "nodes/text/calendar/*.py", "nodes/knowledge/en_sentence.py",
            "bench/locomo_data.py"]


def test_month_names_are_written_once():
    readers = sorted({path for pattern in _READERS for path in ROOT.glob(pattern)})
    assert len(readers) >= 16
    spelled = [path.relative_to(ROOT).as_posix() for path in readers if _MONTH_LISTS.search(path.read_text("utf-8"))]
    assert spelled == ["nodes/text/calendar/names.py"]
