"""Whether a turn says when something happened ("I went to a support group yesterday", 「先週」), not only what.

A mention of time is looked for, not its value (the temporal cue finders read values, in the question only): a
word-set test on a short turn (~10 µs), kept with the user's index (``UserTurns.time_mentions``), which takes a
long reply to name a time without reading it (nearly every one does, in passing).
"""

from __future__ import annotations

import re

from ..text.calendar.names import EN_MONTHS, EN_WEEKDAYS
from .temporal_languages import (CJK_TIME_WORDS, DAY_WORDS, LOOKALIKE_MONTHS, LOOKALIKE_WEEKDAYS, MONTHS, POINTER_WORDS,
                                 SPAN_WORDS, WEEKDAY_WORDS, names_time_in_other_scripts)

LONG_TURN_TOKENS = 160
"""From this many tokens a turn is long (recall_passage_min_tokens' default, where no passage cut says it)."""

_WORDS = re.compile(r"\d+(?:st|nd|rd|th)\b|[a-z]+|\d+")
# "may" alone is the verb far more often than the month: it counts only before a day number (below).
_ALONE = frozenset(
    "yesterday today tonight tomorrow recently lately ago weekend weekends".split()
    + list(EN_WEEKDAYS) + [f"{day}s" for day in EN_WEEKDAYS] + [m for m in EN_MONTHS if m != "may"]
    + [f"{n}{'th' if 11 <= n <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}" for n in range(1, 32)])
# "last week", "this summer", "a few days ago": a counted or pointed-at span (said in one text, not checked next to
# each other: close enough for a lift, and a third of a regex's cost on a long text).
_POINTERS = frozenset("last next this past coming previous earlier later since ago back".split())
_SPANS = frozenset(("day days night nights week weeks month months year years summer winter spring autumn fall "
                    "morning afternoon evening semester season").split())
_JAPANESE = ("一昨日", "昨日", "今日", "明日", "昨夜", "昨晩", "今朝", "今晩", "今夜", "先週", "先月", "去年", "昨年", "今週",
             "今月", "今年", "来週", "来月", "来年", "週末", "最近", "この前", "この間", "先日", "前回", "曜日", "曜", "日前",
             "週間前", "か月前", "ヶ月前", "カ月前", "年前", "日後", "ぶりに", "午前", "午後", "連休", "年末", "年始", "夏休み",
             "冬休み", "春休み", "お盆", "正月")
_JAPANESE_DATE = re.compile(r"[0-9０-９]{1,2}\s*月|[0-9０-９]{1,2}\s*日[にはのから]")
# The same in the other languages whose time cues are read (temporal_languages): "ayer", "letzte Woche", "vendredi",
# 「지난주」, 「上个月」.
_LETTERS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?")
_OTHER_ALONE = frozenset(MONTHS) - set(LOOKALIKE_MONTHS) | WEEKDAY_WORDS - set(LOOKALIKE_WEEKDAYS) | DAY_WORDS
_KO_ZH_DATE = re.compile(r"\d{1,2}\s*[월月]\s*\d{1,2}\s*[일日号號]|\d{4}\s*[년年]")


def mentions_time(text: str) -> bool:
    """The text names a time: a day, a date, a year, a part of the week or year, or a span counted from now."""
    lowered = text.lower()
    words = set(_WORDS.findall(lowered))
    if words & _ALONE or (words & _POINTERS and words & _SPANS):
        return True
    if any(len(w) == 4 and w[:2] in ("19", "20") for w in words) or ("may" in words and re.search(r"\bmay\s+\d", lowered)):
        return True
    if not text.isascii() and (any(w in text for w in _JAPANESE) or _JAPANESE_DATE.search(text)):
        return True
    return _names_time_in_other_languages(lowered)


def _names_time_in_other_languages(lowered: str) -> bool:
    words = set(_LETTERS.findall(lowered))
    if words & _OTHER_ALONE or (words & POINTER_WORDS and words & SPAN_WORDS):
        return True
    return not lowered.isascii() and (any(w in lowered for w in CJK_TIME_WORDS) or bool(_KO_ZH_DATE.search(lowered))
                                      or names_time_in_other_scripts(lowered))
