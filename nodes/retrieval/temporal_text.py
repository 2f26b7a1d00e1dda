"""One spelling for a query's time words before the cue patterns read it, and the vocabularies they share.

``normalise`` folds the many ways of writing a number or a year into one, so each cue pattern is written
once: NFKC (full-width digits, half-width kana), lower case, curly apostrophes, kanji numerals before a
calendar unit as digits (五月七日 → 5月7日, 二〇二三年 → 2023年, 二三日前 → 数日前) and Japanese era years as
Western ones (令和5年 → 2023年, 平成元年 → 1989年), and the time words of other languages in English or
Japanese (``temporal_languages``: "el 8 de mayo" → "8 may", 「지난주」 → 「先週」)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from lumina_memory.nodes.text.calendar.names import EN_WEEKDAYS, MONTHS
from lumina_memory.nodes.text.calendar.names import JA_WEEKDAYS as JA_WEEKDAY_NAMES
from lumina_memory.nodes.text.calendar.numerals import KANJI_DIGITS, kanji_number

from .temporal_languages import to_cue_language

MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
MONTH_STEMS = tuple(name for name in MONTHS if len(name) == 3)  # every month name holds one
# Month names that are also everyday words: a month only with a year, or a word before it that makes
# it one ("in may", "last march"); "may" and "mar" before a day number too ("may 7 people come?").
VERB_MONTHS = frozenset({"may", "mar", "march"})
VERB_MONTHS_BEFORE_DAY = frozenset({"may", "mar"})

WEEKDAYS: dict[str, int] = {name: i for i, name in enumerate(EN_WEEKDAYS)}
WEEKDAY_NAMES = "|".join(WEEKDAYS)
JA_WEEKDAYS: dict[str, int] = {name: i for i, name in enumerate(JA_WEEKDAY_NAMES)}

_ORDINAL_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
ORDINAL_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(_ORDINAL_UNITS, 1)},
    **{w: i for i, w in enumerate(["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
                                   "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"], 10)},
    **{f"twenty{sep}{w}": 20 + i for i, w in enumerate(_ORDINAL_UNITS, 1) for sep in ("-", " ")},
    "thirtieth": 30, "thirty-first": 31, "thirty first": 31,
}
ORDINAL_NAMES = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))

# Counts in words as well as digits: "two weeks ago", "a couple of days ago", "数日前".
COUNT_WORDS: dict[str, float] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2, "couple": 2,
    "a few": 3, "few": 3, "several": 4, "some": 3, "数": 3,  # not 何: "何年前" asks how long ago
}
EN_COUNT = "|".join(sorted((w for w in COUNT_WORDS if w.isascii()), key=len, reverse=True))
EN_UNITS = r"days?|weeks?|fortnights?|months?|years?"
JA_UNITS = r"日|週間|週|ヶ月|か月|カ月|ヵ月|ケ月|箇月|年"
UNIT_DAYS: dict[str, float] = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365,
                               "日": 1, "週間": 7, "週": 7, "年": 365}


def count_value(word: str) -> float:
    return float(word) if word.isdigit() else COUNT_WORDS[word]


def unit_days(unit: str) -> float:
    """Days in a unit as the patterns capture it: "weeks" 7, "ヶ月" 30."""
    return UNIT_DAYS.get(unit.rstrip("s"), UNIT_DAYS.get(unit, 30.0))  # every spelling of "ヶ月" is a month


# A kanji numeral counts only before a calendar unit: 一 in 一緒 or 統一 is not a number.
_KANJI_RUN = re.compile(r"[〇零一二三四五六七八九十百千]+(?=\s*(?:年|月|日|週|ヶ月|か月|カ月|ヵ月|ケ月|箇月))")
_ERA_YEAR = re.compile(r"(令和|平成|昭和|大正|明治)\s*(元|\d{1,2})\s*年")
_ERA_BASE = {"令和": 2018, "平成": 1988, "昭和": 1925, "大正": 1911, "明治": 1867}


def _kanji_to_digits(match: re.Match) -> str:
    run = match.group()
    if len(run) == 2 and run[0] in KANJI_DIGITS and run[1] in KANJI_DIGITS and KANJI_DIGITS[run[1]] == KANJI_DIGITS[run[0]] + 1:
        return "数"  # 二三日前, 四五年前: "two or three", a few
    return str(kanji_number(run))


def _era_to_western(match: re.Match) -> str:
    number = 1 if match.group(2) == "元" else int(match.group(2))
    return f"{_ERA_BASE[match.group(1)] + number}年"


# 昨夏 (last summer), 今春 (this spring), 来秋 (next autumn): the compact written forms of 去年の夏, 今年の春, 来年の秋.
_JA_COMPACT_SEASON = re.compile(r"(?<![\u4e00-\u9fff々])(昨|今|来)(春|夏|秋|冬)")
_JA_SEASON_YEAR = {"昨": "去年の", "今": "今年の", "来": "来年の"}
# An era abbreviated by its initial: R5.6.3 (令和5年6月3日), H30/6/3, 令和5.6.3, R4年; each era only within its years,
# so that "s99.1.1" or a version number past an era's end is left alone.
_ERA_DATE = re.compile(
    r"(?<![a-z0-9.])(?:(?P<era>[rhs])|(?P<kera>令和|平成|昭和)\s?)(?P<n>元|\d{1,2})(?:\s*年"
    r"|[./](?P<m>0?[1-9]|1[0-2])[./](?P<d>0?[1-9]|[12]\d|3[01])(?![\d./]))")
_ERA_INITIALS = {"r": "令和", "h": "平成", "s": "昭和"}
_ERA_YEARS = {"令和": 99, "平成": 31, "昭和": 64}


def _era_date_to_western(match: re.Match) -> str:
    era = _ERA_INITIALS[match["era"]] if match["era"] else match["kera"]
    number = 1 if match["n"] == "元" else int(match["n"])
    if not 1 <= number <= _ERA_YEARS[era]:
        return match.group()
    year = _ERA_BASE[era] + number
    return f"{year}年{int(match['m'])}月{int(match['d'])}日" if match["m"] else f"{year}年"


_YEARS_AGO_IN = re.compile(
    rf"\b((?:\d{{1,2}}|a|one|two|three|four|five|six|seven|eight|nine|ten)\s+years?\s+ago),?\s+(in|during|over|at)\s+"
    rf"(?:the\s+)?({MONTH_NAMES}|spring|summer|autumn|fall|winter|christmas|easter|halloween|thanksgiving)\b")


# Two parts of one month said once: "early to mid June" is early June to mid June, 「6月上旬から中旬」 6月上旬〜6月中旬 (its から
# is not "since").
_EN_PARTS_OF_ONE = re.compile(
    rf"\b(early|mid|late)(?:[\s-]*\b(?:to|through|or)\b[\s-]*|\s*[-–]\s*)(early|mid|late)[\s-]+({MONTH_NAMES})\b")
_JA_PARTS_OF_ONE = re.compile(r"(\d{1,2})\s*月\s*(上旬|初旬|中旬|下旬)\s*(?:から|〜|~|-|–)\s*(上旬|初旬|中旬|下旬)")


# Read by time_cues and time_window of one question in turn (~0.5 ms on 2,000 characters); a few entries, since a
# question can be a whole long message.
@lru_cache(maxsize=32)
def normalise(query: str) -> str:
    # One space between words, so the literal words that gate each pattern (``Cued``) are found as written.
    text = " ".join(unicodedata.normalize("NFKC", query).lower().replace("\u2019", "'").split())
    text = to_cue_language(text)
    if not text.isascii():
        text = _ERA_YEAR.sub(_era_to_western, _KANJI_RUN.sub(_kanji_to_digits, text))
        if "旬" in text:
            text = _JA_PARTS_OF_ONE.sub(r"\1月\2〜\1月\3", text)
        text = _JA_COMPACT_SEASON.sub(lambda m: _JA_SEASON_YEAR[m.group(1)] + m.group(2), text)
        text = _ERA_DATE.sub(_era_date_to_western, text)  # written by those who write Japanese
    if "year ago" in text or "years ago" in text:  # "two years ago in June" is "in June two years ago"
        text = _YEARS_AGO_IN.sub(r"\2 \3 \1", text)
    if ("early" in text or "mid" in text or "late" in text) and (" to " in text or "-" in text or " or " in text
                                                                  or " through " in text or "–" in text):
        text = _EN_PARTS_OF_ONE.sub(r"\1 \3 to \2 \3", text)
    return text


# A year said relative to now, in words: offset from the current year.
YEAR_OFFSETS: dict[str, int] = {
    "the year before last": -2, "last year": -1, "this year": 0, "next year": 1,
    "一昨年": -2, "おととし": -2, "去年": -1, "昨年": -1, "今年": 0, "来年": 1, "再来年": 2,
}
_EN_YEARS_BACK = r"(?:\d{1,2}|a|one|two|three|four|five|six|seven|eight|nine|ten)\s+years?\s+ago"
# Also a count of years back said with a month, a season or a holiday: "June two years ago", 「2年前の夏」.
EN_YEAR_REL = rf"the\s+year\s+before\s+last|last\s+year|this\s+year|next\s+year|{_EN_YEARS_BACK}"
JA_YEAR_REL = r"一昨年|おととし|去年|昨年|今年|再来年|来年|\d{1,2}\s*年前"
_YEARS_BACK = re.compile(r"(\d{1,2}|[a-z]+)\s*(?:年前|years?\s+ago)")


def year_offset(words: str) -> int:
    words = " ".join(words.split())
    back = _YEARS_BACK.fullmatch(words)
    return -int(count_value(back.group(1))) if back else YEAR_OFFSETS[words]
