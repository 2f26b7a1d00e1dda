"""Time words of other languages, rewritten into the forms the cue finders already read.

Arabic, Hindi, Thai and Russian questions get their relative times ("الأسبوع الماضي", "पिछले महीने",
"3 วันที่แล้ว", "в прошлом году" → "last week", "last month", "3 days ago", "last year") and their named days and
months, in their own digits too ("8 мая 2023", "८ मई २०२३", "٨ مايو", "в мае", "मई में", "في شهر مايو",
"8 พ.ค. 2566" with Thai's Buddhist-era year → "8 may 2023", "in may").

The finders read English and Japanese. A question in Spanish, French, German, Italian, Portuguese or Dutch
("¿Qué hice el 8 de mayo de 2023?", "letzte Woche", "il y a trois jours") is rewritten into the English it
says ("8 may 2023", "last week", "3 days ago"), one in Korean or Chinese ("2023년 5월 8일", "지난주", "上个月",
"三天前") into the Japanese ("2023年5月8日", "先週", "先月", "3日前"), so each cue is still written once, in
``temporal_dates`` / ``temporal_periods`` / ``temporal_relative``, and every language gets its windows. The rules
of each script are in their own module: ``temporal_latin``, ``temporal_scripts``, ``temporal_cjk``; the month
and weekday names they read in ``nodes/text/calendar/names``.

No language detection: a question's language cannot be told reliably from eight words, and a date written in
one language inside a question in another ("what did I say on 8. Mai 2023?") is still a date. So only what
cannot be an English or Japanese word is read: a month name next to a day number, a year or a preposition of
its own language ("en mayo", "im Mai"), whole phrases ("la semana pasada"), and counts before a unit and that
language's "ago". "Mayo" in "I bought mayo" and "Mars" in "life on Mars" stay as they are; so does French
"hier", which is German and Dutch for "here". Japanese text is left alone: the Chinese words rewritten here
are not Japanese ones (前年, "the previous year" in Japanese, is not read as Chinese "the year before last").
"""

from __future__ import annotations

from . import temporal_cjk, temporal_latin, temporal_scripts
from .temporal_cjk import CJK_PHRASES
from .temporal_latin import (DAY_WORDS, LOOKALIKE_MONTHS, LOOKALIKE_WEEKDAYS, MONTHS, POINTER_WORDS, SPAN_WORDS,
                             WEEKDAY_WORDS)
from .temporal_scripts import names_time_in_other_scripts

__all__ = ["CJK_TIME_WORDS", "DAY_WORDS", "LOOKALIKE_MONTHS", "LOOKALIKE_WEEKDAYS", "MONTHS", "POINTER_WORDS",
           "SPAN_WORDS", "WEEKDAY_WORDS", "names_time_in_other_scripts", "to_cue_language"]

CJK_TIME_WORDS = CJK_PHRASES + (
    "요일", "일 전", "주 전", "달 전", "개월 전", "년 전", "星期", "礼拜", "禮拜", "周末", "週末", "天前", "个月前", "個月前", "年前",
    "ที่แล้ว", "назад")


def to_cue_language(text: str) -> str:
    """``text`` (NFKC, lower case) with the time words of the languages above in English or Japanese."""
    text = temporal_latin.to_english(text)
    if text.isascii():
        return text
    return temporal_cjk.to_japanese(temporal_scripts.to_english(text))
