"""Temporal cues in a query → a time window on the conversation's own clock (``now_ts``, the newest turn's
time). Memories inside the window get a relevance boost; every packed item is prefixed with its date so
"when did …" questions can be answered from the context.

The cue finders, most specific first (the first that finds anything decides):
1. named days (``temporal_dates``): "3 June, 2023", 「2023年6月3日」, "2023-06-03T10:00", "6/13", holidays,
   and days counted from them ("two days after June 3", "the week of May 7", 「6月3日の翌週」);
2. named stretches (``temporal_periods``): "the first week of May", "early June", 「6月下旬」, "late 2022",
   「年末」, "last summer", 「去年の夏」, "in May", "June last year", "in 2022";
3. times counted back from now (``temporal_relative``): "last Friday", 「先週の金曜日」, "over the weekend",
   "earlier this month", "the other day", "the past two weeks", "yesterday", 「先月」, "a fortnight ago".
Questions in Spanish, French, German, Italian, Portuguese, Dutch, Korean and Chinese name their times in
their own words ("el 8 de mayo", "letzte Woche", 「지난주」, 「上个月」): ``temporal_text.normalise`` rewrites
them into the English or Japanese these finders read (``temporal_languages``); Arabic, Hindi, Thai and Russian
their relative times ("الأسبوع الماضي", "पिछले महीने", "в прошлом году").
A time named as the value of a decision ("moved the deadline to August 19", 「締め切りを8月19日にした」)
opens none (``temporal_values``). Several cues of one kind make one window spanning them ("between
August 11 and August 15"); "since X" (「X以来」「Xから」) runs from X to now.

A future cue in a question about memory ("what did I plan for next week?", 「来週の予定は？」, "tomorrow",
"next summer") asks about a plan, and plans are said before the time they name: its window (kind
``plan``) is the recent stretch of the conversation in which such a plan is usually made — 3 days back
for tomorrow, 10 for next week or a coming weekday or weekend, 30 for a coming holiday, 45 for next
month, 120 for a coming season, 365 for next year — and it yields to any past cue in the same question.

``time_cues`` also says whether the question asks for a length of time or an order of events
(``temporal_questions``). Such a question names no window of its own: "how many days between the launch
and the demo?" gets none (the answer needs each event's own date), "how many days between June 3 and
June 10?" gets the span of the two days, with each day in ``spans``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache

from .temporal_calendar import DAY, Cue, Window, local_offset, today_of
from .temporal_dates import find_dates
from .temporal_periods import find_periods
from .temporal_questions import asks_duration, asks_order
from .temporal_relative import find_relative
from .temporal_text import normalise
from .temporal_values import is_value

__all__ = ["DAY", "TimeCues", "date_label", "time_cues", "time_window"]

_FINDERS = (find_dates, find_periods, find_relative)
_SINCE_BEFORE = re.compile(r"\b(?:ever\s+)?since\s+(?:the\s+)?$")
# 「6月11日から3日間」 is three days from it, not since it.
_SINCE_AFTER = re.compile(r"\s*(?:の)?\s*(?:以来|以降|から(?![^?？。]{0,12}まで|\s*\d+\s*(?:日|週|か月|ヶ月|ヵ月|カ月|年)間))")


@dataclass(frozen=True, slots=True)
class TimeCues:
    """What a question says about time, on the conversation's clock."""

    window: Window | None
    """(start, end) timestamps to boost: the span of every time the question names, or None."""
    spans: tuple[Window, ...]
    """Each named time on its own ("between June 3 and June 10": two), so a caller can look in each."""
    kind: str | None
    """The kind of cue that set the window: date, week, month_part, year_part, season, month, year,
    weekday, weekend, week_part, relative, or plan (a future time: the window is when plans are said)."""
    asks_duration: bool
    """The question asks for a length of time ("how long", "how many days between", 「何日間」)."""
    asks_order: bool
    """The question asks which event came first ("which came first", "before or after", 「どっちが先」)."""


# "plans for the summer", "my plans for June 3", 「夏休みの予定」: a plan for a time that has come is still said before
# it, so the window opens as far back before the time as a plan for one still to come looks (temporal_relative
# and temporal_periods: 10 days for a day or a week, 45 for a month, 120 for a season, 365 for a year).
_PLANS_FOR = re.compile(r"\bplans?\s+(?:for|over|during)\s+(?:(?:the|this|my|our)\s+)?$")
_CUE_OPENING = re.compile(r"(?:for|over|during)\s+(?:(?:the|this|my|our)\s+)?")  # a span may hold its "for the"
_PLANS_FOR_AFTER = re.compile(r"\s*(?:休み|休暇)?\s*(?:の|に)\s*(?:予定|計画|プラン)")
_PLAN_LEAD_DAYS = {"season": 120, "year": 365, "year_part": 120, "month": 45, "month_part": 45}
_PLAN_LEAD_OTHER = 10


def _planned_for(text: str, cue: Cue) -> Cue:
    """``cue`` opened back to when plans for it are said, when the question asks the plans made for that time."""
    if cue.kind == "plan":
        return cue
    opening = _CUE_OPENING.match(text, cue.start)
    head = text[max(0, cue.start - 32):cue.start] + (opening.group() if opening else "")
    if not (_PLANS_FOR.search(head) or _PLANS_FOR_AFTER.match(text, cue.end)):
        return cue
    lead = _PLAN_LEAD_DAYS.get(cue.kind, _PLAN_LEAD_OTHER) * DAY
    return cue._replace(window=(cue.window[0] - lead, cue.window[1]))


def _cues(text: str, now_ts: float) -> list[Cue]:
    cues = _found_cues(text, now_ts)
    return [_planned_for(text, cue) for cue in cues]


def _found_cues(text: str, now_ts: float) -> list[Cue]:
    today = today_of(now_ts)
    values: list[Cue] = []  # read no coarser: "moved the deadline to August 19" is not "in August" either
    for find in _FINDERS:
        cues = []
        for cue in find(text, today, now_ts):
            if is_value(text, cue):
                values.append(cue)
            elif not any(cue.start < v.end and v.start < cue.end for v in values):
                cues.append(cue)
        if cues:
            past = [cue for cue in cues if cue.kind != "plan"]
            return past or cues
    return []


def _window(text: str, cues: list[Cue], now_ts: float) -> Window | None:
    if not cues:
        return None
    start, end = min(c.window[0] for c in cues), max(c.window[1] for c in cues)
    if len(cues) == 1 and cues[0].kind != "plan":
        cue = cues[0]
        if _SINCE_BEFORE.search(text, max(0, cue.start - 20), cue.start) or text.startswith("since", cue.start) \
                or _SINCE_AFTER.match(text, cue.end):
            end = max(end, now_ts + DAY)
    return start, end


def _on_local_clock(text: str, now_ts: float, zone: str) -> tuple[list[Cue], Window | None]:
    """The cues and window of ``text`` with ``zone``'s days: computed on the user's wall clock (epoch seconds
    shifted by the zone's offset at ``now_ts``), shifted back."""
    shift = local_offset(now_ts, zone)
    cues = _cues(text, now_ts + shift)
    window = _window(text, cues, now_ts + shift)
    back = [c._replace(window=(c.window[0] - shift, c.window[1] - shift)) for c in cues]
    return back, None if window is None else (window[0] - shift, window[1] - shift)


def time_cues(query: str, now_ts: float, zone: str = "UTC") -> TimeCues:
    """The time a question names (as ``time_window``) and whether it asks a duration or an order."""
    text = normalise(query)
    cues, window = _on_local_clock(text, now_ts, zone)
    return TimeCues(
        window=window,
        spans=tuple(c.window for c in cues),
        kind=cues[0].kind if cues else None,
        asks_duration=asks_duration(text),
        asks_order=asks_order(text),
    )


def window_and_rest(query: str, now_ts: float, zone: str = "UTC") -> tuple[Window | None, str]:
    """``time_window`` of ``query``, and the query (normalised) without the words of its time cues: "Where was John
    between August 11 and 15?" leaves "where was john between ?", which asks nothing besides when."""
    text = normalise(query)
    cues, window = _on_local_clock(text, now_ts, zone)
    for cue in sorted(cues, key=lambda c: c.start, reverse=True):
        text = f"{text[:cue.start]} {text[cue.end:]}"
    return window, text


def time_window(query: str, now_ts: float, zone: str = "UTC") -> Window | None:
    """The span of time the query points at, or None (see the module's docstring for the cues); its days are
    ``zone``'s (the user's ``LUMINA_TIMEZONE``)."""
    return _on_local_clock(normalise(query), now_ts, zone)[1]


def date_label(ts: float, zone: str = "UTC") -> str:
    """The day ``ts`` falls on in ``zone`` (the user's ``LUMINA_TIMEZONE``), ``YYYY-MM-DD``."""
    # By day number: the packer labels dozens of candidate turns per query, a handful of days.
    return _day_label(math.floor((ts + local_offset(ts, zone)) / 86_400))


@lru_cache(maxsize=65_536)
def _day_label(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, tz=timezone.utc).strftime("%Y-%m-%d")
