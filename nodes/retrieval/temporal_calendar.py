"""Calendar arithmetic for the temporal cues: whole days and the windows they make. The cues compute on a
"local epoch" (the user's wall clock read as if it were UTC: ``local_offset``), so a day is the user's day in
``LUMINA_TIMEZONE``; nodes.retrieval.temporal shifts the windows back. One place decides what a week, a weekend,
a season or a part of a month is, so every cue module reads them alike.

Conventions: weeks run Monday to Sunday; a weekend is Saturday and Sunday; seasons are the northern
meteorological ones (spring March–May, summer June–August, autumn September–November, winter
December–February)."""

from __future__ import annotations

import calendar
import math
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import NamedTuple
from zoneinfo import ZoneInfo

DAY = 86_400.0
Window = tuple[float, float]
Days = tuple[date, date]  # first and last day, both inclusive


class Cue(NamedTuple):
    """One time the query names: its window, what kind of cue it was, and where it sits in the text."""

    kind: str
    window: Window
    start: int
    end: int


@lru_cache(maxsize=64)
def zone_of(name: str) -> ZoneInfo:
    return ZoneInfo(name)


@lru_cache(maxsize=65_536)
def _offset_in_hour(name: str, hour: int) -> float:
    return datetime.fromtimestamp(hour * 3600, tz=zone_of(name)).utcoffset().total_seconds()


def local_offset(ts: float, zone: str = "UTC") -> float:
    """Seconds ``zone``'s wall clock is ahead of UTC at ``ts`` (summer time included). Looked up once per hour
    of time: labels are made for dozens of turns per query."""
    if zone == "UTC":
        return 0.0
    return _offset_in_hour(zone, math.floor(ts / 3600))


def today_of(now_ts: float) -> date:
    return datetime.fromtimestamp(now_ts, tz=timezone.utc).date()


def day_start(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp()


def days_window(first: date, last: date | None = None, slack: int = 1) -> Window:
    """From the start of ``first`` to the end of ``last``, widened by ``slack`` days each side: what was
    said on a day is often about the day before, and the question's calendar and the conversation's
    clock can sit a time zone apart."""
    last = last or first
    return day_start(first - timedelta(days=slack)), day_start(last + timedelta(days=slack + 1))


def recent_window(now_ts: float, days_back: float) -> Window:
    return now_ts - days_back * DAY, now_ts + DAY


def safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:  # 31 June, 29 February of a common year, a month 13: not a date
        return None


def month_days(year: int, month: int) -> Days:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def add_months(year: int, month: int, count: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + count
    return index // 12, index % 12 + 1


def latest_year_of(month: int, day: int, today: date) -> int:
    """The year of the most recent ``month``/``day`` not after ``today``: a date said without its year
    is one that has been (memories are of the past), not next year's."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def week_days(day: date) -> Days:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def latest_weekday(weekday: int, today: date) -> date:
    """The most recent ``weekday`` strictly before today ("on Friday" said on a Friday is a week ago:
    today has its own word)."""
    return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)


def weekend_before(day: date) -> Days:
    """The weekend that ended before ``day``'s own: on a Saturday or Sunday, the one a week earlier."""
    saturday = day - timedelta(days=day.weekday() + 2)
    return saturday, saturday + timedelta(days=1)


def weekend_after(day: date) -> Days:
    """The first weekend that begins after ``day``'s own: on a Saturday or Sunday, the next one."""
    saturday = day + timedelta(days=(5 - day.weekday()) % 7 or 7)
    return saturday, saturday + timedelta(days=1)


def nearest_weekend(day: date) -> Days:
    if day.weekday() >= 5:
        saturday = day - timedelta(days=day.weekday() - 5)
        return saturday, saturday + timedelta(days=1)
    return weekend_before(day) if day.weekday() <= 1 else weekend_after(day)


def latest_weekend(today: date, ended: bool) -> Days:
    """The most recent weekend that has begun by today, or (``ended``) that is over before today."""
    if today.weekday() >= 5 and not ended:
        return nearest_weekend(today)
    return weekend_before(today)


SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}


def season_days(season: str, start_year: int) -> Days:
    """The season that begins in ``start_year`` (a winter runs on into the next year)."""
    first = date(start_year, SEASON_START[season], 1)
    end_year, end_month = add_months(start_year, SEASON_START[season], 2)
    return first, month_days(end_year, end_month)[1]


def season_of_year(season: str, year: int, today: date) -> Days:
    """A season named with its year. A winter touches two years: "winter 2022", 「去年の冬」 is the one
    that began in December of that year once it has begun, else the one whose January falls in it."""
    if season == "winter" and date(year, 12, 1) > today:
        return season_days(season, year - 1)
    return season_days(season, year)


def latest_season(season: str, today: date, exclude_current: bool) -> Days:
    """The most recent ``season`` that has begun by today; with ``exclude_current`` ("last summer"),
    the most recent one that is over."""
    for year in (today.year, today.year - 1, today.year - 2):
        first, last = season_days(season, year)
        if first <= today and not (exclude_current and last >= today):
            return first, last
    raise AssertionError("a season recurs every year")


def nearest_season(season: str, today: date) -> Days:
    """"this summer": the one under way, else the nearer of the last one and the next one."""
    past = latest_season(season, today, exclude_current=False)
    if past[1] >= today:
        return past
    upcoming = season_days(season, past[0].year + 1)
    return upcoming if (upcoming[0] - today) < (today - past[1]) else past


# Parts of a month (上旬 1–10, 中旬 11–20, 下旬 21–end) and of a year, by the words people use for them.
MONTH_PARTS = {"early": (1, 10), "mid": (11, 20), "late": (21, 31), "first_half": (1, 15), "second_half": (16, 31)}
YEAR_PARTS = {"start": (1, 2), "early": (1, 4), "mid": (5, 8), "late": (9, 12), "end": (11, 12),
              "first_half": (1, 6), "second_half": (7, 12)}


def month_part_days(year: int, month: int, part: str) -> Days:
    first_day, last_day = MONTH_PARTS[part]
    last = month_days(year, month)[1]
    return date(year, month, first_day), date(year, month, min(last_day, last.day))


def year_part_days(year: int, part: str) -> Days:
    first_month, last_month = YEAR_PARTS[part]
    return date(year, first_month, 1), month_days(year, last_month)[1]
