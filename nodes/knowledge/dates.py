"""Date expressions in a sentence (12月5日, 来週の土曜, on Dec 5, next Friday) resolved against when it was said.

A day without a year is the next one for a plan and the last one for a past event (a plan's day up to a month
gone is left unresolved: more likely a slip than next year). "next Friday" / 来週の金曜
is the Friday of the next calendar week (weeks start on Monday); a bare weekday is the nearest one ahead (plans)
or behind (events). Expressions without a day (来月, next month) are kept as said, with no date.

Month and weekday names come from the one calendar vocabulary (``nodes.text.calendar.names``), calendar arithmetic
from recall's (``temporal_calendar``). Hand rules rather than dateparser: the extractor reads every sentence, and
dateparser costs milliseconds a call where these cost microseconds (``python -m bench.calendar_speed``); its
``parse`` reads a text that is only a date, not a sentence around one; it reads "next Friday" as the nearest
Friday, not the next week's, and reads neither 来週の金曜日 nor 先週の土曜.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from lumina_memory.nodes.retrieval.temporal_calendar import safe_date, week_days
from lumina_memory.nodes.text.calendar.names import EN_WEEKDAYS, JA_WEEKDAYS, MONTHS

_MONTH_RX = rf"({'|'.join(sorted(MONTHS, key=len, reverse=True))})\.?"
_WEEKDAY_RX = "|".join(EN_WEEKDAYS)
_ORD = r"(?:st|nd|rd|th)?"
_AMBIGUOUS_DAYS = 31


@dataclass(frozen=True)
class DateMention:
    text: str
    """The expression as it appears in the sentence."""
    day: date | None
    start: int
    end: int


_JA_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})日"), "ymd"),
    (re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])"), "md"),
    (re.compile(r"(再来週|来週|今週|先週)の?([月火水木金土日])曜(?:日)?"), "week_day"),
    (re.compile(r"(?<![今来先週])([月火水木金土日])曜(?:日)?"), "weekday"),
    (re.compile(r"明後日|あさって"), "+2"),
    (re.compile(r"明日|あした|あす"), "+1"),
    (re.compile(r"一昨日|おととい"), "-2"),
    (re.compile(r"昨日|きのう"), "-1"),
    (re.compile(r"今日|今夜|今晩|きょう"), "+0"),
    (re.compile(r"(?<![\d月])(\d{1,2})日(?![間前後目ぶ])"), "d"),
    (re.compile(r"(?:今週末|来週末|来月|再来月|今月末|来年|年末|年明け|今度の夏休み|今度の冬休み|ゴールデンウィーク|GW)"), "vague"),
]

_EN_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_MONTH_RX}\s+(\d{{1,2}}){_ORD}(?:,?\s+(\d{{4}}))?\b", re.I), "en_md"),
    (re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MONTH_RX}(?:,?\s+(\d{{4}}))?\b", re.I), "en_dm"),
    (re.compile(rf"\b(next|this|last)\s+({_WEEKDAY_RX})\b", re.I), "en_week_day"),
    (re.compile(rf"\b(?:on\s+)?({_WEEKDAY_RX})\b", re.I), "en_weekday"),
    (re.compile(r"\bthe\s+day\s+after\s+tomorrow\b", re.I), "+2"),
    (re.compile(r"\btomorrow\b", re.I), "+1"),
    (re.compile(r"\byesterday\b", re.I), "-1"),
    (re.compile(r"\b(?:today|tonight|this\s+evening)\b", re.I), "+0"),
    (re.compile(r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b", re.I), "d"),
    (re.compile(r"\b(?:this|next)\s+(?:weekend|week|month|year|summer|winter|spring|autumn|fall)\b", re.I), "vague"),
]


def local_day(ts: float, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(ts, zone).date()


def find_date(text: str, said_at: float, zone: ZoneInfo, *, future: bool, english: bool) -> DateMention | None:
    """The first date expression of ``text`` with its day (None when it names no day)."""
    today = local_day(said_at, zone)
    for rx, kind in _EN_RULES if english else _JA_RULES:
        m = rx.search(text)
        if m is None:
            continue
        day = _resolve(kind, m, today, future)
        if kind == "vague" or day is not None:
            return DateMention(m.group(0).strip(), day, m.start(), m.end())
    return None


def _resolve(kind: str, m: re.Match[str], today: date, future: bool) -> date | None:
    if kind[0] in "+-":
        return today + timedelta(days=int(kind))
    if kind == "vague":
        return None
    if kind == "ymd":
        year, month, day = m.group(1), int(m.group(2)), int(m.group(3))
        return _month_day(today, month, day, int(year) if year else None, future)
    if kind == "md":
        return _month_day(today, int(m.group(1)), int(m.group(2)), None, future)
    if kind in ("en_md", "en_dm"):
        month_word, day_text = (m.group(1), m.group(2)) if kind == "en_md" else (m.group(2), m.group(1))
        month = MONTHS[month_word.lower()]
        year = m.group(3)
        return _month_day(today, month, int(day_text), int(year) if year else None, future)
    if kind == "week_day":
        offset = {"再来週": 2, "来週": 1, "今週": 0, "先週": -1}[m.group(1)]
        return _week_day(today, offset, JA_WEEKDAYS.index(m.group(2)))
    if kind == "en_week_day":
        offset = {"next": 1, "this": 0, "last": -1}[m.group(1).lower()]
        return _week_day(today, offset, EN_WEEKDAYS.index(m.group(2).lower()))
    if kind == "weekday":
        return _nearest_weekday(today, JA_WEEKDAYS.index(m.group(1)), future)
    if kind == "en_weekday":
        return _nearest_weekday(today, EN_WEEKDAYS.index(m.group(1).lower()), future)
    if kind == "d":
        return _day_of_month(today, int(m.group(1)), future)
    raise ValueError(f"unknown date rule {kind}")


def _month_day(today: date, month: int, day: int, year: int | None, future: bool) -> date | None:
    if year is not None:
        return safe_date(year, month, day)
    this_year = safe_date(today.year, month, day)
    if this_year is None:
        return None
    if future and this_year < today:
        if (today - this_year).days <= _AMBIGUOUS_DAYS:
            return None  # 9月1日 said on 10 September: a slip or a past event, not next year
        return safe_date(today.year + 1, month, day)
    if not future and this_year > today:
        return safe_date(today.year - 1, month, day)
    return this_year


def _week_day(today: date, week_offset: int, weekday: int) -> date:
    return week_days(today)[0] + timedelta(weeks=week_offset, days=weekday)


def _nearest_weekday(today: date, weekday: int, future: bool) -> date:
    delta = (weekday - today.weekday()) % 7
    if future:
        return today + timedelta(days=delta or 7)
    return today - timedelta(days=(7 - delta) % 7 or 7)


def _day_of_month(today: date, day: int, future: bool) -> date | None:
    candidate = safe_date(today.year, today.month, day)
    if candidate is None:
        return None
    if future and candidate < today:
        month, year = (1, today.year + 1) if today.month == 12 else (today.month + 1, today.year)
        return safe_date(year, month, day)
    if not future and candidate > today:
        month, year = (12, today.year - 1) if today.month == 1 else (today.month - 1, today.year)
        return safe_date(year, month, day)
    return candidate
