"""Temporal cues in a query ("on 3 June, 2023", "5月7日", "last week", "先月", "in May 2023", "3日前") → a time window on the
conversation's own clock. Memories inside the window get a relevance boost; every packed item is
prefixed with its date so "when did …" questions can be answered from the context."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from functools import lru_cache

DAY = 86_400.0
_MONTHS = {
    name: i
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        1,
    )
    for name in names
}
_UNIT_DAYS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365,
              "日": 1, "週間": 7, "週": 7, "ヶ月": 30, "か月": 30, "カ月": 30, "ヵ月": 30, "月": 30, "年": 365}
_RELATIVE: list[tuple[re.Pattern, float, float]] = [
    # (pattern, window start in days before now, window end in days before now)
    # Before "yesterday": 一昨日 contains 昨日.
    (re.compile(r"\bday before yesterday\b|一昨日|おととい|おとつい"), 3, 1.5),
    (re.compile(r"\byesterday\b|昨日|きのう"), 2, 0.5),
    (re.compile(r"\btoday\b|\btonight\b|今日|きょう|今夜"), 1, -1),
    (re.compile(r"\blast night\b|昨夜|昨晩"), 1.5, 0.3),
    (re.compile(r"\bthis week\b|今週"), 7, -1),
    (re.compile(r"\blast week\b|\bprevious week\b|先週"), 14, 5),
    (re.compile(r"\bthis month\b|今月"), 31, -1),
    (re.compile(r"\blast month\b|\bprevious month\b|先月"), 62, 25),
    (re.compile(r"\bthis year\b|今年"), 366, -1),
    (re.compile(r"\blast year\b|去年|昨年"), 731, 330),
    (re.compile(r"\brecently\b|\blately\b|最近|この前|こないだ"), 30, -1),
]
# Counts in words as well as digits: "two weeks ago", "a month ago", "a few days ago", "三日前", "数日前".
_COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "few": 3, "several": 4,
    "数": 3,  # not 何: "何年前" asks how long ago
}
_KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_COUNT = "|".join(sorted((w for w in _COUNT_WORDS if w.isascii()), key=len, reverse=True))
_JP_COUNT = "[一二三四五六七八九十百]+|数"
_AGO = re.compile(
    rf"\b(\d+|{_EN_COUNT})\s*(days?|weeks?|months?|years?)\s+ago\b"
    rf"|(\d+|{_JP_COUNT})\s*(日|週間|週|ヶ月|か月|カ月|ヵ月|年)前"
)
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_YEAR = re.compile(r"\b(" + _MONTH_NAMES + r")\b\.?,?\s*(\d{4})?")
_JP_MONTH_YEAR = re.compile(r"(?:(\d{4})年)?\s*(\d{1,2})月(?!\d)")
# Day-level dates: "3 June, 2023", "June 3rd, 2023", "May 7", "2023年5月7日", "5月7日", "2023-05-07", "2023/5/7".
_DAY_DATES = re.compile(
    rf"\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH_NAMES})\b\.?,?(?:\s*(?P<y1>\d{{4}})\b)?"
    rf"|\b(?P<m2>{_MONTH_NAMES})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*:)(?:,?\s*(?P<y2>\d{{4}})\b)?"
    r"|(?:(?P<y3>\d{4})年)?\s*(?P<m3>\d{1,2})月\s*(?P<d3>\d{1,2})日"
    r"|\b(?P<y4>\d{4})[-/](?P<m4>\d{1,2})[-/](?P<d4>\d{1,2})\b"
)
_YEAR = re.compile(r"\b(?:in|during|of)\s+(19\d{2}|20\d{2})\b|(19\d{2}|20\d{2})年(?!\s*\d{1,2}月)")


def _kanji_number(text: str) -> int:
    """A kanji numeral below 1,000: 三 3, 十五 15, 二十 20, 二十三 23, 百二 102."""
    total, digit = 0, 0
    for ch in text:
        if ch in _KANJI_DIGITS:
            digit = _KANJI_DIGITS[ch]
        else:  # 十 or 百 multiplies the digit before it (一 when there is none)
            total += (digit or 1) * (10 if ch == "十" else 100)
            digit = 0
    return total + digit


def _month_window(year: int, month: int) -> tuple[float, float]:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc)
    return start.timestamp(), end.timestamp()


def _past_year(month: int, day: int, now: datetime) -> int:
    """The year of the most recent ``month``/``day`` not after ``now``: a date said without its year is
    one that has been (memories are of the past), not next year's."""
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def _day_dates(text: str, now: datetime) -> list[datetime]:
    found: list[tuple[int | None, int, int]] = []
    for m in _DAY_DATES.finditer(text):
        g = m.groupdict()
        if g["m1"] or g["m2"]:
            month = _MONTHS[g["m1"] or g["m2"]]
            day, year = int(g["d1"] or g["d2"]), g["y1"] or g["y2"]
            if (g["m1"] or g["m2"]) == "may" and g["m2"] and not year:
                continue  # "may 7 people come?": the verb, unless a year makes it a date
        else:
            month, day, year = int(g["m3"] or g["m4"]), int(g["d3"] or g["d4"]), g["y3"] or g["y4"]
        found.append((int(year) if year else None, month, day))
    # "between August 11 and August 15, 2023": a year said once covers the dates around it.
    known = [y for y, _m, _d in found if y is not None]
    dates = []
    for year, month, day in found:
        try:
            dates.append(datetime(year or (known[-1] if known else _past_year(month, day, now)), month, day, tzinfo=timezone.utc))
        except ValueError:  # 31 June: not a date
            continue
    return dates


def time_window(query: str, now_ts: float) -> tuple[float, float] | None:
    """The span of time the query points at, or None. A date the query names (a day, or a range between
    two days) comes first; relative cues ("last week", "3日前") count back from ``now_ts``; a month or a
    year without the other is the most recent one."""
    text = unicodedata.normalize("NFKC", query).lower()
    now = datetime.fromtimestamp(now_ts, tz=timezone.utc)
    days = _day_dates(text, now)
    if days:
        # A day and its neighbours: what was said that day is often about the day before, and a
        # conversation's clock and the question's calendar can sit a time zone apart.
        return (min(days) - timedelta(days=1)).timestamp(), (max(days) + timedelta(days=2)).timestamp()
    for pattern, start_days, end_days in _RELATIVE:
        if pattern.search(text):
            return now_ts - start_days * DAY, now_ts - end_days * DAY
    ago = _AGO.search(text)
    if ago:
        count = ago.group(1) or ago.group(3)
        n = int(count) if count.isdigit() else _COUNT_WORDS.get(count) or _kanji_number(count)
        unit = _UNIT_DAYS[ago.group(2) or ago.group(4)]
        centre = now_ts - n * unit * DAY
        slack = max(1.0, 0.35 * n * unit) * DAY
        return centre - slack, centre + slack
    m = _MONTH_YEAR.search(text)
    if m and (m.group(2) or m.group(1) not in ("may", "mar")):  # "may" alone is usually the verb
        month = _MONTHS[m.group(1)]
        return _month_window(int(m.group(2) or _past_year(month, 1, now)), month)
    jm = _JP_MONTH_YEAR.search(text)
    if jm and 1 <= int(jm.group(2)) <= 12:
        month = int(jm.group(2))
        return _month_window(int(jm.group(1) or _past_year(month, 1, now)), month)
    y = _YEAR.search(text)
    if y:
        year = int(y.group(1) or y.group(2))
        return datetime(year, 1, 1, tzinfo=timezone.utc).timestamp(), datetime(year + 1, 1, 1, tzinfo=timezone.utc).timestamp()
    return None


def date_label(ts: float) -> str:
    # By UTC day number: the packer labels dozens of candidate turns per query, a handful of days.
    return _day_label(math.floor(ts / 86_400))


@lru_cache(maxsize=65_536)
def _day_label(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, tz=timezone.utc).strftime("%Y-%m-%d")
