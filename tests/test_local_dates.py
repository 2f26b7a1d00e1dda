"""Dates and times in the user's time zone (``LUMINA_TIMEZONE``, Asia/Tokyo by default): what recall, priming and
read_memory show, and the days a question's time cue means. A Japanese user's morning (before 09:00) is the
previous day in UTC; labelled by UTC, "this morning" read as yesterday and 「昨日」 asked at 07:30 meant two days
ago. Knowledge dates were already local (nodes.knowledge.dates); episodes now agree with them."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.priming import prime
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.temporal import date_label, time_window
from lumina_memory.nodes.tools.memory_tools import create_memory_tools
from lumina_memory.nodes.tools.pointers import parse_pointer, time_pointer, time_span

from .test_memory_tools import call

TOKYO = ZoneInfo("Asia/Tokyo")
MORNING = datetime(2026, 10, 5, 8, 0, tzinfo=TOKYO).timestamp()  # 2026-10-04T23:00 UTC


def test_labels_and_pointers_are_the_users_day_and_minute():
    assert date_label(MORNING, "Asia/Tokyo") == "2026-10-05"
    assert date_label(MORNING, "UTC") == "2026-10-04"
    assert time_pointer(MORNING, "Asia/Tokyo") == "2026-10-05T08:00"
    assert time_span(parse_pointer("2026-10-05T08:00"), "Asia/Tokyo") == (MORNING, MORNING + 60)
    # A zone with summer time: the offset of the instant, not of the zone's standard time.
    summer = datetime(2026, 7, 1, 23, 30, tzinfo=ZoneInfo("America/New_York")).timestamp()  # 03:30 UTC, 2 July
    assert date_label(summer, "America/New_York") == "2026-07-01"
    assert time_pointer(summer, "America/New_York") == "2026-07-01T23:30"


def test_a_day_a_question_names_is_the_users_day():
    asked = datetime(2026, 10, 6, 7, 30, tzinfo=TOKYO).timestamp()  # 2026-10-05T22:30 UTC
    for question in ("10月5日に何した？", "What did I do on October 5?", "先週の月曜日は何してた？"):
        start, end = time_window(question, asked, "Asia/Tokyo")
        utc_start, utc_end = time_window(question, asked, "UTC")
        # The same days (with a day's slack each side), Tokyo's: they begin nine hours before UTC's.
        assert (utc_start - start, utc_end - end) == (9 * 3600, 9 * 3600), question
    start, end = time_window("10月5日に何した？", asked, "Asia/Tokyo")
    assert (start, end) == (datetime(2026, 10, 4, tzinfo=TOKYO).timestamp(), datetime(2026, 10, 7, tzinfo=TOKYO).timestamp())
    # "Yesterday" is a span back from now: the same instant either way.
    assert time_window("昨日何した？", asked, "Asia/Tokyo") == time_window("昨日何した？", asked, "UTC")


def test_recall_priming_and_read_memory_show_the_users_dates(memory):
    user = "nana"
    rows = [{"user_id": user, "speaker": speaker, "text": text, "ts": MORNING + 60 * n, "source_id": f"m:{n}"}
            for n, (speaker, text) in enumerate([("user", "今朝、モカを動物病院に連れて行ったよ"),
                                                  ("lumina", "モカ、大丈夫だった？"),
                                                  ("user", "うん、ただの健康診断だった")])]
    replay(memory.graph, user, rows, flush=True)
    items = recall(memory.services, user, "モカを病院に連れて行ったのはいつ？", purpose="question", budget=300)
    shown = [i for i in items if "モカ" in i["text"]]
    assert shown and all(i["date"] == "2026-10-05" and i["text"].startswith("[2026-10-05]") for i in shown)

    primed = prime(memory.services, user, "モカを病院に連れて行ったのはいつ？", message_type="question")
    assert "[2026-10-05T08:00]" in primed.text and "2026-10-04" not in primed.text

    _, read = create_memory_tools(memory.services, user)
    opened = call(read, {"id": "[2026-10-05T08:00]"})
    assert opened.status == "success" and "動物病院" in opened.content
    assert call(read, {"id": "[2026-10-04T23:00]"}).status != "success" or "動物病院" not in call(
        read, {"id": "[2026-10-04T23:00]"}).content


def test_utc_keeps_utc_days(memory_factory):
    memory = memory_factory(timezone="UTC")
    user = "ken"
    replay(memory.graph, user, [{"user_id": user, "speaker": "user", "text": "今朝、モカを動物病院に連れて行ったよ",
                                 "ts": MORNING, "source_id": "m:0"}], flush=True)
    items = recall(memory.services, user, "モカを病院に連れて行ったのはいつ？", purpose="question", budget=300)
    assert any(i["date"] == "2026-10-04" for i in items if "モカ" in i["text"])
