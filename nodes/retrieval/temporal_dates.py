"""Named days as time cues: a day date in any usual spelling, a holiday, and days counted from one.

Spellings: "3 June, 2023", "the 3rd of June", "June 3rd", "June third", "2023年6月3日", "6月3日" (and 六月三日,
令和5年 through ``normalise``), ISO "2023-06-03" with or without a time, "2023/6/3", "2023.6.3", numeric
day and month with a year ("6/3/2023" month first as in the US unless the first number cannot be a month,
"03.06.2023" day first as in Europe), and a bare "6/13" only when just one reading is a date ("6/3" is
June 3 or 6 March: no cue), or in Japanese, which writes month / day (「6/3に」 is 6月3日); a day of the month
alone ("on the 15th", 「15日に」), the latest such day. Days counted from a named day: "two days after June 3", 「6月3日の3日後」,
"the day before", 「前日」「翌日」, "the week before / after / of", 「5月7日の週」, "the weekend before". Stretches of
days with their month said once ("August 11-15", 「8月11日から15日」) are two days, one for each end (``temporal_ranges``)."""

from __future__ import annotations

import re
from datetime import date, timedelta

from .temporal_calendar import (Cue, Days, days_window, latest_year_of, month_days, nearest_weekend, recent_window,
                                safe_date, week_days, weekend_after, weekend_before)
from .temporal_holidays import find_holidays
from .temporal_ranges import find_day_ranges
from .temporal_patterns import Claims, Cued
from .temporal_text import (EN_COUNT, EN_UNITS, JA_UNITS, MONTH_NAMES, MONTH_STEMS, MONTHS, ORDINAL_NAMES, ORDINAL_WORDS,
                            VERB_MONTHS_BEFORE_DAY, count_value, unit_days)

_YEAR = r"(?P<y>(?:19|20)\d{2})(?!\d)"
_JA_DATE = Cued(r"(?:(?P<y>(?:19|20)\d{2})\s*年\s*)?(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*日(?!\s*間)", ("月",), ("日",))
_YMD = Cued(r"(?<![\d.])(?P<y>(?:19|20)\d{2})\s*(?P<sep>[-/.])\s*(?P<m>\d{1,2})\s*(?P=sep)\s*(?P<d>\d{1,2})(?!\d)",
            ("19", "20"), "-/.")
_NUMERIC_Y = Cued(r"(?<![\d/.\-])(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<y>(?:19|20)\d{2}|\d{2})(?![\d/\-]|\.\d)",
                  "-/.")
_NUMERIC_MD = Cued(r"(?<![\d/.\-:])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\d/]|\.\d|\s*(?:of\b|cups?\b|inch|%))", "/")
_DAY_MONTH = Cued(
    rf"\b(?:the\s+)?(?:(?P<d>\d{{1,2}})(?P<suf>st|nd|rd|th)?|(?P<dw>{ORDINAL_NAMES}))\s+(?P<of>of\s+)?"
    rf"(?P<m>{MONTH_NAMES})\b\.?(?:,?\s*{_YEAR})?", MONTH_STEMS)
_MONTH_DAY = Cued(
    rf"\b(?P<m>{MONTH_NAMES})\.?\s+(?:the\s+)?(?:(?P<d>\d{{1,2}})(?P<suf>st|nd|rd|th)?(?!\d|\s*:\d)\b|(?P<dw>{ORDINAL_NAMES})\b)"
    rf"(?:,?\s*{_YEAR})?", MONTH_STEMS)
# "may 7" is a date after one of these ("on may 7"), a verb before a number otherwise ("may 7 people come?").
_DATE_WORD_BEFORE = re.compile(r"\b(?:on|since|by|until|till|before|after|from|between|and|to|through|of|around|about|or)\s+$")
_EN_OFFSET = re.compile(
    rf"(?:\b(?P<n>\d+|{EN_COUNT})\s+(?P<unit>{EN_UNITS})|\b(?:the\s+last|the|a|last)\s+(?P<span>day|week|weekend|month))"
    r"\s+(?P<dir>before|after|prior\s+to|following|of)\s+(?:the\s+)?$")
_JA_OFFSET = re.compile(
    rf"\s*(?:の|から)?\s*(?:(?P<n>\d+|数)\s*(?P<unit>{JA_UNITS})\s*(?P<dir>前(?!後)|後|あと)"
    r"|(?P<named>前の週末|次の週末|翌週末|前の週|前週|翌週|次の週|週末|週|前日|前の日|翌日|次の日|翌々日))")
_JA_NAMED = {"前日": ("day", "before"), "前の日": ("day", "before"), "翌日": ("day", "after"), "次の日": ("day", "after"),
             "前の週": ("week", "before"), "前週": ("week", "before"), "翌週": ("week", "after"), "次の週": ("week", "after"),
             "週": ("week", "of"), "週末": ("weekend", "of"), "前の週末": ("weekend", "before"),
             "次の週末": ("weekend", "after"), "翌週末": ("weekend", "after")}
_MAX_OFFSET_DAYS = 3_660
_PLAN_DAYS_BACK = 30  # a holiday still to come: its plans were made in the last month


def _numeric_with_year(m: re.Match) -> tuple[int, int, int] | None:
    a, b, year = int(m["a"]), int(m["b"]), m["y"]
    first_is_day = m["sep"] == "."  # 07.05.2023: Europe writes dots day first; slashes and dashes month first
    day, month = (a, b) if first_is_day else (b, a)
    if month > 12 >= day:
        day, month = month, day
    return int(year) + (2000 if len(year) == 2 else 0), month, day


_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# 「1/2の確率」「2/3くらい」「1/4カップ」: a fraction, not a day.
_JA_FRACTION_AFTER = re.compile(r"\s*(?:の(?:確率|割合|量|人|数)|くらい|ぐらい|程度|ほど|ずつ|以上|以下|未満|倍|割|杯|個|人|本|枚|カップ|大さじ|小さじ)")


def _numeric_month_day(m: re.Match, text: str) -> tuple[None, int, int] | None:
    a, b = int(m["a"]), int(m["b"])
    if (a, b) == (24, 7):
        return None  # "24/7": all the time
    if _JAPANESE.search(text) and 1 <= a <= 12 and 1 <= b <= 31 and not _JA_FRACTION_AFTER.match(text, m.end()):
        return None, a, b  # Japanese writes month / day: 「6/3に」 is 6月3日
    if a == b or (b > 12 >= a):
        return None, a, b
    if a > 12 >= b:
        return None, b, a
    return None  # 5/7: May 7 or 5 July, and nothing in the question says which


def _words(m: re.Match, text: str) -> tuple[int | None, int, int] | None:
    month_name, year = m["m"], m["y"]
    if month_name in VERB_MONTHS_BEFORE_DAY and not (year or m["suf"] or m.groupdict().get("of")
                                          or _DATE_WORD_BEFORE.search(text, max(0, m.start() - 12), m.start())):
        return None
    day = int(m["d"]) if m["d"] else ORDINAL_WORDS[" ".join(m["dw"].split())]
    return (int(year) if year else None), MONTHS[month_name], day


# A day of the month alone, "on the 15th", 「15日に」「28日の夜」: the latest such day not after today. Not a
# count of days (「3日で」「3日間」「3日に1回」「5日目」) nor "the 15th century".
_DAY_OF_MONTH = Cued(
    r"\bon\s+the\s+(?P<d>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b(?!\s+(?:of\b|floor|page|line|row|level|step|stage|"
    r"time|try|attempt|day|week|month|year|round|place|grade|lap|go|shelf|slide|chapter|episode|season|track|hole|question))"
    r"|(?<![\d月/年.])(?P<jd>[1-9]|[12]\d|3[01])日(?=に(?![\d一二三四五六七八九十数]|何[回度時分杯個本枚人歩]|どれ|どの)|の(?!間|うち)|は|って|頃|ごろ)",
    ("st", "nd", "rd", "th", "日"))


def _latest_day_of_month(day: int, today: date) -> tuple[int, int, int] | None:
    year, month = today.year, today.month
    for _ in range(3):  # the 31st may be two months back
        if day <= 31 and (year, month, day) <= (today.year, today.month, today.day) and safe_date(year, month, day):
            return year, month, day
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return None


_PATTERNS = [
    (_JA_DATE, lambda m, _t: (int(m["y"]) if m["y"] else None, int(m["m"]), int(m["d"]))),
    (_YMD, lambda m, _t: (int(m["y"]), int(m["m"]), int(m["d"]))),
    (_NUMERIC_Y, lambda m, _t: _numeric_with_year(m)),
    (_DAY_MONTH, lambda m, t: None if m["dw"] and not m["of"] else _words(m, t)),  # "first june" is not a date
    (_MONTH_DAY, _words),
    (_NUMERIC_MD, _numeric_month_day),
]


def _offset(days: Days, span: str, direction: str, amount: float) -> tuple[Days, int]:
    """The days counted from ``days`` and the slack they get (a count said in weeks is rougher than one in days)."""
    first, last = days
    if span == "count":
        target = first - timedelta(days=amount) if direction == "before" else last + timedelta(days=amount)
        return (target, target), 1 + int(amount // 10)
    if span == "day":
        return {"before": (first - timedelta(days=1),) * 2, "after": (last + timedelta(days=1),) * 2}.get(direction, days), 1
    if span == "week":
        if direction == "before":
            return (first - timedelta(days=7), first - timedelta(days=1)), 1
        if direction == "after":
            return (last + timedelta(days=1), last + timedelta(days=7)), 1
        # "the week of May 7": the calendar week holding it, and the seven days from it (both are meant).
        monday, sunday = week_days(first)
        return (monday, max(sunday, first + timedelta(days=6))), 1
    if span == "weekend":
        return {"before": weekend_before(first), "after": weekend_after(last)}.get(direction, nearest_weekend(first)), 1
    # a month
    if direction == "before":
        return (first - timedelta(days=30), first - timedelta(days=1)), 1
    if direction == "after":
        return (last + timedelta(days=1), last + timedelta(days=30)), 1
    return month_days(first.year, first.month), 0


def _counted(text: str, start: int, end: int) -> tuple[int, int, str, str, float] | None:
    """A count before (English) or after (Japanese) a named day: (start, end, span, direction, amount)."""
    found = _count_near(text, start, end)
    if found is not None and found[4] > _MAX_OFFSET_DAYS:
        return None  # "10,000 days after June 3": no calendar day to look in
    return found


def _count_near(text: str, start: int, end: int) -> tuple[int, int, str, str, float] | None:
    en = _EN_OFFSET.search(text, max(0, start - 40), start)
    if en and en.end() == start:
        direction = {"prior to": "before", "following": "after"}.get(" ".join(en["dir"].split()), en["dir"])
        if en["span"]:
            return en.start(), end, en["span"], direction, 0.0
        if direction != "of":
            return en.start(), end, "count", direction, count_value(en["n"]) * unit_days(en["unit"])
    ja = _JA_OFFSET.match(text, end)
    if ja and ja["named"]:
        if ja["named"] == "翌々日":
            return start, ja.end(), "count", "after", 2.0
        span, direction = _JA_NAMED[ja["named"]]
        return start, ja.end(), span, direction, 0.0
    if ja:
        return start, ja.end(), "count", "before" if ja["dir"] == "前" else "after", count_value(ja["n"]) * unit_days(ja["unit"])
    return None


def find_dates(text: str, today: date, now_ts: float) -> list[Cue]:
    claims = Claims()
    named: list[tuple[int, int, int | None, int, int]] = []
    ranges = [r for r in find_day_ranges(text) if claims.take(r.start, r.end)]  # before its days are read alone
    for pattern, read in _PATTERNS:
        for m in pattern.finditer(text):
            parts = read(m, text)
            if parts is not None and claims.take(m.start(), m.end()):
                named.append((m.start(), m.end(), *parts))
    # "between August 11 and August 15, 2023": a year said once covers the days around it.
    known = [year for _s, _e, year, _m, _d in sorted(named + [(r.start, r.end, r.year, 0, 0) for r in ranges])
             if year is not None]
    for r in ranges:  # both ends in one year: the one its first day was last in, unless a year is said
        if r.month == 0:  # "from the 3rd to the 10th": the month of the latest such first day
            latest = _latest_day_of_month(r.first, today)
            if latest is not None and safe_date(latest[0], latest[1], r.last) is not None:
                named += [(r.start, r.end, *latest), (r.start, r.end, latest[0], latest[1], r.last)]
            continue
        year = r.year or (known[-1] if known else latest_year_of(r.month, r.first, today))
        named += [(r.start, r.end, year, r.month, r.first), (r.start, r.end, year, r.month, r.last)]
    for m in _DAY_OF_MONTH.finditer(text):  # after every day named with its month, which claims first
        if m["jd"] == "1" and text.startswith("に", m.end()):
            continue  # 「1日に」 is "a day" (「1日に何時間？」) as often as "on the 1st"
        found = _latest_day_of_month(int(m["d"] or m["jd"]), today)
        if found is not None and claims.take(m.start(), m.end()):
            named.append((m.start(), m.end(), *found))
    days: list[tuple[int, int, Days | None]] = []
    for start, end, year, month, day in named:
        year = year or (known[-1] if known else latest_year_of(month, day, today))
        named_day = safe_date(year, month, day)
        if named_day is not None:
            days.append((start, end, (named_day, named_day)))
    days += find_holidays(text, today, claims)
    cues = []
    for start, end, span in sorted(days, key=lambda d: d[0]):
        if span is None:
            cues.append(Cue("plan", recent_window(now_ts, _PLAN_DAYS_BACK), start, end))
            continue
        counted = _counted(text, start, end)
        if counted is None:
            cues.append(Cue("date", days_window(*span), start, end))
        else:
            first, end_at, kind, direction, amount = counted
            (a, b), slack = _offset(span, kind, direction, amount)
            cues.append(Cue("date", days_window(a, b, slack), first, end_at))
    return cues
