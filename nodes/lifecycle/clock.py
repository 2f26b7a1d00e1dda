"""The lifecycle's calendar: batch days in the configured zone, and a new memory's first memory_days.

A *batch day* is the local date whose ``schedule_hour`` began the current batch period: 02:59 on 2 March in
Asia/Tokyo still belongs to 1 March's batch day when the batch runs at 03:00. Its number (``date.toordinal()``)
is what ``archived_on`` and ``today`` hold, so archive ages are whole days whatever time the batch really ran.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

DAY_SECONDS = 86_400.0


def _local(moment: datetime, timezone: str) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("lifecycle times must be timezone-aware (the notes: never naive datetimes)")
    return moment.astimezone(ZoneInfo(timezone))


def batch_day(moment: datetime, schedule_hour: int, timezone: str) -> int:
    """The number of the batch day ``moment`` falls in."""
    local = _local(moment, timezone)
    day = local.date() if local.hour >= schedule_hour else local.date() - timedelta(days=1)
    return day.toordinal()


def next_batch_time(moment: datetime, schedule_hour: int, timezone: str) -> datetime:
    """The first batch time after ``moment`` (the notes: same day if before the hour, else the next day)."""
    local = _local(moment, timezone)
    day = local.date() if local.hour < schedule_hour else local.date() + timedelta(days=1)
    return datetime(day.year, day.month, day.day, schedule_hour, tzinfo=ZoneInfo(timezone))


def initial_memory_days(created: datetime, schedule_hour: int, timezone: str) -> float:
    """The notes' calculate_initial_memory_days: days from creation to the next batch (18:00 → 0.375 at 03:00).
    Measured in real elapsed time (through UTC), so a daylight-saving change is counted as it happened."""
    # aware datetimes sharing a tzinfo subtract as wall clocks; through UTC they subtract as real time
    elapsed = next_batch_time(created, schedule_hour, timezone).astimezone(UTC) - created.astimezone(UTC)
    return elapsed.total_seconds() / DAY_SECONDS
