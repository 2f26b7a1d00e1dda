"""Named stretches of the calendar as time cues: a week of a month ("the second week of May", 「6月の第2週」),
a part of a month ("early June", "the end of May", 「6月上旬」「5月の終わり」「先月末」), a part of a year ("late
2022", "the beginning of the year", 「年末」), a season ("last summer", "winter 2023", 「去年の夏」「春に」), a
month ("in May", "June last year", 「去年の6月」, "2023-05"), a quarter ("Q3", "last quarter", 「第2四半期」) and a
year ("in 2022", 「2022年に」, "in '22").

Without a year each is the most recent one that has begun; "last" (or 「去る」) the most recent one that is
over; "this" the one under way or nearest; "next" is a plan (see ``temporal_relative``)."""

from __future__ import annotations

import re
from datetime import date

from .temporal_calendar import (Cue, Days, add_months, days_window, latest_season, month_days, month_part_days,
                                nearest_season, recent_window, season_days, season_of_year, year_part_days)
from .temporal_patterns import Claims, Cued
from .temporal_text import (EN_YEAR_REL, JA_YEAR_REL, MONTH_NAMES, MONTH_STEMS, MONTHS, VERB_MONTHS, count_value,
                            year_offset)

_PLAN_DAYS_BACK = {"month": 45, "season": 120, "year": 365}
_PART_WORDS = {
    "early": "early", "beginning": "early", "start": "early", "mid": "mid", "middle": "mid", "late": "late",
    "end": "late", "first half": "first_half", "second half": "second_half", "latter half": "second_half",
    "last half": "second_half",
    "上旬": "early", "初旬": "early", "初め": "early", "初": "early", "始め": "early", "はじめ": "early", "初頭": "early", "頭": "early",
    "中旬": "mid", "半ば": "mid", "なかば": "mid", "下旬": "late", "終わり": "late", "おわり": "late", "末": "late",
    "前半": "first_half", "後半": "second_half",
}
# A year's beginning and end are narrower than its early and late parts: "the end of 2022" is its last
# two months, "late 2022" its last four.
_YEAR_PART = {"early": "early", "mid": "mid", "late": "late", "first_half": "first_half", "second_half": "second_half"}
_YEAR_PART_NARROW = {"beginning": "start", "start": "start", "end": "end", "初め": "start", "始め": "start",
                     "はじめ": "start", "初頭": "start", "頭": "start", "終わり": "end", "おわり": "end", "末": "end",
                     "暮れ": "end", "年始": "start", "年初": "start", "年明け": "start", "年末": "end", "年の瀬": "end",
                     "年の暮れ": "end"}
_EN_PARTS = ("early", "mid", "late", "beginning", "start", "end", "half")
_JA_PARTS = ("旬", "初", "始", "はじめ", "頭", "半", "終", "おわり", "末", "暮", "瀬", "明け")
_EN_PART = r"(?P<part>early|mid|middle|late|(?:the\s+)?(?:beginning|start|middle|end|first\s+half|second\s+half|latter\s+half|last\s+half)\s+of)"
# 初 alone as in 月初; not 初めて ("for the first time"), 初回, 初日.
_JA_PART = r"(?P<part>上旬|初旬|中旬|下旬|初め(?!て)|始め|はじめ(?!て)|初頭|頭|半ば|なかば|前半|後半|終わり|おわり|末|暮れ|初(?![めて回日対心恋]))"
_WEEK_OF_MONTH = Cued(
    rf"\b(?:the\s+)?(?P<n>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+week\s+(?:of|in)\s+(?:the\s+)?"
    rf"(?P<m>{MONTH_NAMES}|last\s+month|this\s+month|month)\b(?:(?:,?\s*|\s+of\s+)(?P<y>(?:19|20)\d{{2}})(?!\d))?"
    r"|(?:(?P<jy>(?:19|20)\d{2})\s*年\s*)?(?P<jm>\d{1,2}\s*月|先月|今月)\s*の?\s*(?:第\s*(?P<jn>[1-5])\s*週|(?P<jw>最初|最後|初め|終わり)の週)", ("week", "週"))
_EN_MONTH_PART = Cued(
    rf"\b{_EN_PART}[\s-]*(?:the\s+)?(?P<m>{MONTH_NAMES}|last\s+month|this\s+month|month)\b\.?"
    rf"(?:(?:,?\s*|\s+of\s+)(?P<y>(?:19|20)\d{{2}})(?!\d)|\s+(?:of\s+)?(?P<yr>{EN_YEAR_REL})\b)?", _EN_PARTS, (*MONTH_STEMS, "month"))
_JA_MONTH_PART = Cued(
    rf"(?<!毎)(?:(?P<y>(?:19|20)\d{{2}})\s*年\s*|(?P<yr>{JA_YEAR_REL})\s*の?\s*)?(?P<m>\d{{1,2}}\s*月|先々月|先月|今月|月)\s*の?\s*{_JA_PART}", ("月",), _JA_PARTS)
_EN_YEAR_PART = Cued(
    rf"\b{_EN_PART}[\s-]*(?:the\s+)?(?P<y>(?:19|20)\d{{2}}(?!\d)|{EN_YEAR_REL}|year\b)", _EN_PARTS, ("19", "20", "year"))
_JA_YEAR_PART = Cued(
    rf"(?:(?P<y>(?:19|20)\d{{2}})\s*年|(?P<yr>{JA_YEAR_REL}))\s*の?\s*(?P<part>初め|始め|はじめ|初頭|頭|前半|半ば|なかば|後半|終わり|おわり|末|暮れ)"
    r"|(?P<bare>年末|年始|年初|年明け|年の瀬|年の暮れ)", ("年",), _JA_PARTS)
# "June '22", "summer of '21": a year with its century left out, after a month or a season.
_SHORT_YEAR_AFTER = r"(?:,?\s*|\s+of\s+)'(?P<yy>\d{2})(?![\d'])"
_EN_SEASON = Cued(
    r"\b(?:(?P<pre>every|each|last|this\s+past|past|this\s+coming|coming|this|next|early|late|mid|in|during|over|"
    r"since|until|through|throughout|for|the|that|last\s+year's|this\s+year's)[\s-]+)?(?:the\s+)?"
    r"(?P<s>spring|summer|autumn|fall|winter)(?P<pl>s)?\b"
    rf"(?:\s+(?:of\s+)?(?P<y>(?:19|20)\d{{2}})(?!\d)|\s+(?:of\s+)?(?P<yr>{EN_YEAR_REL})\b|{_SHORT_YEAR_AFTER}"
    r"|(?P<bl>\s+before\s+last)\b)?",
    ("spring", "summer", "autumn", "fall", "winter"))
# "two summers ago": the latest one that is over, and a year further back for each beyond the first.
_EN_SEASONS_AGO = Cued(r"\b(?P<n>\d|a|one|two|three|four|five|six)\s+(?P<s>spring|summer|autumn|fall|winter)s?\s+(?:ago|back)\b",
                       ("ago", "back"))
# 春 in 青春 or 秋 in 秋葉原 is not a season: one stands alone, after a year, or before a particle.
_JA_SEASON = Cued(
    rf"(?:(?P<y>(?:19|20)\d{{2}})\s*年\s*の?|(?P<yr>{JA_YEAR_REL})\s*の?|(?P<pre>毎年|この|去る|前の|次の|来る)\s*の?)?"
    r"(?:(?<=年)|(?<![\u4e00-\u9fff々]))(?P<s>春|夏|秋|冬)"
    r"(?=に|は|の|頃|ごろ|先|休み|場|も|から|まで|くらい|ぐらい|[、。?!\s]|$)", "春夏秋冬")
_EN_MONTH = Cued(
    r"\b(?:(?P<pre>every|each|last|this\s+past|this\s+coming|this|next|in|during|since|until|till|by|of|through|"
    r"throughout|from|to|and|between|before|after|around|or)\s+)?"
    rf"(?P<m>{MONTH_NAMES})\b\.?(?:(?:,?\s*|\s+of\s+)(?P<y>(?:19|20)\d{{2}})(?!\d)|\s+(?:of\s+)?(?P<yr>{EN_YEAR_REL})\b"
    rf"|{_SHORT_YEAR_AFTER}|(?P<bl>\s+before\s+last)\b)?", MONTH_STEMS)
_JA_MONTH = Cued(rf"(?:(?P<y>(?:19|20)\d{{2}})\s*年\s*の?\s*|(?P<yr>{JA_YEAR_REL})\s*の?\s*|(?P<pre>毎年|毎)\s*の?\s*)?(?P<m>\d{{1,2}})\s*月(?!\d)",
                 ("月",))
_NUMERIC_MONTH = Cued(
    r"(?<![\d/.\-])(?:(?P<y>(?:19|20)\d{2})[-/.](?P<m>0?[1-9]|1[0-2])|(?P<m2>0?[1-9]|1[0-2])/(?P<y2>(?:19|20)\d{2}))"
    r"(?![\d/\-]|\.\d)", ("19", "20"), "-/.")
_YEAR = Cued(
    r"\b(?P<pre>in|during|since|from|until|till|through|throughout|around|by|before|after|of|the\s+year)\s+"
    r"(?P<y>(?:19|20)\d{2})\b(?![-/.]\d)(?P<noun>\s+[a-z]+)?"
    r"|(?P<jy>(?:19|20)\d{2})\s*年(?!\s*\d{1,2}\s*月|\s*間|\d)", ("19", "20"))
# A quarter of a year: "Q3", "Q4 2022", "the first quarter", "last quarter", 「第2四半期」「前四半期」.
_QUARTER = Cued(
    r"\bq(?P<q>[1-4])\b(?:\s*(?:of\s+)?(?P<y>(?:19|20)\d{2})(?!\d))?"
    r"|\b(?:the\s+)?(?P<qw>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b(?:\s+of\s+(?P<y2>(?:19|20)\d{2})(?!\d))?"
    r"|\b(?P<rel>last|this|previous)\s+quarter\b"
    r"|(?:(?P<jy>(?:19|20)\d{2})\s*年\s*(?:度\s*)?の?\s*)?第\s*(?P<jq>[1-4一二三四])\s*四半期|(?P<jrel>前|今|先)四半期",
    ("q1", "q2", "q3", "q4", "quarter", "四半期"))
_QUARTER_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
                  "一": 1, "二": 2, "三": 3, "四": 4}
# "in '22": a year with its century left out.
_SHORT_YEAR = Cued(r"\b(?:in|during|since|back\s+in)\s+['’](?P<yy>\d{2})(?![\d'’])", ("'", "’"))
# A decade: "the 90s", "the '80s", "the early 2020s", "the late 1980s", 「90年代」「2010年代後半」; after "the", so
# "in my 30s" (an age) is not one, and the two-digit form only for decades that have begun.
_DECADE = Cued(
    r"\bthe\s+(?:(?P<part>early|mid|late)[\s-]+)?(?:(?P<c>19|20)(?P<d>\d)0|['’]?(?P<dd>\d)0)['’]?s\b"
    r"|(?P<jc>19|20)?(?P<jd>\d)0\s*年代\s*(?P<jp>前半|初め|初頭|半ば|中頃|後半|終わり|末)?", ("0s", "0's", "0’s", "年代"))
_DECADE_PARTS = {"early": (0, 3), "前半": (0, 4), "初め": (0, 3), "初頭": (0, 3), "mid": (3, 6), "半ば": (3, 6),
                 "中頃": (3, 6), "late": (6, 9), "後半": (5, 9), "終わり": (7, 9), "末": (7, 9)}
_PAST = {"last", "this past", "past", "去る", "前の"}
_PLAN = {"next", "this coming", "coming", "次の", "来る"}
_HABIT = {"every", "each", "毎年", "毎"}
_VERB_BEFORE = {"this", "and", "or", "to"}  # words before "may" or "march" the verb as often as the month
_EN_YEAR_WORDS = {"last year's": "last year", "this year's": "this year"}


def _century_year(two_digits: str, today: date) -> int:
    year = 2000 + int(two_digits)
    return year if year <= today.year else year - 100  # '95 is 1995


def _year(m: re.Match, today: date, group: str = "y", rel: str = "yr") -> int | None:
    if m.groupdict().get(group):
        return int(m[group])
    if m.groupdict().get("yy"):
        return _century_year(m["yy"], today)
    if m.groupdict().get(rel):
        return today.year + year_offset(m[rel])
    return None


def _month_ref(word: str, today: date) -> tuple[int, int] | None:
    """(year, month) of "last month", 「先月」, or None for a named month (its year comes from elsewhere)."""
    word = " ".join(word.split())
    offset = {"last month": -1, "先月": -1, "先々月": -2, "this month": 0, "今月": 0}.get(word)
    return None if offset is None else add_months(today.year, today.month, offset)


def _latest_month(month: int, today: date, exclude_current: bool) -> int:
    year = today.year if month <= today.month else today.year - 1
    return year - 1 if exclude_current and (year, month) == (today.year, today.month) else year


def _month_number(word: str) -> int | None:
    word = word.replace(" ", "")
    if word in MONTHS:
        return MONTHS[word]
    return int(word[:-1]) if word.endswith("月") and word[:-1].isdigit() else None


def _month_part(m: re.Match, today: date) -> Days | None:
    part = _PART_WORDS[" ".join(m["part"].replace("the ", "").replace(" of", "").split())]
    ref = _month_ref(m["m"], today)
    if ref is None:
        number = _month_number(m["m"])
        if number is None:  # "the end of the month", 「月末」: the most recent one that has begun
            year, month = today.year, today.month
            if month_part_days(year, month, part)[0] > today:
                year, month = add_months(year, month, -1)
            return month_part_days(year, month, part)
        if not 1 <= number <= 12:
            return None
        year = _year(m, today) or _latest_month(number, today, exclude_current=False)
        ref = (year, number)
    return month_part_days(*ref, part)


def _year_part(m: re.Match, today: date) -> Days | None:
    words = " ".join((m["part"] or m.groupdict().get("bare")).replace("the ", "").replace(" of", "").split())
    part = _YEAR_PART_NARROW.get(words) or _YEAR_PART.get(_PART_WORDS.get(words, ""))
    said = m["y"]
    if said and said.isdigit():
        return year_part_days(int(said), part)
    if m.groupdict().get("yr") or (said and said != "year"):
        return year_part_days(today.year + year_offset(m.groupdict().get("yr") or said), part)
    days = year_part_days(today.year, part)  # "the end of the year", 「年末」: the most recent that has begun
    return days if days[0] <= today else year_part_days(today.year - 1, part)


def _season(m: re.Match, today: date) -> Days | None:
    season = "autumn" if m["s"] in ("fall", "秋") else {"春": "spring", "夏": "summer", "冬": "winter"}.get(m["s"], m["s"])
    pre = " ".join((m.groupdict().get("pre") or "").split())
    if m.groupdict().get("pl") or pre in _HABIT:
        return None
    year = _year(m, today)
    if pre in _EN_YEAR_WORDS:
        year = today.year + year_offset(_EN_YEAR_WORDS[pre])
    if m["s"] in ("spring", "fall") and not (year or pre not in ("", "the", "that", "for")):
        return None  # a spring in a mattress, "did I fall", "the fall of Rome"
    if pre in _PLAN:  # "next summer": a plan (the caller sees a season still to come)
        return season_days(season, latest_season(season, today, exclude_current=False)[0].year + 1)
    if year is not None:
        if (m.groupdict().get("yr") or "") in ("今年", "this year") or pre == "this year's":
            return nearest_season(season, today)
        return season_of_year(season, year, today)
    if m.groupdict().get("bl"):  # "the summer before last": the one before the latest that is over
        return season_days(season, latest_season(season, today, exclude_current=True)[0].year - 1)
    if pre in _PAST:
        return latest_season(season, today, exclude_current=True)
    if pre in ("this", "この"):
        return nearest_season(season, today)
    return latest_season(season, today, exclude_current=False)


def _month(m: re.Match, today: date) -> Days | None:
    pre = " ".join((m.groupdict().get("pre") or "").split())
    if pre in _HABIT:
        return None
    number = MONTHS[m["m"]] if m["m"] in MONTHS else int(m["m"])
    if not 1 <= number <= 12:
        return None
    year = _year(m, today)
    if m["m"] in VERB_MONTHS and not (year or pre and pre not in _VERB_BEFORE):
        return None  # "may I ask", "march on", "this may take", "want to march", "may or may not"
    if year is None and pre in _PLAN:
        year = today.year + (number <= today.month)  # "next June": the coming one, a plan
    if year is None and m.groupdict().get("bl"):  # "the June before last"
        year = _latest_month(number, today, exclude_current=True) - 1
    if year is None:
        year = today.year if pre == "this" else _latest_month(number, today, exclude_current=pre in _PAST)
    return month_days(year, number)


def _seasons_ago(m: re.Match, today: date) -> Days | None:
    season = "autumn" if m["s"] == "fall" else m["s"]
    back = int(count_value(m["n"])) - 1
    return season_days(season, latest_season(season, today, exclude_current=True)[0].year - back)


def _numeric_month(m: re.Match, _today: date) -> Days:
    return month_days(int(m["y"] or m["y2"]), int(m["m"] or m["m2"]))


def _week_of_month(m: re.Match, today: date) -> Days | None:
    month_word = m["m"] or m["jm"]
    ref = _month_ref(month_word, today)
    if ref is None:
        number = _month_number(month_word)
        if number is None:  # "the first week of the month"
            ref = (today.year, today.month)
        elif not 1 <= number <= 12:
            return None
        else:
            ref = (_year(m, today) or (int(m["jy"]) if m["jy"] else _latest_month(number, today, False)), number)
    first, last = month_days(*ref)
    which = m["n"] or m["jw"] or m["jn"]
    if which in ("last", "最後", "終わり"):
        return last.replace(day=last.day - 6), last
    n = {"first": 1, "second": 2, "third": 3, "fourth": 4, "最初": 1, "初め": 1}.get(which) or int(which[0])
    start = first.replace(day=min(7 * (n - 1) + 1, last.day))
    return start, start.replace(day=min(start.day + 6, last.day))


def _decade(m: re.Match, today: date) -> Days | None:
    century, digit = m["c"] or m["jc"], int(m["d"] or m["dd"] or m["jd"])
    if century:
        start = int(century) * 100 + digit * 10
    else:  # "the 90s" is the 1990s, "the 20s" the 2020s once they have begun
        start = 2000 + digit * 10
        start = start if start <= today.year else start - 100
    first, last = _DECADE_PARTS.get(m["part"] or m["jp"] or "", (0, 9))
    if start + first > today.year:
        return None
    return date(start + first, 1, 1), date(start + last, 12, 31)


def _plain_year(m: re.Match, _today: date) -> Days | None:
    if m["pre"] == "of" and m["noun"]:
        return None  # "a team of 2000 people"
    year = int(m["y"] or m["jy"])
    return date(year, 1, 1), date(year, 12, 31)


def _quarter_days(year: int, quarter: int) -> Days:
    first = date(year, 3 * quarter - 2, 1)
    return first, month_days(year, 3 * quarter)[1]


def _quarter(m: re.Match, today: date) -> Days | None:
    current = (today.month - 1) // 3 + 1
    rel = m["rel"] or m["jrel"]
    if rel:  # "last quarter", 「前四半期」: the one before this; "this quarter", 「今四半期」
        back = 0 if rel in ("this", "今") else 1
        year, quarter = today.year, current - back
        return _quarter_days(year - 1, 4) if quarter == 0 else _quarter_days(year, quarter)
    word = m["q"] or m["qw"] or m["jq"]
    quarter = int(word) if word.isdigit() else _QUARTER_WORDS[word]
    said = m["y"] or m["y2"] or m["jy"]
    if said:
        return _quarter_days(int(said), quarter)
    return _quarter_days(today.year if quarter <= current else today.year - 1, quarter)  # the latest begun


def _short_year(m: re.Match, today: date) -> Days | None:
    year = 2000 + int(m["yy"])
    year = year if year <= today.year else year - 100  # '95 is 1995
    return date(year, 1, 1), date(year, 12, 31)


# (pattern, reader, kind, slack days): finer stretches first, so "early June 2023" is not read as June 2023.
_FINDERS = [
    (_DECADE, _decade, "year", 0),  # before the years: "the early 2020s" is not early 2020
    (_WEEK_OF_MONTH, _week_of_month, "week", 2),
    (_EN_MONTH_PART, _month_part, "month_part", 1),
    (_JA_MONTH_PART, _month_part, "month_part", 1),
    (_EN_YEAR_PART, _year_part, "year_part", 0),
    (_JA_YEAR_PART, _year_part, "year_part", 0),
    (_EN_SEASONS_AGO, _seasons_ago, "season", 0),
    (_EN_SEASON, _season, "season", 0),
    (_JA_SEASON, _season, "season", 0),
    (_NUMERIC_MONTH, _numeric_month, "month", 0),
    (_EN_MONTH, _month, "month", 0),
    (_JA_MONTH, _month, "month", 0),
    (_QUARTER, _quarter, "year_part", 0),
    (_YEAR, _plain_year, "year", 0),
    (_SHORT_YEAR, _short_year, "year", 0),
]


# Kinds whose year may be left to another cue of the question: "from May to July 2022", 「2022年5月から7月まで」.
_YEAR_SHARED = {"month", "month_part", "week", "season"}


def _said_year(m: re.Match) -> int | None:
    groups = m.groupdict()
    said = groups.get("y") or groups.get("jy") or groups.get("y2")
    return int(said) if said and said.isdigit() else None


def _takes_said_year(m: re.Match, kind: str) -> bool:
    """A period without a year of its own, nor a word placing it ("last May", "this summer", 「先月」)."""
    groups = m.groupdict()
    if kind not in _YEAR_SHARED or _said_year(m) or groups.get("yr"):
        return False
    pre = " ".join((groups.get("pre") or "").split())
    month = groups.get("m") or groups.get("jm") or ""
    return pre not in _PAST | _PLAN | _HABIT | {"this"} and "month" not in month and not month.startswith(("先", "今"))


def find_periods(text: str, today: date, now_ts: float) -> list[Cue]:
    claims = Claims()
    found = []
    for pattern, read, kind, slack in _FINDERS:
        for m in pattern.finditer(text):
            days = read(m, today)
            if days is None or not claims.take(m.start(), m.end()):
                continue
            found.append((m, read, kind, slack, days))
    # A year said once covers the periods around it, as it does the days (temporal_dates).
    said = {year for m, _r, kind, _s, _d in found if (year := _said_year(m)) and (kind in _YEAR_SHARED or kind == "year")}
    cues = []
    for m, read, kind, slack, days in found:
        if len(said) == 1 and _takes_said_year(m, kind):
            days = read(m, date(next(iter(said)), 12, 31)) or days
        if days[0] > today:  # "next summer", 「来年の6月」, "this June" in March: a plan
            unit = {"season": "season", "year": "year", "year_part": "year"}.get(kind, "month")
            cues.append(Cue("plan", recent_window(now_ts, _PLAN_DAYS_BACK[unit]), m.start(), m.end()))
        else:
            cues.append(Cue(kind, days_window(*days, slack=slack), m.start(), m.end()))
    return cues
