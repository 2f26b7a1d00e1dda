"""Temporal cues in a query ("last week", "先月", "in May 2023", "3日前") → a time window on the
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
_MONTH_YEAR = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?,?\s*(\d{4})?")
_JP_MONTH_YEAR = re.compile(r"(?:(\d{4})年)?\s*(\d{1,2})月(?!\d)")
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


def time_window(query: str, now_ts: float) -> tuple[float, float] | None:
    """The span of time the query points at, or None. Relative cues count back from ``now_ts``."""
    text = unicodedata.normalize("NFKC", query).lower()
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
    now_year = datetime.fromtimestamp(now_ts, tz=timezone.utc).year
    m = _MONTH_YEAR.search(text)
    if m and (m.group(2) or m.group(1) not in ("may", "mar")):  # "may" alone is usually the verb
        return _month_window(int(m.group(2) or now_year), _MONTHS[m.group(1)])
    jm = _JP_MONTH_YEAR.search(text)
    if jm and 1 <= int(jm.group(2)) <= 12:
        return _month_window(int(jm.group(1) or now_year), int(jm.group(2)))
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
