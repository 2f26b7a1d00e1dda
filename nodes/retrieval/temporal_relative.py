"""Time cues counted back from now (the newest turn's time): weekdays ("last Friday", 「先週の金曜日」), weekends
("over the weekend", 「先週末」), parts of a week ("early last week"), "earlier this month", "the other day",
"the past two weeks", 「ここ数日」, "yesterday", "last month", 「先月」, "two weeks ago", 「3日前」, "a fortnight ago",
"a few weeks back", "a year and a half ago", "a week or two ago".

A future cue in a question about memory ("what did I plan for next week?", 「来週の予定は？」, "tomorrow")
asks about a plan, and a plan is said before the time it names: its window is the stretch just before
now in which such a plan is usually made (a ``plan`` cue): 3 days for tomorrow, 10 for next week, a
coming weekday or weekend, 45 for next month, 365 for next year."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Callable

from .temporal_calendar import (DAY, Cue, Days, add_months, day_start, days_window, latest_weekday, latest_weekend,
                                month_days, recent_window, week_days)
from .temporal_patterns import Claims, Cued, phrases
from .temporal_text import EN_COUNT, JA_WEEKDAYS, WEEKDAY_NAMES, WEEKDAYS, count_value, unit_days

_EN_WEEKDAY = Cued(
    r"\b(?:(?P<pre>every|each|last|this\s+past|past|this\s+coming|coming|this|next|on|the|that)\s+)?"
    rf"(?P<wd>{WEEKDAY_NAMES})(?P<pl>s)?\b"
    r"(?:\s+(?P<post>before\s+last|after\s+next|(?:of\s+)?(?:last|this|next)\s+week\b|before\b|after\b|prior\s+to\b|following\b))?"
    rf"|\b(?P<wk>last|this|next)\s+week'?s\s+(?P<wd2>{WEEKDAY_NAMES})\b", WEEKDAYS)
# "last Thurs", "on Wed": an abbreviation only after a word that makes it a day ("sat", "sun", "wed" and "mon" are
# also words; after "this" only the ones that are not: "this sun" is the sun).
_ABBREVIATED = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6}
_EN_WEEKDAY_SHORT = Cued(
    r"\b(?:(?P<pre>last|this\s+past|past|on|next|this\s+coming|coming)\s+(?P<wd>mon|tues?|weds?|thu(?:rs?)?|fri|sat|sun)"
    r"|(?P<this>this)\s+(?P<wd2>tues?|thu(?:rs?)?|fri))\.?(?![\w-])",
    ("mon", "tue", "wed", "thu", "fri", "sat", "sun"))
# "two Saturdays ago": the latest Saturday, and one more week back for each beyond the first.
_WEEKDAYS_AGO = Cued(rf"\b(?P<n>\d+|{EN_COUNT})\s+(?P<wd>{WEEKDAY_NAMES})s\s+(?:ago|back)\b", ("ago", "back"))
_JA_WEEKDAY = Cued(r"(?P<pre>毎週|先々週|先週|今週|再来週|来週|この前|この間|前|次|毎|この)?\s*の?\s*(?P<wd>[月火水木金土日])曜(?:日)?(?P<post>ごと)?",
                   ("曜",))
_EN_WEEKEND = Cued(
    r"\b(?:(?P<pre>every|each|last|this\s+past|past|this\s+coming|coming|this|next|over\s+the|on\s+the|at\s+the|"
    r"during\s+the|the|that)\s+)?weekend(?P<pl>s)?\b"
    r"(?:\s+(?P<post>before\s+last|after\s+next|before\b|after\b|prior\s+to\b|following\b))?", ("weekend",))
# 先週末 is 先 + 週末 (the 週 is shared), 先週の土日 is 先週 + の + 土日.
_JA_WEEKEND = Cued(r"(?P<short>先々|再来|先|今|来|毎)週末|(?P<pre>毎週|先々週|先週|今週|再来週|来週|この|前の|次の)?\s*の?\s*(?:週末|土日(?!祝))",
                   ("週末", "土日"))
_JA_SHORT_WEEK = {"先々": "先々週", "再来": "再来週", "先": "先週", "今": "今週", "来": "来週", "毎": "毎週"}
_WEEK_PART = Cued(
    r"\b(?:(?P<p>early|mid|late)[\s-]+|the\s+(?P<q>beginning|start|middle|end)\s+of\s+)(?P<w>last|this|next)\s+week\b"
    r"|(?P<jw>先週|今週|来週)\s*の?\s*(?P<jp>初め|始め|はじめ|頭|前半|半ば|なかば|後半|終わり|おわり)",
    ("last week", "this week", "next week", "先週", "今週", "来週"))
_WEEK_PARTS = {"early": (0, 2), "beginning": (0, 2), "start": (0, 2), "初め": (0, 2), "始め": (0, 2), "はじめ": (0, 2),
               "頭": (0, 2), "前半": (0, 3), "mid": (1, 4), "middle": (1, 4), "半ば": (1, 4), "なかば": (1, 4),
               "late": (3, 6), "end": (3, 6), "後半": (3, 6), "終わり": (3, 6), "おわり": (3, 6)}
_SO_FAR = Cued(r"\b(?:earlier|so\s+far)\s+this\s+(?P<u>week|month|year)\b|(?P<ju>今週|今月|今年)に入って",
               ("earlier this", "so far this", "に入って"))
_PAST_SPAN = Cued(
    rf"(?:\b(?:in|over|during|for|within|throughout)\s+the\s+|\bthe\s+(?=past\b))(?:past|last|previous)\s+(?:(?P<n>\d+|{EN_COUNT})\s+)?(?P<u>days|weeks?|fortnight|months?|years?)\b"
    rf"|\b(?:the\s+)?(?:past|last|previous)\s+(?P<n2>\d+|{EN_COUNT})\s+(?P<u2>days?|weeks?|months?|years?)\b"
    r"|(?:この|ここ|過去|直近)\s*(?P<jn>\d+|数)\s*(?P<ju>日|週間|ヶ月|か月|カ月|ヵ月|ケ月|箇月|年)(?:間)?"
    r"|\b(?:this\s+)?past\s+(?P<u3>week|fortnight|month|year)\b(?!-)",  # "(this) past week", not "past week-old bread"
    ("past ", "last ", "previous ", "この", "ここ", "過去", "直近"))
# "two weeks ago", "a few weeks back", "a year and a half ago", "one and a half years ago", 「1年半前」.
_AGO = Cued(
    rf"\b(?P<n>\d+|{EN_COUNT})(?P<half1>\s+and\s+a\s+half)?\s*(?P<u>days?|weeks?|fortnights?|months?|years?)"
    r"(?P<half2>\s+and\s+a\s+half)?\s+(?:ago|back)\b"
    r"|\bhalf\s+a\s+year\s+(?:ago|back)\b|半年前"
    r"|\b(?:a|one)\s+(?P<ou>day|week|month|year)\s+or\s+(?:two|2)\s+(?:ago|back)\b"  # "a week or two ago": 1.5 weeks
    r"|(?P<jn>\d+|数)\s*(?P<ju>日|週間|週|ヶ月|か月|カ月|ヵ月|ケ月|箇月|年)(?P<half>半)?\s*(?:くらい|ぐらい|ほど|程度|程)?\s*前(?!後)"
    r"|(?P<hito>ひと|ふた)月(?P<hhalf>半)?\s*(?:くらい|ぐらい|ほど|程度|程)?\s*前(?!後)", ("ago", "back", "前"))
# "two weekends ago": the latest weekend that is over, and one more week back for each beyond the first.
_WEEKENDS_AGO = Cued(rf"\b(?P<n>\d+|{EN_COUNT})\s+weekends?\s+(?:ago|back)\b", ("ago", "back"))
_HITO = {"ひと": 1, "ふた": 2}
# The same days a year back: "this time last year" is not all of last year.
_YEAR_BACK: list[tuple[Cued, float]] = [
    (phrases("a year ago today", "this day last year", "去年の今日", "昨年の今日", "一年前の今日", "1年前の今日"), 2),
    (phrases("this time last year", "same time last year", "around this time last year", "去年の今頃", "昨年の今頃",
             "去年のこの時期", "昨年のこの時期", "去年の今ごろ", "昨年の今ごろ"), 21),
]


def _calendar_week(back: int) -> Callable[[date], Days]:
    return lambda today: (week_days(today)[0] - timedelta(days=7 * back), week_days(today)[1] - timedelta(days=7 * back))


def _calendar_month(back: int) -> Callable[[date], Days]:
    return lambda today: month_days(*add_months(today.year, today.month, -back))


def _calendar_year(back: int) -> Callable[[date], Days]:
    return lambda today: (date(today.year - back, 1, 1), date(today.year - back, 12, 31))


# (phrases, window start, window end in days before now, the calendar period it may also mean). "Last
# week" is both about a week ago and the previous Monday-to-Sunday: on a Monday the two barely overlap,
# so the window holds both. Longer names first: 一昨日 contains 昨日.
_BACK: list[tuple[Cued, float, float, Callable[[date], Days] | None]] = [
    (phrases("day before yesterday", "一昨日", "おととい", "おとつい"), 3, 1.5, None),
    (phrases("week before last", "先々週"), 21, 12, _calendar_week(2)),
    (phrases("month before last", "先々月"), 92, 55, _calendar_month(2)),
    (phrases("year before last", "一昨年", "おととし"), 1096, 695, _calendar_year(2)),
    (phrases("yesterday", "昨日", "きのう"), 2, 0.5, None),
    (phrases("night before last", "一昨晩", "一昨夜"), 3, 1.5, None),
    (phrases("last night", "昨夜", "昨晩"), 1.5, 0.3, None),
    (phrases("today", "tonight", "this morning", "this afternoon", "this evening", "今日", "きょう", "今夜", "今朝"), 1, -1, None),
    (phrases("this week", "今週"), 7, -1, None),
    (phrases("last week", "previous week", "先週"), 14, 5, _calendar_week(1)),
    (phrases("this month", "今月"), 31, -1, None),
    (phrases("last month", "previous month", "先月"), 62, 25, _calendar_month(1)),
    (phrases("this year", "今年"), 366, -1, None),
    (phrases("last year", "去年", "昨年"), 731, 330, _calendar_year(1)),
    (phrases("the other day", "先日", "この間", "こないだ", "この前"), 14, -1, None),
    (phrases("recently", "lately", "最近"), 30, -1, None),
]
# Future cues: how many days back a plan for them is usually made.
_AHEAD: list[tuple[Cued, float]] = [
    (phrases("day after tomorrow", "明後日", "あさって"), 3),
    (Cued(r"(?<![a-z])tomorrow(?![a-z])|明日(?!香)|あした", ("tomorrow", "明日", "あした")), 3),
    (phrases("week after next", "next week", "later this week", "再来週", "来週"), 10),
    (phrases("month after next", "next month", "later this month", "再来月", "来月"), 45),
    (phrases("next year", "later this year", "再来年", "来年"), 365),
]
_PLAN_WEEK = 10
_EVENT_RELATIVE = ("before", "after", "prior to", "following")  # "the Friday before the launch": not a day we know


def _words(text: str | None) -> str:
    return " ".join((text or "").split())


def _weekday(pre: str, post: str, weekday: int, today: date) -> date | None:
    """The day a weekday cue names, or None for one still to come (a plan)."""
    week = {"先週": -1, "先々週": -2, "今週": 0, "来週": 1, "再来週": 2, "last week": -1, "of last week": -1,
            "this week": 0, "of this week": 0, "next week": 1, "of next week": 1}.get(post or pre)
    if pre in ("this", "この") and not post:
        week = 0
    if pre in ("next", "this coming", "coming", "次") or post == "after next":
        return None
    if week is not None:
        day = week_days(today)[0] + timedelta(days=7 * week + weekday)
        return day if day <= today else None
    day = latest_weekday(weekday, today)
    return day - timedelta(days=7) if post == "before last" else day


def _weekend(pre: str, post: str, today: date) -> tuple[date, date] | None:
    if pre in ("next", "this coming", "coming", "来週", "再来週", "次の") or post == "after next":
        return None
    if pre in ("this", "今週", "この"):  # "this weekend" on a weekday is the coming one
        return latest_weekend(today, ended=False) if today.weekday() >= 5 else None
    ended = pre in ("last", "this past", "past", "先週", "先々週", "前の") or post == "before last"
    first, last = latest_weekend(today, ended=ended)
    back = 7 if pre == "先々週" or post == "before last" else 0
    return first - timedelta(days=back), last - timedelta(days=back)


def _days_cue(kind: str, days: tuple[date, date] | date | None, start: int, end: int, now_ts: float) -> Cue:
    if days is None:
        return Cue("plan", recent_window(now_ts, _PLAN_WEEK), start, end)
    first, last = days if isinstance(days, tuple) else (days, days)
    return Cue(kind, days_window(first, last), start, end)


def _day_cues(text: str, today: date, now_ts: float, claims: Claims) -> list[Cue]:
    cues = []
    for m in _EN_WEEKDAY.finditer(text):
        pre, post = _words(m["pre"] or m["wk"]), _words(m["post"])
        if m["pl"] or pre in ("every", "each") or post in _EVENT_RELATIVE or not claims.take(m.start(), m.end()):
            continue
        if m["wk"]:
            pre, post = "", f"{m['wk']} week"
        cues.append(_days_cue("weekday", _weekday(pre, post, WEEKDAYS[m["wd"] or m["wd2"]], today), m.start(), m.end(), now_ts))
    for m in _WEEKDAYS_AGO.finditer(text):  # the plural alone ("on Saturdays") is a habit and claimed nothing
        if claims.take(m.start(), m.end()):
            day = latest_weekday(WEEKDAYS[m["wd"]], today) - timedelta(days=7 * (int(count_value(m["n"])) - 1))
            cues.append(_days_cue("weekday", day, m.start(), m.end(), now_ts))
    for m in _WEEKENDS_AGO.finditer(text):
        if claims.take(m.start(), m.end()):
            back = timedelta(days=7 * (int(count_value(m["n"])) - 1))
            saturday, sunday = latest_weekend(today, ended=True)
            cues.append(_days_cue("weekend", (saturday - back, sunday - back), m.start(), m.end(), now_ts))
    for m in _EN_WEEKDAY_SHORT.finditer(text):
        if claims.take(m.start(), m.end()):
            pre = "" if m["pre"] == "on" else _words(m["pre"] or m["this"])
            cues.append(_days_cue("weekday", _weekday(pre, "", _ABBREVIATED[m["wd"] or m["wd2"]], today), m.start(), m.end(), now_ts))
    for m in _JA_WEEKDAY.finditer(text):
        pre = m["pre"] or ""
        if pre in ("毎週", "毎") or m["post"] or not claims.take(m.start(), m.end()):
            continue
        cues.append(_days_cue("weekday", _weekday(pre, "", JA_WEEKDAYS[m["wd"]], today), m.start(), m.end(), now_ts))
    for pattern in (_EN_WEEKEND, _JA_WEEKEND):
        for m in pattern.finditer(text):
            pre, post = _words(m["pre"]), _words(m.groupdict().get("post"))
            if m.groupdict().get("short"):
                pre = _JA_SHORT_WEEK[m["short"]]
            if (m.groupdict().get("pl") or pre in ("every", "each", "毎週", "毎") or post in _EVENT_RELATIVE
                    or not claims.take(m.start(), m.end())):
                continue
            cues.append(_days_cue("weekend", _weekend(pre, post, today), m.start(), m.end(), now_ts))
    for m in _WEEK_PART.finditer(text):
        if not claims.take(m.start(), m.end()):
            continue
        week = {"last": -1, "this": 0, "next": 1, "先週": -1, "今週": 0, "来週": 1}[m["w"] or m["jw"]]
        first_off, last_off = _WEEK_PARTS[m["p"] or m["q"] or m["jp"]]
        monday = week_days(today)[0] + timedelta(days=7 * week)
        first = monday + timedelta(days=first_off)
        cues.append(_days_cue("week_part", None if first > today else (first, monday + timedelta(days=last_off)),
                              m.start(), m.end(), now_ts))
    return cues


def _span_cues(text: str, today: date, now_ts: float, claims: Claims) -> list[Cue]:
    cues = []
    for m in _SO_FAR.finditer(text):
        if claims.take(m.start(), m.end()):
            unit = m["u"] or {"今週": "week", "今月": "month", "今年": "year"}[m["ju"]]
            first = {"week": week_days(today)[0], "month": today.replace(day=1), "year": today.replace(month=1, day=1)}[unit]
            cues.append(Cue("relative", (day_start(first) - DAY, now_ts + DAY), m.start(), m.end()))
    for m in _PAST_SPAN.finditer(text):
        if claims.take(m.start(), m.end()):
            count, unit = m["n"] or m["n2"] or m["jn"], m["u"] or m["u2"] or m["ju"] or m["u3"]
            days = (count_value(count) if count else 1) * unit_days(unit)
            cues.append(Cue("relative", recent_window(now_ts, days + 1), m.start(), m.end()))
    for m in _AGO.finditer(text):
        if claims.take(m.start(), m.end()):
            if m["n"] or m["jn"]:
                half = m["half"] or m["half1"] or m["half2"]
                days = (count_value(m["n"] or m["jn"]) + (0.5 if half else 0)) * unit_days(m["u"] or m["ju"])
            elif m["hito"]:
                days = (_HITO[m["hito"]] + (0.5 if m["hhalf"] else 0)) * 30
            elif m["ou"]:
                days = 1.5 * unit_days(m["ou"])
            else:
                days = 182.0  # half a year
            slack = max(1.0, 0.35 * days) * DAY
            centre = now_ts - days * DAY
            cues.append(Cue("relative", (centre - slack, centre + slack), m.start(), m.end()))
    return cues


def _named_cues(text: str, today: date, now_ts: float, claims: Claims) -> list[Cue]:
    cues = []
    for pattern, days_back in _AHEAD:  # first: "later this week" is not "this week"
        for m in pattern.finditer(text):
            if claims.take(m.start(), m.end()):
                cues.append(Cue("plan", recent_window(now_ts, days_back), m.start(), m.end()))
    for pattern, start_days, end_days, calendar in _BACK:
        for m in pattern.finditer(text):
            if claims.take(m.start(), m.end()):
                start, end = now_ts - start_days * DAY, now_ts - end_days * DAY
                if calendar is not None:
                    first, last = days_window(*calendar(today))
                    start, end = min(start, first), max(end, last)
                cues.append(Cue("relative", (start, end), m.start(), m.end()))
    return cues


def _year_back_cues(text: str, now_ts: float, claims: Claims) -> list[Cue]:
    """First: "a year ago today" holds "a year ago" and "today", and 「去年の今頃」 holds 去年."""
    cues = []
    for pattern, slack in _YEAR_BACK:
        for m in pattern.finditer(text):
            if claims.take(m.start(), m.end()):
                centre = now_ts - 365 * DAY
                cues.append(Cue("relative", (centre - slack * DAY, centre + slack * DAY), m.start(), m.end()))
    return cues


def find_relative(text: str, today: date, now_ts: float) -> list[Cue]:
    claims = Claims()
    return [*_year_back_cues(text, now_ts, claims), *_day_cues(text, today, now_ts, claims),
            *_span_cues(text, today, now_ts, claims), *_named_cues(text, today, now_ts, claims)]

