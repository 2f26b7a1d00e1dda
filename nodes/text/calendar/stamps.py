"""A dated stamp read as a moment: a conversation session's date-time in any of the forms people and exports
write ("1:56 pm on 8 May, 2023", "2023-05-08 13:56", 「2023年5月8日 午後1時56分」, "8 de mayo de 2023, 13:56",
"8. Mai 2023", "2023년 5월 8일 오후 1:56", "8 мая 2023 г.", "8 พฤษภาคม 2566" in the Buddhist era, "May 8th, 2023").

The fixed forms (ISO, year-month-day in CJK, dotted day-first, a day, a month name and a year) are read by the
rules here, in microseconds, with the month names of ``names``. What they do not cover ("May 8th, 2023",
"8-May-2023", "5/8/2023") goes to dateparser, which reads dates in some 200 locales offline but costs 0.5–8 s to
load the locales it tries on first use and 1–60 ms a call (``python -m bench.calendar_speed``): it is loaded on the
first such stamp only, and never on a hot path. It is not
asked first because it reads "08.05.2023" month first (the dotted form is day first wherever it is written) and
Thai years as Western ones, and it gives a date to "yesterday 2023"; so its answer counts only when its year is
written in the stamp."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone
from functools import lru_cache

from .names import DATE_SPELLINGS, EN_MONTHS, MONTHS, NATIVE_DIGITS, latin_months, script_months

# Every month name a stamp may hold → its number: English with its abbreviations, the Latin-script languages with
# their abbreviations, and (after _SCRIPT_MONTH has written them in English) Russian, Hindi, Arabic and Thai.
_MONTHS: dict[str, int] = {
    **MONTHS,
    **{name: EN_MONTHS.index(english) + 1 for name, english in latin_months().items()},
    **{name: number for number, names in enumerate(DATE_SPELLINGS, 1) for name in names},
}
_SCRIPT_MONTHS = script_months("ru_day", "hi", "ar", "th")
_SCRIPT_MONTH = re.compile("|".join(sorted(map(re.escape, _SCRIPT_MONTHS), key=len, reverse=True)))
_THAI = re.compile(r"[\u0e00-\u0e7f]")
_BUDDHIST_YEAR = re.compile(r"(?<!\d)(2[45]\d\d)(?!\d)")  # Thai years: 2566 is 2023
_WORD = r"([^\W\d_]+)"
# "8 May, 2023", "8 de mayo de 2023", "8. Mai 2023"; "May 8, 2023"; "2023年5月8日" (and Chinese), "2023년 5월 8일"
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})\.?\s+(?:de\s+)?" + _WORD + r"\.?,?\s+(?:de\s+|del\s+)?(\d{4})")
_MONTH_DAY_YEAR = re.compile(_WORD + r"\.?\s+(\d{1,2}),?\s+(\d{4})")
_YEAR_MONTH_DAY = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")
_ISO_DAY = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
# 08.05.2023: with dots the day comes first wherever the form is used (German, Russian, Turkish …), unlike
# slashes, which are month first in the US.
_DOTTED_DAY_FIRST = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.])")
# "13:56", "1:56 pm", "13h56", "午後1時56分", "0時5分", "1時半", "下午1点56分", "오후 1시 56분"
_CLOCK = re.compile(r"(\d{1,2})\s*(?:[:h]\s*(\d{2})(?!\d)|(?:時|点|點|시)\s*(?:(\d{1,2})\s*[分분]|(半|반))?)")
_PM = re.compile(r"\bp\.?\s?m\b|午後|下午|오후")
_AM = re.compile(r"\ba\.?\s?m\b|午前|上午|오전")
_YEAR = re.compile(r"(?<!\d)(?:1[89]|2\d)\d\d(?!\d)")


def read_when(value: str) -> datetime | None:
    """A stamp as a UTC datetime (noon when it gives no time), or None for a text that names no day."""
    text = str(value or "").strip().lower()
    if not text:
        return None
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(NATIVE_DIGITS)
        if _THAI.search(text):  # looked for before the Thai month is written in English
            text = _BUDDHIST_YEAR.sub(lambda m: str(int(m.group()) - 543), text)
        text = _SCRIPT_MONTH.sub(lambda m: _SCRIPT_MONTHS[m.group()], text)
    try:
        parsed = datetime.fromisoformat(text.replace("/", "-"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    except ValueError:
        pass
    found = _fixed_form(text)
    if found is None:
        return _by_dateparser(text)
    (year, month, day), m = found
    hour, minute = 12, 0
    # The clock is looked for outside the date itself, so that its day and year are not read as a time.
    rest = text[:m.start()] + " " + text[m.end():]
    if clock := _CLOCK.search(rest):
        hour = int(clock.group(1))
        minute = int(clock.group(2) or clock.group(3) or 0) if not clock.group(4) else 30
        if _PM.search(rest) and hour < 12:
            hour += 12
        if _AM.search(rest) and hour == 12:
            hour = 0
    try:
        return datetime(year, month, day, min(hour, 23), min(minute, 59), tzinfo=timezone.utc)
    except ValueError:
        return None


def _fixed_form(text: str) -> tuple[tuple[int, int, int], re.Match] | None:
    """Year, month and day of the first fixed form in ``text``, with the match that holds them."""
    if m := (_YEAR_MONTH_DAY.search(text) or _ISO_DAY.search(text)):
        year, month, day = (int(x) for x in m.groups())
        return (year, month, day), m
    if m := _DOTTED_DAY_FIRST.search(text):
        day, month, year = (int(x) for x in m.groups())
        return (year, month, day), m
    if (m := _DAY_MONTH_YEAR.search(text)) and m.group(2) in _MONTHS:
        return (int(m.group(3)), _MONTHS[m.group(2)], int(m.group(1))), m
    if (m := _MONTH_DAY_YEAR.search(text)) and m.group(1) in _MONTHS:
        return (int(m.group(3)), _MONTHS[m.group(1)], int(m.group(2))), m
    return None


@lru_cache(maxsize=1)
def _dateparser():
    from dateparser.date import DateDataParser  # seconds of locale data: loaded for the first unusual stamp only

    return DateDataParser(settings={"REQUIRE_PARTS": ["day", "month", "year"], "RETURN_TIME_AS_PERIOD": True,
                                    "RETURN_AS_TIMEZONE_AWARE": False})


def _by_dateparser(text: str) -> datetime | None:
    years = set(_YEAR.findall(text))
    if not years:
        return None  # no written year: nothing here is a dated stamp, and dateparser would invent one
    data = _dateparser().get_date_data(text)
    when = data.date_obj
    if when is None or str(when.year) not in years:
        return None
    if data.period != "time":
        when = when.replace(hour=12, minute=0, second=0, microsecond=0)
    return when.replace(tzinfo=timezone.utc)
