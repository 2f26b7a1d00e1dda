"""Time cues of a question, read on the conversation's clock (nodes.retrieval.temporal and its temporal_*
modules): every usual way to name a day, a week, a part of a month, a season or a stretch back from now,
in English and Japanese; what must not open a window; and what a question asks of time (a duration,
an order) beyond a window."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings, strategies as st

from lumina_memory.nodes.retrieval import (temporal_dates, temporal_holidays, temporal_periods, temporal_questions,
                             temporal_ranges, temporal_relative)
from lumina_memory.nodes.retrieval.temporal import time_cues, time_window
from lumina_memory.nodes.retrieval.temporal_patterns import Cued
from lumina_memory.nodes.retrieval.temporal_text import normalise


def _ts(day: str, hour: int = 12) -> float:
    return datetime.strptime(day, "%Y-%m-%d").replace(hour=hour, tzinfo=timezone.utc).timestamp()


NOW = _ts("2023-07-20", 15)  # a Thursday: the newest turn of the conversation


def _check(query: str, inside: list[str], outside: list[str], now: float = NOW) -> None:
    window = time_window(query, now)
    assert window is not None, query
    for day in inside:
        assert window[0] <= _ts(day) <= window[1], (query, day, window)
    for day in outside:
        assert not window[0] <= _ts(day) <= window[1], (query, day, window)


# (query, days inside the window, days outside it), all on the clock of Thursday 20 July 2023.
WEEKDAYS = [
    ("What did I do last Friday?", ["2023-07-14"], ["2023-07-07", "2023-07-18"]),
    ("Where did we eat on Saturday?", ["2023-07-15"], ["2023-07-08", "2023-07-18"]),
    ("What did I tell you this Monday?", ["2023-07-17"], ["2023-07-10", "2023-07-14"]),
    ("What happened on Friday of last week?", ["2023-07-14"], ["2023-07-07", "2023-07-18"]),
    ("last week's Friday", ["2023-07-14"], ["2023-07-07", "2023-07-18"]),
    ("the Friday before last", ["2023-07-07"], ["2023-07-14"]),
    ("先週の金曜日に何を食べた？", ["2023-07-14"], ["2023-07-07", "2023-07-18"]),
    ("金曜日に何を買った？", ["2023-07-14"], ["2023-07-07", "2023-07-18"]),
    ("月曜に話したこと", ["2023-07-17"], ["2023-07-10", "2023-07-14"]),
    ("先々週の水曜", ["2023-07-05"], ["2023-07-12"]),
]
MONTH_PARTS = [
    ("What did I do in early June?", ["2023-06-01", "2023-06-10"], ["2023-06-15", "2023-05-25"]),
    ("mid-June", ["2023-06-15"], ["2023-06-05", "2023-06-25"]),
    ("late June 2022", ["2022-06-25"], ["2022-06-15", "2023-06-25"]),
    ("at the beginning of May", ["2023-05-03"], ["2023-05-20"]),
    ("the end of May", ["2023-05-28", "2023-05-31"], ["2023-05-15"]),
    ("the second half of June", ["2023-06-25"], ["2023-06-05"]),
    ("6月上旬に何をした？", ["2023-06-05"], ["2023-06-15"]),
    ("6月中旬", ["2023-06-15"], ["2023-06-05", "2023-06-25"]),
    ("6月下旬", ["2023-06-25"], ["2023-06-15"]),
    ("5月の初めに", ["2023-05-03"], ["2023-05-20"]),
    ("5月の終わりごろ", ["2023-05-28"], ["2023-05-15"]),
    ("先月末に決めたこと", ["2023-06-28"], ["2023-06-15", "2023-07-10"]),
    ("月初に何した？", ["2023-07-03"], ["2023-07-18", "2023-06-03"]),  # this month's beginning
    ("6月初に何した？", ["2023-06-03"], ["2023-06-25"]),
    ("先月初の会議", ["2023-06-03"], ["2023-06-25", "2023-07-10"]),
    ("今月初めて行った店は？", ["2023-07-03", "2023-07-18"], ["2023-06-10"]),  # 初めて: for the first time this month
    ("the end of last month", ["2023-06-28"], ["2023-06-15", "2023-07-10"]),
    ("the first week of May", ["2023-05-04"], ["2023-05-20"]),
    ("6月の第2週", ["2023-06-10"], ["2023-06-25", "2023-06-01"]),
]
QUARTERS_AND_SHORT_YEARS = [  # NOW is 2023-07-20: Q3 has begun
    ("What did we ship in Q1?", ["2023-02-15"], ["2022-02-15", "2023-04-15"]),
    ("Q4 2022", ["2022-11-15"], ["2022-09-15", "2023-01-15"]),
    ("the first quarter", ["2023-03-20"], ["2023-04-10"]),
    ("last quarter", ["2023-05-15"], ["2023-07-10", "2023-03-15"]),
    ("this quarter", ["2023-07-10"], ["2023-06-15"]),
    ("2023年の第2四半期", ["2023-05-15"], ["2023-07-10"]),
    ("前四半期の売上", ["2023-05-15"], ["2023-07-10"]),
    ("What did I do in '22?", ["2022-06-15"], ["2023-02-01", "2021-12-01"]),
    # decades (2026-12-03: "the early 2020s" read as early 2020, "the 90s" as nothing)
    ("What music did I like in the 90s?", ["1994-06-15", "1999-06-15"], ["2001-06-15", "1989-06-15"]),
    ("in the early 2020s", ["2021-06-15"], ["2019-06-15", "2024-06-15"]),
    ("the late 1980s", ["1988-06-15"], ["1985-06-15", "1990-06-15"]),
    ("the '80s", ["1985-06-15"], ["1990-06-15"]),
    ("90年代に何が流行った？", ["1995-06-15"], ["2000-06-15"]),
    ("2010年代後半", ["2018-06-15"], ["2013-06-15", "2020-06-15"]),
]
SEASONS = [  # northern meteorological seasons; without a year the most recent one not after now
    ("What did we do last summer?", ["2022-07-15"], ["2023-07-01"]),
    ("in the spring", ["2023-04-15"], ["2022-04-15", "2023-07-01"]),
    ("winter 2023", ["2023-01-15"], ["2022-01-15", "2023-12-15"]),
    ("the summer of 2022", ["2022-07-01"], ["2023-07-01"]),
    ("去年の夏どこに行った？", ["2022-08-01"], ["2023-07-01"]),
    ("春に何を始めた？", ["2023-04-15"], ["2022-04-15"]),
    ("去年の冬", ["2022-12-20", "2023-01-15"], ["2022-01-15"]),  # the winter that began in December of last year
    ("last winter", ["2023-01-15"], ["2022-01-15"]),
    ("in the fall", ["2022-10-15"], ["2021-10-15"]),
]
RELATIVE = [
    ("a fortnight ago", ["2023-07-06"], ["2023-07-18", "2023-06-20"]),
    ("the other day", ["2023-07-15"], ["2023-06-20"]),
    ("a couple of days ago", ["2023-07-18"], ["2023-07-10"]),
    ("What did I read a week or two ago?", ["2023-07-12", "2023-07-07"], ["2023-07-18", "2023-06-30"]),
    ("a day or two ago", ["2023-07-19", "2023-07-18"], ["2023-07-15"]),
    ("a month or two back", ["2023-06-05", "2023-05-25"], ["2023-07-15", "2023-04-15"]),
    # 2026-12-03: each opened nothing
    ("2週間くらい前に何読んだ？", ["2023-07-06"], ["2023-07-18", "2023-06-20"]),  # an "about" between count and 前
    ("1ヶ月ほど前", ["2023-06-20"], ["2023-07-15", "2023-05-10"]),
    ("3日ぐらい前", ["2023-07-17"], ["2023-07-10"]),
    ("couple days ago", ["2023-07-18"], ["2023-07-10"]),
    ("What did we do two weekends ago?", ["2023-07-08", "2023-07-09"], ["2023-07-15", "2023-07-01"]),
    ("a weekend back", ["2023-07-15", "2023-07-16"], ["2023-07-08"]),
    ("What did I read this past week?", ["2023-07-14"], ["2023-07-05"]),
    ("what happened past week", ["2023-07-14"], ["2023-07-05"]),
    ("What did I do over the weekend?", ["2023-07-15", "2023-07-16"], ["2023-07-08", "2023-07-19"]),
    ("last weekend", ["2023-07-15", "2023-07-16"], ["2023-07-08", "2023-07-19"]),
    ("週末に何した？", ["2023-07-15", "2023-07-16"], ["2023-07-08", "2023-07-19"]),
    ("先週末", ["2023-07-15", "2023-07-16"], ["2023-07-08", "2023-07-19"]),
    ("この間話した映画", ["2023-07-15"], ["2023-06-01"]),
    ("先日の件", ["2023-07-15"], ["2023-06-01"]),
    ("earlier this week", ["2023-07-17"], ["2023-07-12"]),
    ("earlier this month", ["2023-07-03"], ["2023-06-20"]),
    ("earlier this year", ["2023-02-01"], ["2022-12-01"]),
    ("in the past two weeks", ["2023-07-10"], ["2023-06-25"]),
    ("ここ数日", ["2023-07-18"], ["2023-07-05"]),
    ("半年前", ["2023-01-20"], ["2023-06-20"]),
    ("last week", ["2023-07-10", "2023-07-16"], ["2023-07-19", "2023-06-30"]),  # about a week ago and Mon–Sun before
    ("先月", ["2023-06-01", "2023-06-30"], ["2023-07-10", "2023-05-01"]),
    ("What did I read a few weeks back?", ["2023-06-29"], ["2023-07-18", "2023-05-20"]),
    ("two months back", ["2023-05-20"], ["2023-07-10", "2023-03-01"]),
    ("a year and a half ago", ["2022-01-20"], ["2022-10-20", "2021-03-01"]),
    ("one and a half years ago", ["2022-01-20"], ["2022-10-20", "2021-03-01"]),
    ("two and a half weeks ago", ["2023-07-03"], ["2023-07-15", "2023-06-15"]),
    ("ひと月前に何した？", ["2023-06-20"], ["2023-07-15", "2023-05-10"]),
    ("What did I do last Thurs?", ["2023-07-13"], ["2023-07-20", "2023-07-06"]),  # NOW is a Thursday
    ("what did we eat on Sat.?", ["2023-07-15"], ["2023-07-08", "2023-07-19"]),
    ("this Fri", ["2023-07-14"], ["2023-07-07"]),
    ("What did I do two Saturdays ago?", ["2023-07-08"], ["2023-07-15", "2023-07-01"]),
    ("a couple of Fridays ago", ["2023-07-07"], ["2023-07-14", "2023-06-30"]),
    ("the night before last", ["2023-07-18"], ["2023-07-20", "2023-07-14"]),
    ("一昨晩", ["2023-07-18"], ["2023-07-20", "2023-07-14"]),
    # a year back, not all of last year
    ("What was I doing this time last year?", ["2022-07-20", "2022-07-10"], ["2022-03-01", "2022-11-01", "2023-07-20"]),
    ("去年の今頃何してた？", ["2022-07-20"], ["2022-03-01", "2022-11-01"]),
    ("去年の今日", ["2022-07-20"], ["2022-07-10", "2022-07-30"]),
    ("a year ago today", ["2022-07-20"], ["2022-07-10", "2022-07-30"]),
]
WEEKS_OF_A_DAY = [
    ("the week before 9 June 2023", ["2023-06-03", "2023-06-08"], ["2023-06-12", "2023-05-28"]),
    ("the week of May 7", ["2023-05-05", "2023-05-10"], ["2023-05-20", "2023-04-25"]),  # 7 May 2023 is a Sunday
    ("5月7日の週", ["2023-05-05", "2023-05-10"], ["2023-05-20", "2023-04-25"]),
    ("the weekend before 9 June 2023", ["2023-06-03", "2023-06-04"], ["2023-06-10", "2023-05-28"]),
    ("the week after June 3", ["2023-06-07"], ["2023-05-30", "2023-06-15"]),
    ("6月3日の翌週", ["2023-06-07"], ["2023-05-30", "2023-06-15"]),
]
NUMERIC_AND_ERAS = [
    ("5/7/2023", ["2023-05-07"], ["2023-07-05"]),  # with a year: month first, as in the US
    ("13/05/2023", ["2023-05-13"], []),  # a first number above 12 is the day
    ("2023.5.7", ["2023-05-07"], []),
    ("07.05.2023", ["2023-05-07"], ["2023-07-05"]),  # dots: day first, as in Europe
    ("5/17", ["2023-05-17"], []),  # no year, but only one reading is a date
    ("6/3に何した？", ["2023-06-03"], ["2023-03-06"]),  # Japanese writes month / day
    # a day of the month alone: the latest one not after today (the 20th here)
    ("What did I do on the 15th?", ["2023-07-15"], ["2023-06-15", "2023-07-18"]),
    ("What happened on the 28th?", ["2023-06-28"], ["2023-07-28", "2023-07-10"]),
    ("15日に何した？", ["2023-07-15"], ["2023-06-15", "2023-07-18"]),
    ("28日の夜に何した？", ["2023-06-28"], ["2023-07-10"]),
    ("5/7の打ち合わせ", ["2023-05-07"], ["2023-07-05"]),
    ("17/5", ["2023-05-17"], []),
    ("2023-05-07T10:00", ["2023-05-07"], ["2023-05-12"]),
    ("令和5年5月7日", ["2023-05-07"], ["2019-05-07"]),
    ("平成31年4月30日", ["2019-04-30"], []),
    ("令和元年に引っ越した", ["2019-06-01"], ["2020-06-01"]),
    ("五月七日に会った", ["2023-05-07"], ["2023-05-17"]),
    ("二〇二三年五月七日", ["2023-05-07"], []),
    ("２０２３年５月７日", ["2023-05-07"], []),
    ("the 7th of May, 2023", ["2023-05-07"], []),
    ("June third", ["2023-06-03"], ["2023-06-13"]),
    ("what did we talk about on may 7?", ["2023-05-07"], []),
]
FROM_A_NAMED_DAY = [
    ("two days after June 3", ["2023-06-05"], ["2023-06-03", "2023-06-08"]),
    ("6月3日の3日後", ["2023-06-06"], ["2023-06-03"]),
    ("three days before June 10", ["2023-06-07"], ["2023-06-10"]),
    ("6月3日の前日", ["2023-06-02"], ["2023-06-05"]),
    ("a week after June 3", ["2023-06-10"], ["2023-06-03"]),
    ("the day after Christmas", ["2022-12-26"], ["2023-01-05"]),
]
HOLIDAYS = [
    ("last Christmas", ["2022-12-25"], ["2021-12-25"]),
    ("去年のクリスマス", ["2022-12-25"], ["2021-12-25"]),
    ("ゴールデンウィークに何した？", ["2023-05-03"], ["2023-05-20"]),
    ("Thanksgiving", ["2022-11-24"], ["2022-11-17"]),  # the fourth Thursday of November
    ("お盆", ["2022-08-14"], ["2022-08-25"]),
    ("What did we do around Easter?", ["2023-04-09"], ["2023-03-20", "2023-04-20"]),  # 9 April in 2023
    ("Easter 2022", ["2022-04-17"], ["2022-04-25"]),
    ("去年のイースター", ["2022-04-17"], ["2023-04-09"]),
    ("Mother's Day", ["2023-05-14"], ["2023-05-21"]),  # the second Sunday of May
    ("母の日に何を贈った？", ["2023-05-14"], ["2023-05-21"]),
    ("Father's Day", ["2023-06-18"], ["2023-06-11"]),  # the third Sunday of June
    ("梅雨の頃に何した？", ["2023-06-15", "2023-07-10"], ["2023-05-20", "2023-08-10"]),
    ("年度末は忙しかった？", ["2023-03-25"], ["2023-03-05", "2023-04-10"]),  # the Japanese fiscal year ends in March
    ("去年の年度末", ["2022-03-25"], ["2023-03-25"]),
    ("新年度に何を始めた？", ["2023-04-03"], ["2023-03-20", "2023-05-01"]),
    ("父の日", ["2023-06-18"], ["2023-06-11"]),
]
# The same days in the spellings bench.respelled_dates_data writes (2026-12-02: "July of 2023" read as all of 2023).
SPELLED_OTHERWISE = [
    ("What did I do in July of 2023?", ["2023-07-10"], ["2023-06-10", "2023-08-10"]),
    ("late July of 2022", ["2022-07-28"], ["2022-07-10", "2023-07-28"]),
    ("early May of 2023", ["2023-05-03"], ["2023-05-25"]),
    ("the first week of July of 2023", ["2023-07-04"], ["2023-07-20"]),
    ("on the 13th of October of 2022", ["2022-10-13"], ["2022-10-20"]),
    ("What did I bake last weekend before April 10, 2023?", ["2023-04-08", "2023-04-09"], ["2023-04-11", "2023-04-02"]),
    ("the last weekend before 2023-04-10", ["2023-04-08", "2023-04-09"], ["2023-04-11"]),
    ("on Friday, July 7, 2023", ["2023-07-07"], ["2023-07-14"]),
    ("on 07.07.2023", ["2023-07-07"], ["2023-07-14"]),
    ("in Nov 2022", ["2022-11-15"], ["2022-10-15"]),
    ("in 2022-11", ["2022-11-15"], ["2022-10-15"]),
]
SINCE = [
    ("What have I done since June 3?", ["2023-06-10", "2023-07-19"], ["2023-05-30"]),
    ("6月3日以来", ["2023-06-10", "2023-07-19"], ["2023-05-30"]),
    ("since 2020", ["2021-06-01"], ["2019-06-01"]),
]

# A stretch of days with its month said once (2026-12-03: "between August 11 and 15" read as August 11 alone,
# "from 3 to 5 June" as June 5 alone).
DAY_RANGES = [
    ("Where was John between June 11 and 15?", ["2023-06-11", "2023-06-13", "2023-06-15"], ["2023-06-05", "2023-06-20"]),
    ("What did I do from 3 to 5 June?", ["2023-06-03", "2023-06-04", "2023-06-05"], ["2023-05-30", "2023-06-10"]),
    ("June 11-15", ["2023-06-13"], ["2023-06-20", "2023-06-05"]),
    ("the trip on June 11–15, 2022", ["2022-06-13"], ["2023-06-13"]),
    ("11–15 June", ["2023-06-12", "2023-06-15"], ["2023-06-20"]),
    ("between the 11th and the 15th of June", ["2023-06-13"], ["2023-06-20", "2023-06-05"]),
    ("where was he June 11th to the 15th?", ["2023-06-14"], ["2023-06-20"]),
    ("June 11 through 15 of 2022", ["2022-06-14"], ["2023-06-14"]),
    ("between June 11 and 15 June 2022", ["2022-06-13"], ["2023-06-13"]),  # the month said twice, the year once
    ("between June 11 and 15 July", ["2023-06-11", "2023-07-15"], ["2023-07-18"]),  # each day with its own month
    # a year said once covers the months and parts of months around it (2026-12-03: "from May to July 2022" opened
    # July 2022 to June 2023)
    ("What did I do from May to July 2022?", ["2022-05-10", "2022-07-20"], ["2022-09-01", "2023-05-10"]),
    ("2022年5月から7月まで何してた？", ["2022-05-10", "2022-07-20"], ["2022-09-01", "2023-05-10"]),
    ("from late May to early June 2022", ["2022-05-28", "2022-06-03"], ["2023-05-28", "2022-06-20"]),
    ("in June and the summer of 2021", ["2021-06-15", "2021-08-15"], ["2022-06-15", "2023-06-15"]),
    ("last May and July 2022", ["2023-05-15", "2022-07-15"], []),  # "last May" keeps its own year
    # parts of one month said once (2026-12-03: "early to mid June" read mid June, 「6月上旬から中旬」 since early June)
    ("What did I do in early to mid June?", ["2023-06-03", "2023-06-15"], ["2023-06-28", "2023-05-20"]),
    ("mid-to-late June 2022", ["2022-06-15", "2022-06-27"], ["2022-06-03", "2023-06-20"]),
    ("6月上旬から中旬にかけて何してた？", ["2023-06-03", "2023-06-15"], ["2023-06-28", "2023-07-10"]),
    ("2022年6月中旬〜下旬", ["2022-06-15", "2022-06-27"], ["2022-06-03", "2023-06-20"]),
    ("6月11日から15日まで何してた？", ["2023-06-11", "2023-06-13", "2023-06-15"], ["2023-06-05", "2023-06-20"]),
    ("6月11日〜15日はどこにいた？", ["2023-06-13"], ["2023-06-20"]),
    ("6月11～15日", ["2023-06-13"], ["2023-06-20"]),
    ("2022年6月11日から13日にかけて", ["2022-06-12"], ["2023-06-12"]),
    # the same in the other languages normalise reads
    ("¿Dónde estuvo entre el 11 y el 15 de junio?", ["2023-06-13"], ["2023-06-20", "2023-06-05"]),
    ("¿Qué hizo del 11 al 15 de junio?", ["2023-06-13"], ["2023-06-20"]),
    ("Qu'a-t-il fait du 11 au 15 juin ?", ["2023-06-13"], ["2023-06-20"]),
    ("Wo war er vom 11. bis 15. Juni?", ["2023-06-13"], ["2023-06-20"]),
    ("Waar was hij van 11 tot 15 juni?", ["2023-06-13"], ["2023-06-20"]),
    ("他6月11日到15日在哪里？", ["2023-06-13"], ["2023-06-20"]),
    ("6월 11일부터 15일까지 어디 있었어?", ["2023-06-13"], ["2023-06-20"]),
    # the days of a month alone: the latest such stretch that has begun (NOW is the 20th of July)
    ("What did I do from the 3rd to the 10th?", ["2023-07-03", "2023-07-07", "2023-07-10"], ["2023-06-07", "2023-07-15"]),
    ("between the 22nd and the 25th", ["2023-06-23"], ["2023-07-23", "2023-06-10"]),
    ("3日から10日まで何してた？", ["2023-07-03", "2023-07-07", "2023-07-10"], ["2023-06-07", "2023-07-15"]),
    ("22日〜25日はどこにいた？", ["2023-06-23"], ["2023-07-23"]),
    # a stretch that reaches past today (the 20th): both ends in the year its first day was last in, not 25 July 2022
    ("July 18 to 25", ["2023-07-19", "2023-07-24"], ["2022-07-21"]),
]


# A year counted back from now said with a month, a season or a holiday, seasons counted back, two-digit years,
# Japanese compact seasons and era abbreviations (2026-12-03 evening: "2年前の6月" opened this June, "the summer
# before last" and "two years ago in June" this year's, "June '22" June 2023, 昨夏 and R5.6.3 nothing).
YEARS_BACK = [
    ("2年前の6月に何があった？", ["2021-06-15"], ["2022-06-15", "2023-06-15"]),
    ("二年前の春はどこに住んでた？", ["2021-04-15"], ["2022-04-15", "2023-04-15"]),
    ("3年前の夏", ["2020-07-15"], ["2021-07-15", "2022-07-15"]),
    ("2年前のクリスマスに何をもらった？", ["2021-12-25"], ["2022-12-25"]),
    ("What did I do two years ago in June?", ["2021-06-15"], ["2022-06-15", "2023-06-15"]),
    ("in June two years ago", ["2021-06-15"], ["2022-06-15", "2023-06-15"]),
    ("the summer three years ago", ["2020-07-15"], ["2021-07-15", "2023-07-15"]),
    ("where did we go the summer before last?", ["2021-07-15"], ["2022-07-15", "2023-07-15"]),
    ("the winter before last", ["2022-01-15"], ["2023-01-15", "2021-01-15"]),
    ("the June before last", ["2022-06-15"], ["2023-06-15", "2021-06-15"]),
    ("two summers ago", ["2021-07-15"], ["2022-07-15", "2023-07-15"]),
    ("What did I do three winters ago?", ["2021-01-15"], ["2022-01-15", "2023-01-15"]),
    ("in summer '22", ["2022-07-15"], ["2023-07-15"]),
    ("June '22", ["2022-06-15"], ["2023-06-15"]),
    ("the spring of '21", ["2021-04-15"], ["2022-04-15", "2023-04-15"]),
    ("winter of '95", ["1996-01-15"], ["2023-01-15"]),
    ("昨夏はどこに行った？", ["2022-07-15"], ["2023-07-15"]),
    ("今春から始めたこと", ["2023-04-15"], ["2022-04-15"]),
    ("昨秋の旅行", ["2022-10-15"], ["2021-10-15"]),
    ("昨冬", ["2023-01-15"], ["2022-01-15"]),
    ("R5.6.3に何があった？", ["2023-06-03"], ["2023-06-10", "2022-06-03"]),
    ("H30.6.3の話", ["2018-06-03"], ["2018-06-10"]),
    ("令和5.6.3", ["2023-06-03"], ["2023-06-10"]),
    ("R4年の夏", ["2022-07-15"], ["2023-07-15"]),
    ("What did we do around New Year?", ["2023-01-01"], ["2023-01-10", "2022-12-20"]),
    ("over New Year", ["2023-01-01"], ["2023-01-10"]),
    ("some weeks ago", ["2023-06-29"], ["2023-07-19", "2023-05-01"]),
]


@pytest.mark.parametrize(("query", "inside", "outside"),
                         WEEKDAYS + MONTH_PARTS + SEASONS + RELATIVE + WEEKS_OF_A_DAY + NUMERIC_AND_ERAS
                         + FROM_A_NAMED_DAY + HOLIDAYS + SINCE + QUARTERS_AND_SHORT_YEARS + SPELLED_OTHERWISE
                         + DAY_RANGES + YEARS_BACK)
def test_a_cue_opens_a_window_around_the_days_it_names(query, inside, outside):
    _check(query, inside, outside)


@pytest.mark.parametrize(("query", "now", "inside", "outside"), [
    # "last Friday" is the most recent Friday before today: yesterday on a Saturday, a week ago on a Friday.
    ("last Friday", "2023-07-22", ["2023-07-21"], ["2023-07-14"]),
    ("last Friday", "2023-07-21", ["2023-07-14"], ["2023-07-21"]),
    # 先週の金曜日 is the Friday of last Monday-to-Sunday week, even on the Saturday after it.
    ("先週の金曜日", "2023-07-22", ["2023-07-14"], ["2023-07-21"]),
    # On a Sunday "over the weekend" is this one; "last weekend" and 先週末 are the one before.
    ("over the weekend", "2023-07-23", ["2023-07-22", "2023-07-23"], ["2023-07-15"]),
    ("last weekend", "2023-07-23", ["2023-07-15"], ["2023-07-22"]),
    ("先週末", "2023-07-23", ["2023-07-15"], ["2023-07-22"]),
    # In autumn, last summer is this year's.
    ("last summer", "2023-10-01", ["2023-07-15"], ["2022-07-15"]),
    # Across the turn of the year.
    ("in December", "2024-01-05", ["2023-12-15"], ["2024-01-03"]),
    ("去年の12月", "2024-01-05", ["2023-12-15"], ["2022-12-15"]),
    ("last month", "2023-07-02", ["2023-06-10", "2023-06-28"], []),  # on the 2nd, "last month" is all of June
    ("last week", "2023-07-17", ["2023-07-14", "2023-07-16"], []),  # on a Monday, the days just before
])
def test_cues_count_from_the_conversations_clock(query, now, inside, outside):
    _check(query, inside, outside, now=_ts(now, 15))


@pytest.mark.parametrize("query", [
    "May I ask you something?", "March on", "wait a second", "call me in 5 minutes", "She called an hour ago",
    "3日間の旅行はどうだった？",  # a number before 日 and 間 is a length, not a date
    "24/7 support", "add 1/2 cup of sugar", "5/7", "7/5",  # 5/7 is May 7 or 5 July: no guess
    "version 3.11.2", "a team of 2000 people", "the fall of Rome", "did I fall?", "spring cleaning tips",
    "青春の思い出", "秋葉原で買った物", "冬眠する動物", "明日香さんの話",
    "every Friday", "I go on Fridays", "毎週金曜はジム", "what do you do on weekends?", "every summer", "毎年夏に",
    # tied to an event, not to a day the question names
    "the week before the launch", "the Friday before the launch", "three days after the launch",
    "the last day of the trip", "何日に行った？",
    # a fraction in Japanese, not a day; "back" that is not counted time
    "1/2の確率で当たる？", "砂糖は1/4カップ？", "2/3くらい終わった？", "I came back two days later", "step back",
    # a number of days, not a day of the month; "the 15th" of something else
    "3日に1回走ってる？", "3日に何回走る？", "1日に何時間勉強してる？", "1日にどれくらい歩く？", "2日にどのくらい進む？",
    "3日で終わった？", "3日間の旅行", "5日目の夜", "the 15th century", "his 30th birthday",
    "What's on the 2nd floor?", "I got it on the 3rd try",
    "this sun is hot", "sun-dried tomatoes", "I sat on the sofa", "they will wed soon", "the mon-fri shift",
    "a quarter of the cake", "quarter past three", "the French Quarter", "it's 4 o'clock",
    "a couple days", "I'm in my 30s", "she turned 40s style",  # ages, not decades
    "I'm past my prime", "walked past weeks of mail",
    "some days are hard", "Happy New Year!", "what are your goals for the new year?", "summers here are hot",
    "the '22 model", "H2O", "r2 is the second release",
])
def test_words_that_only_look_like_time_open_no_window(query):
    assert time_window(query, NOW) is None


@pytest.mark.parametrize("query", [
    "what did I plan for next week?", "来週の予定は？", "What's happening next month?", "来月の旅行",
    "what are we doing tomorrow?", "next Friday", "this weekend", "next summer", "next Christmas",
])
def test_a_future_cue_looks_at_the_recent_turns_where_the_plan_was_said(query):
    cues = time_cues(query, NOW)
    assert cues.kind == "plan" and cues.window is not None
    start, end = cues.window
    assert start <= _ts("2023-07-18") <= end  # said in the last days
    assert start > _ts("2022-07-01") and end < _ts("2023-07-23")  # not the future, not a year back


def test_a_past_cue_wins_over_a_future_one_and_several_cues_span_one_window():
    assert time_window("What did I say last week about next month?", NOW) == time_window("What did I say last week?", NOW)
    both = time_cues("How many days between June 3 and June 10?", NOW)
    assert len(both.spans) == 2 and both.asks_duration and not both.asks_order
    assert both.window[0] <= _ts("2023-06-03") and _ts("2023-06-10") <= both.window[1]
    assert both.window == (both.spans[0][0], both.spans[1][1])


@pytest.mark.parametrize("query", ["How many days from June 11 to 15?", "6月11日から15日まで何日？"])
def test_each_end_of_a_stretch_of_days_is_a_span_of_its_own(query):
    """As "between June 3 and June 10": a duration question can look for each end."""
    cues = time_cues(query, NOW)
    assert cues.asks_duration and len(cues.spans) == 2
    assert cues.spans[0][0] <= _ts("2023-06-11") <= cues.spans[0][1] < _ts("2023-06-14")
    assert _ts("2023-06-12") < cues.spans[1][0] <= _ts("2023-06-15") <= cues.spans[1][1]


@pytest.mark.parametrize(("query", "day"), [
    ("On June 11 and 15 people came", "2023-06-11"),  # a count after a day, not its end
    ("June 11 at 3 pm", "2023-06-11"),
    ("June 20 to 3 pm", "2023-06-20"),
    ("6月11日から15日間", "2023-06-11"),  # fifteen days from June 11: the count's reading is another cue's work
    ("from the 3rd to the 10th floor on June 11", "2023-06-11"),  # floors, not days
    ("June 15 to 11", "2023-06-15"),  # an end before its start is no stretch
])
def test_a_number_after_a_day_that_ends_no_stretch_leaves_the_day_alone(query, day):
    cues = time_cues(query, NOW)
    assert len(cues.spans) == 1, (query, cues)
    assert cues.window[0] <= _ts(day) <= cues.window[1]
    assert cues.window[1] - cues.window[0] <= 3 * 86_400


@pytest.mark.parametrize(("query", "duration", "order"), [
    ("How many days between the launch and the demo?", True, False),
    ("How long ago did I move?", True, False),
    ("引っ越しから何日？", True, False),
    ("何年前に引っ越した？", True, False),
    ("転職までどのくらいかかった？", True, False),
    ("Which came first, the move or the new job?", False, True),
    ("Did I move before or after the wedding?", False, True),
    ("Was the launch before the demo?", False, True),
    ("引っ越しと転職、どっちが先？", False, True),
    ("ジムと仕事、どちらが早かった？", False, True),
])
def test_durations_and_orders_are_flagged_without_an_invented_window(query, duration, order):
    cues = time_cues(query, NOW)
    assert (cues.asks_duration, cues.asks_order) == (duration, order)
    assert cues.window is None and cues.spans == () and cues.kind is None


@pytest.mark.parametrize(("query", "duration"), [
    ("When did we move the deadline to August 19?", False),
    ("When did we push the launch back to June?", False),
    ("We settled on June 3 for the launch: when was that?", False),
    ("How many days passed between when we fixed the launch deadline at June 3 and when we moved to Python 3.12?", True),
    ("ステージングDBのポート番号を15432にした日から、論文提出の締め切りを8月19日にした日まで何日あった？", True),
    ("締め切りを8月19日に変更したのはいつ？", False),
    ("会議を来週に延期したのはいつ？", False),
])
def test_a_time_named_as_the_value_of_a_decision_opens_no_window(query, duration):
    """The decision was made on another day: a window around the value would point away from its turn."""
    cues = time_cues(query, NOW)
    assert cues.window is None and cues.asks_duration == duration


@pytest.mark.parametrize(("query", "day"), [
    ("What did I change on June 3?", "2023-06-03"), ("What did we decide on June 3?", "2023-06-03"),
    ("8月19日に何をした？", "2022-08-19"), ("先月末に決めたこと", "2023-06-28"),
])
def test_a_time_when_something_was_done_still_opens_its_window(query, day):
    _check(query, [day], [])


@pytest.mark.parametrize("query", [
    "which restaurant did I visit last week?", "How many times did I go to the gym?", "何日に行った？",
    "3日間の旅行はどこ？", "What did I do first thing in the morning?",
])
def test_questions_that_ask_neither_a_duration_nor_an_order(query):
    cues = time_cues(query, NOW)
    assert not cues.asks_duration and not cues.asks_order


def test_time_window_is_the_window_of_time_cues():
    every = WEEKDAYS + MONTH_PARTS + SEASONS + RELATIVE + WEEKS_OF_A_DAY + NUMERIC_AND_ERAS + FROM_A_NAMED_DAY
    for query, *_ in every:
        assert time_cues(query, NOW).window == time_window(query, NOW), query


def _cued_patterns() -> list[Cued]:
    found: list[Cued] = []
    for module in (temporal_dates, temporal_holidays, temporal_periods, temporal_questions, temporal_ranges,
                   temporal_relative):
        for value in vars(module).values():
            items = value if isinstance(value, list) else [value]
            for item in items:
                for part in item if isinstance(item, tuple) else (item,):
                    if isinstance(part, Cued) and all(part is not seen for seen in found):
                        found.append(part)
    return found


def test_long_questions_are_scanned_near_their_words_with_the_same_matches():
    """A query longer than a few lines is scanned only around the words each pattern needs: the matches
    must be those of a scan of the whole text, for every pattern."""
    cases = [query for query, *_ in WEEKDAYS + MONTH_PARTS + SEASONS + RELATIVE + WEEKS_OF_A_DAY + NUMERIC_AND_ERAS
             + FROM_A_NAMED_DAY + HOLIDAYS + SINCE + DAY_RANGES]
    filler = " and then the staging database on port 5432 may need a fall-back config/2023.yaml - see notes. "
    text = normalise(filler.join(cases) + " 設定を変えた。" + "。".join(c for c in cases if not c.isascii()))
    assert len(text) > 2_000
    patterns = _cued_patterns()
    assert len(patterns) > 30
    for cued in patterns:
        near = [(m.start(), m.end(), m.groupdict()) for m in cued.finditer(text)]
        whole = [(m.start(), m.end(), m.groupdict()) for m in cued.pattern.finditer(text)]
        assert near == whole, cued.pattern.pattern[:60]
    # And a cue at the end of a long question is read as in a short one.
    long_question = filler * 30 + "what did I do on 3 June 2023?"
    assert time_window(long_question, NOW) == time_window("on 3 June 2023", NOW)


_FRAGMENTS = [query for query, *_ in WEEKDAYS + MONTH_PARTS + SEASONS + RELATIVE + WEEKS_OF_A_DAY + NUMERIC_AND_ERAS
              + FROM_A_NAMED_DAY + HOLIDAYS + SINCE + DAY_RANGES] + [
    "0000年5月7日", "9999年12月31日", "6月の第0週", "6月の第9週", "99999999日前", "9999999 days after June 3", "令和99年",
    "2月30日", "31 June", "13/13", "the 31st of February", "next", "last", "the week of", "since", "から", "の3日後",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=6)), max_size=6),
       st.floats(min_value=0, max_value=4.1e9, allow_nan=False))
def test_any_question_on_any_clock_gets_a_window_or_none_and_never_an_error(parts, now):
    """time_window runs inside every recall: no text may make it raise."""
    cues = time_cues(" ".join(parts), now)
    if cues.window is not None:
        assert cues.window[0] <= cues.window[1] and cues.spans
        assert all(cues.window[0] <= start <= end <= cues.window[1] for start, end in cues.spans)


def test_plans_for_a_time_that_has_come_look_where_they_were_made():
    """"What are my plans for the summer?" asked in autumn: the plans were said in spring, before the summer."""
    from datetime import datetime, timezone

    from lumina_memory.nodes.retrieval.temporal import time_window

    now = datetime(2023, 10, 20, 12, tzinfo=timezone.utc).timestamp()

    def days(query):
        return tuple(datetime.fromtimestamp(t, tz=timezone.utc).date().isoformat() for t in time_window(query, now))

    assert days("What did I do in the summer?") == ("2023-06-01", "2023-09-01")
    for query in ("What are my plans for the summer?", "What were Ines's plans for the summer?", "夏休みの予定は？"):
        assert days(query) == ("2023-02-01", "2023-09-01"), query  # 120 days before it, as for "next summer"
    assert days("What were my plans for June 2023?") == ("2023-04-17", "2023-07-01")
    # Plans made *in* a time are looked for in it.
    assert days("What plans did I make in the summer?") == ("2023-06-01", "2023-09-01")
