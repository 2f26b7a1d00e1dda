"""The daily batch's fallback (F9): a user's conversation turn runs the batch days that user missed.

The notes schedule the batch at 03:00 and, for when the scheduler did not run (machine off, asleep, no cron),
have the next hook check the last run and run the batch then if ``interval_hours`` (24) have passed. Here the
last run is the user's last completed batch day (the archive's ``lifecycle_days``); the time since it is measured
from that day's scheduled time (``schedule_hour`` in ``timezone``), so a batch that ran late does not push the
next one later.

A user's turn (``batch_fallback``, called by the memory graph on a user turn it answers) asks ``owed``: one cached
lookup per user and batch day, one small archive query when the day changed. When the batch is owed it runs
``run_lifecycle`` for that user alone in a daemon thread under the batch's lease (``lifecycle``, the one
the maintenance graph's batch steps hold): the reply does not wait for it, a cron's batch running at the same
time makes this one skip (or find nothing due), and each (user, batch day) starts at most once per process. A
never-batched user is left to the scheduled batch: their first memories' memory_days already count up to it, and a
first batch run on a new user's first turn would archive their only memory by the level ratios.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from lumina_memory.stores.leases import leases_of

from .clock import batch_day

log = logging.getLogger("lumina.lifecycle")

LEASE = "lifecycle"
"""The daily batch's lease (graphs.maintenance_graph.STEP_LEASES holds it for every batch step)."""


class _Started:
    """Per Services: the (user, batch day) pairs already looked at, and the threads started."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.checked: dict[str, int] = {}
        self.threads: list[threading.Thread] = []


_started_lock = threading.Lock()


def _state_of(services) -> _Started:
    """Kept in ``services.built`` (helpers built once per Services): it lives and goes with the Services."""
    with _started_lock:
        return services.built.setdefault("lifecycle_fallback", _Started())


def scheduled_time(day: int, schedule_hour: int, timezone: str) -> float:
    """Epoch seconds of batch day ``day``'s scheduled run (its date at ``schedule_hour``, local)."""
    d = date.fromordinal(day)
    return datetime(d.year, d.month, d.day, schedule_hour, tzinfo=ZoneInfo(timezone)).timestamp()


def owed(services, user_id: str, now: float) -> dict[str, Any] | None:
    """Why ``user_id``'s batch is owed at ``now`` ({"last_day", "hours_since"}), or None when it is not (done
    today, never batched, the fallback off, or not yet ``interval_hours`` past the last day's scheduled time)."""
    params = services.settings.lifecycle
    if params.interval_hours <= 0:
        return None
    today = batch_day(datetime.fromtimestamp(now, UTC), params.schedule_hour, params.timezone)
    table = getattr(services.stores.archive, "memories", None)
    if table is None:  # an archive without the lifecycle's tables has no batch to miss
        return None
    due = table.due_users(today, [user_id])
    last = due.get(user_id)
    if last is None:  # done today (not listed), or never batched (listed with None)
        return None
    hours = (now - scheduled_time(last, params.schedule_hour, params.timezone)) / 3600.0
    if hours < params.interval_hours:
        return None
    return {"last_day": last, "today": today, "hours_since": round(hours, 2), "missed_days": today - last}


def _run(services, user_id: str, now: float, why: dict[str, Any]) -> None:
    from .run import run_lifecycle

    try:
        with leases_of(services).hold(LEASE) as got:
            if not got:
                log.info("lifecycle fallback user=%s skipped: another worker holds the lease %r", user_id, LEASE)
                return
            report = run_lifecycle(services, now=now, user_id=user_id)
        log.info("lifecycle fallback user=%s ran %d missed day(s) (last completed day %s, %.1f h since its "
                 "scheduled time)", user_id, report.get("days", 0), why["last_day"], why["hours_since"])
    except Exception:  # noqa: BLE001 - a background batch must not take the process down; the next turn retries
        log.exception("lifecycle fallback user=%s failed; the next scheduled or fallback run retries", user_id)
        with _state_of(services).lock:
            _state_of(services).checked.pop(user_id, None)


def catch_up_if_owed(services, user_id: str, now: float) -> dict[str, Any] | None:
    """Start the user's missed batch days in the background when owed (``owed``); at most once per user and
    batch day in this process. What was started ({"user_id", "last_day", ...}), or None."""
    params = services.settings.lifecycle
    if params.interval_hours <= 0:
        return None
    today = batch_day(datetime.fromtimestamp(now, UTC), params.schedule_hour, params.timezone)
    state = _state_of(services)
    with state.lock:
        if state.checked.get(user_id) == today:
            return None
        state.checked[user_id] = today
    why = owed(services, user_id, now)
    if why is None:
        return None
    thread = threading.Thread(target=_run, args=(services, user_id, now, why), daemon=True,
                              name=f"lumina-lifecycle-fallback-{user_id}")
    with state.lock:
        state.threads = [t for t in state.threads if t.is_alive()] + [thread]
    log.info("lifecycle fallback user=%s: batch owed (%s missed day(s)); running it in the background",
             user_id, why["missed_days"])
    thread.start()
    return {"user_id": user_id, **why}


def wait_for_catch_ups(services, timeout: float | None = None) -> int:
    """Wait for this Services' fallback batches (tests, a process about to close its stores); how many ran."""
    state = _state_of(services)
    with state.lock:
        threads = list(state.threads)
    for thread in threads:
        thread.join(timeout)
    return len(threads)


__all__ = ["LEASE", "catch_up_if_owed", "owed", "scheduled_time", "wait_for_catch_ups"]
