"""Stretches of days with their month said once: "between August 11 and 15", "August 11-15, 2023", "from 3 to 5
June", "the 11th to the 15th of June", 「8月11日から15日まで」「8月11日〜15日」「8月11〜15日」, and through ``normalise``
"del 11 al 15 de agosto", "vom 11. bis 15. August", "du 11 au 15 août", 「8月11日到15日」, 「8월 11일부터 15일까지」; the days of a month alone
("from the 3rd to the 10th", 「3日から10日まで」) are the latest such stretch that has begun.

Each end is a day of its own, as in "between August 11 and August 15": the window spans both and a duration
question can look for each. A number after a day that cannot end the stretch is left alone: a smaller one
("June 15 to 11"), a count ("June 11 and 15 people", 「6月11日から15日間」), a clock time ("June 20 to 3 pm")."""

from __future__ import annotations

import re
from typing import NamedTuple

from .temporal_patterns import Cued
from .temporal_text import MONTH_NAMES, MONTH_STEMS, MONTHS, VERB_MONTHS_BEFORE_DAY

_YEAR = r"(?P<y>(?:19|20)\d{2})(?!\d)"
_DAY = r"(?:the\s+|el\s+|le\s+|dem\s+|den\s+|il\s+|l')?(?P<{0}>\d{{1,2}})(?:st|nd|rd|th|\.)?"
# English, then Spanish / Portuguese / Italian (al, a, ao, y, e), French (au, à, et), German (bis, und), Dutch (tot, en).
_TO = (r"\s*(?:-|–|—|~|à|\b(?:to|through|thru|till|until|and|al|a|ao|y|e|au|et|bis|und|tot|en)\b)\s*")
# What a number that ends no stretch of days is followed by: a clock, a unit, a count of things.
_NOT_A_DAY = (r"(?!\d|\s*(?:[:/%]|\.\d|(?:am|pm|a\.m|p\.m|o'clock|h|hours?|hrs?|minutes?|mins?|days?|weeks?|months?"
              r"|years?|times?|people|persons?|guests?|kids?|friends?|of\s+(?:us|them|you|my|our|the|those|these)"
              r"|percent|kg|km|miles?)\b))")
_MONTH_FIRST = Cued(
    rf"\b(?P<m>{MONTH_NAMES})\.?\s+{_DAY.format('d')}{_TO}{_DAY.format('d2')}{_NOT_A_DAY}"
    rf"(?:\s+(?:of\s+)?(?P<m2>{MONTH_NAMES})\b\.?)?(?:,?\s*(?:of\s+)?{_YEAR})?", MONTH_STEMS)
_DAY_FIRST = Cued(
    rf"(?<![\d/.\-])\b{_DAY.format('d')}{_TO}{_DAY.format('d2')}\s+(?P<of>of\s+)?(?P<m>{MONTH_NAMES})\b\.?"
    rf"(?:,?\s*(?:of\s+)?{_YEAR})?", MONTH_STEMS)
# Korean 일 stays when no month follows the number (「15일까지」): normalise turns only a full date into 日.
_JA = Cued(
    r"(?:(?P<y>(?:19|20)\d{2})\s*年\s*)?(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*日?\s*(?:から|より|〜|~|-|–|—|到|至|부터)\s*"
    r"(?P<d2>\d{1,2})\s*[日일](?!\s*(?:間|간))", ("月",))
_MONTH_BEFORE = re.compile(rf"\b(?:{MONTH_NAMES})\.?\s*$")
# The days of a month alone: "from the 3rd to the 10th", 「3日から10日まで」 (month 0: the latest such stretch).
_DAYS_ONLY = Cued(
    r"\b(?:from|between)\s+the\s+(?P<d>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\s+(?:to|and|through|till|until|-)\s+"
    r"(?:the\s+)?(?P<d2>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b(?!\s+(?:of\b|floor|page|line|row|level|step|stage|"
    r"time|try|attempt|day|week|month|year|round|place|grade|lap|shelf|slide|chapter|episode|season|track|hole|question|century))"
    r"|(?<![\d月/年.])(?P<jd>[1-9]|[12]\d|3[01])日\s*(?:から|〜|~)\s*(?P<jd2>[1-9]|[12]\d|3[01])日(?=まで|にかけて|の間|は|に(?!\d))",
    ("from the ", "between the ", "日"), ("st", "nd", "rd", "th", "日"))
_WORD_BEFORE = re.compile(r"\b(?:between|from|on|since|of|del|du|vom|van|entre|dall|de|dal)\W*$")


class DayRange(NamedTuple):
    start: int
    end: int
    year: int | None
    month: int
    first: int
    last: int


def _range(m: re.Match, text: str) -> DayRange | None:
    month_word = m["m"]
    month = int(month_word) if month_word.isdigit() else MONTHS[month_word]
    if m.re is _DAY_FIRST.pattern and _MONTH_BEFORE.search(text, max(0, m.start() - 12), m.start()):
        return None  # "June 11 and 15 July": the first day has a month of its own
    again = m.groupdict().get("m2")
    if again and MONTHS[again] != month:
        return None  # "August 11 and 15 September": two days, each with its month
    first, last = int(m["d"]), int(m["d2"])
    if not 1 <= first < last <= 31 or not 1 <= month <= 12:
        return None
    if month_word in VERB_MONTHS_BEFORE_DAY and not (m["y"] or m.groupdict().get("of")
                                                   or _WORD_BEFORE.search(text, max(0, m.start() - 12), m.start())):
        return None  # "2 to 3 may come", "may 2 to 3 of them": a verb
    return DayRange(m.start(), m.end(), int(m["y"]) if m["y"] else None, month, first, last)


def find_day_ranges(text: str) -> list[DayRange]:
    """Every stretch of days in ``text`` (already ``normalise``d), in the order of the patterns; month 0 for the days
    of a month alone."""
    found = []
    for pattern in (_JA, _MONTH_FIRST, _DAY_FIRST):
        for m in pattern.finditer(text):
            day_range = _range(m, text)
            if day_range is not None:
                found.append(day_range)
    for m in _DAYS_ONLY.finditer(text):
        first, last = int(m["d"] or m["jd"]), int(m["d2"] or m["jd2"])
        if first < last and not any(r.start < m.end() and m.start() < r.end for r in found):
            found.append(DayRange(m.start(), m.end(), None, 0, first, last))
    return found
