"""Holidays as named days ("at Christmas", "last Halloween", 「去年のお盆」「ゴールデンウィーク」): the days
they fall on, in the year the query says or the most recent one that has begun. Fixed-date holidays of
English- and Japanese-speaking calendars, the ones that fall on a weekday of a week of their month (Thanksgiving,
Mother's Day, Father's Day), Easter (dateutil's computus: Good Friday to Easter Monday), and the stretches of
the Japanese year people name like holidays (梅雨, 年度末, 新年度)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Callable

from dateutil.easter import easter

from .temporal_calendar import Days
from .temporal_patterns import Claims, Cued
from .temporal_text import year_offset


def _fixed(month: int, day: int, end_month: int | None = None, end_day: int | None = None) -> Callable[[int], Days]:
    return lambda year: (date(year, month, day), date(year, end_month or month, end_day or day))


def _nth_weekday(month: int, weekday: int, nth: int) -> Callable[[int], Days]:
    """The ``nth`` ``weekday`` (Monday 0) of ``month``: Thanksgiving is the fourth Thursday of November."""
    def days(year: int) -> Days:
        first = date(year, month, 1)
        day = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
        return day, day
    return days


def _easter(year: int) -> Days:
    sunday = easter(year)  # Western
    return sunday - timedelta(days=2), sunday + timedelta(days=1)


def _year_turn(year: int) -> Days:
    return date(year - 1, 12, 28), date(year, 1, 3)  # 年末年始 "of" a year ends in it


# Longer names first: "christmas eve" is read before "christmas" can claim part of it.
_HOLIDAYS: list[tuple[str, Callable[[int], Days]]] = [
    (r"\bchristmas\s+eve\b|クリスマス・?イ[ブヴ]", _fixed(12, 24)),
    (r"\bchristmas(?:\s+day)?\b|\bx-?mas\b|クリスマス", _fixed(12, 24, 12, 25)),
    (r"\bnew\s+year'?s\s+eve\b|大晦日|大みそか|おおみそか", _fixed(12, 31)),
    # "New Year" without its 's only after a word placing it in time: "the new year" alone is often the coming one.
    (r"\bnew\s+year'?s(?:\s+day)?(?![a-z])|\b(?:at|over|around|during|since|after|before)\s+(?:the\s+)?new\s+year\b|元日|元旦",
     _fixed(1, 1)),
    (r"年末年始", _year_turn),
    (r"お?正月", _fixed(1, 1, 1, 3)),
    (r"\bvalentine'?s(?:\s+day)?(?![a-z])|バレンタイン(?:デー)?", _fixed(2, 14)),
    (r"\bwhite\s+day\b|ホワイトデー", _fixed(3, 14)),
    (r"\bhalloween\b|ハロウィー?ン", _fixed(10, 31)),
    (r"\bindependence\s+day\b", _fixed(7, 4)),
    (r"\bthanksgiving\b", _nth_weekday(11, 3, 4)),
    (r"\beaster\b|イースター|復活祭", _easter),
    (r"\bmother'?s'?\s+day\b|母の日", _nth_weekday(5, 6, 2)),  # the US's and Japan's: the second Sunday of May
    (r"\bfather'?s'?\s+day\b|父の日", _nth_weekday(6, 6, 3)),
    (r"\bgolden\s+week\b|ゴールデンウィーク|\bgw(?=\s*[\u3040-\u30ff\u4e00-\u9fff])", _fixed(4, 29, 5, 5)),  # "gw" alone is a gateway
    (r"お盆", _fixed(8, 13, 8, 16)),
    (r"梅雨", _fixed(6, 1, 7, 20)),  # the rainy season of most of Japan
    (r"年度末", _fixed(3, 15, 3, 31)),  # the Japanese fiscal and school year ends in March
    (r"新年度|年度初め|年度始め|年度の初め|年度の始め", _fixed(4, 1, 4, 15)),
    (r"七夕", _fixed(7, 7)),
]
_HOLIDAY = Cued(
    r"(?:(?P<y1>(?:19|20)\d{2})\s*年?\s*の?\s*"
    r"|(?<![a-z])(?P<rel>last|this\s+past|this\s+coming|this|next|一昨年|去年|昨年|今年|来年|\d{1,2}\s*年前)\s*の?\s*)?"
    + "(?:" + "|".join(f"(?P<h{i}>{pattern})" for i, (pattern, _) in enumerate(_HOLIDAYS)) + ")"
    + r"(?:\s*,?\s*(?P<y2>(?:19|20)\d{2})(?!\d))?",
    ("christmas", "mas", "new year", "valentine", "white day", "halloween", "independence", "thanksgiving", "golden week",
     "gw", "easter", "mother", "father", "イースター", "復活祭", "母の日", "父の日", "ゴールデン", "クリスマス", "晦日", "みそか", "元日", "元旦", "年末年始", "正月", "バレンタイン", "ホワイトデー", "ハロウィ", "お盆", "七夕", "梅雨", "年度"),
)
_PAST_REL = {"last", "this past"}
_PLAN_REL = {"next", "this coming", "来年"}


def find_holidays(text: str, today: date, claims: Claims) -> list[tuple[int, int, Days | None]]:
    """(start, end, days) of each holiday the text names; days is None for a holiday still to come
    ("next Christmas", 「今年のクリスマス」 in July): a plan, not a day to look in."""
    found: list[tuple[int, int, Days | None]] = []
    for m in _HOLIDAY.finditer(text):
        if not claims.take(m.start(), m.end()):
            continue
        index = next(i for i in range(len(_HOLIDAYS)) if m.group(f"h{i}"))
        days_of = _HOLIDAYS[index][1]
        year, rel = m.group("y1") or m.group("y2"), m.group("rel")
        if year:
            days: Days | None = days_of(int(year))
        elif rel in _PLAN_REL:
            days = None
        elif rel in _PAST_REL:
            days = next(d for d in (days_of(today.year + 1), days_of(today.year), days_of(today.year - 1)) if d[1] < today)
        elif rel:  # this, 今年, 去年, 昨年, 一昨年
            days = days_of(today.year + year_offset("this year" if rel == "this" else rel))
        else:
            days = next(d for d in (days_of(today.year + 1), days_of(today.year), days_of(today.year - 1)) if d[0] <= today)
        found.append((m.start(), m.end(), days if days is None or days[0] <= today else None))
    return found
