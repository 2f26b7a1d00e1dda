"""Short-term memory's size and the consolidation cycle from the run's length (P2, the note's section 4.2.2).

The note's function: capacity = min(base + whole hours of the run * per hour, max) (100 under an hour, 200 for
1-2 hours, 300 from 2 hours on). The cycle shortens as the run grows, so STM never fills in one burst (a spike
of summaries): under 1 hour every 10 minutes, 1-2 hours every 5, over 2 hours every 3.
"""

from __future__ import annotations

from lumina_memory.stores.errors import InvalidInput


def _hours(params, run_hours: float | None) -> float:
    hours = params.run_hours if run_hours is None else run_hours
    if not isinstance(hours, (int, float)) or isinstance(hours, bool) or not hours > 0 or hours == float("inf"):
        raise InvalidInput("run_hours", f"must be a positive finite number of hours, got {hours!r}")
    return float(hours)


def stm_capacity(params, run_hours: float | None = None) -> int:
    """Events an agent's STM holds before consolidation must run (``run_hours`` overrides the setting)."""
    hours = _hours(params, run_hours)
    return min(params.stm_base_capacity + int(hours) * params.stm_capacity_per_hour, params.stm_max_capacity)


def consolidation_interval_seconds(params, run_hours: float | None = None) -> float:
    """Seconds of the run's clock between two consolidation cycles (the note's table, ``consolidation_minutes``
    = (under 1 h, 1-2 h, over 2 h))."""
    hours = _hours(params, run_hours)
    short, middle, long = params.consolidation_minutes
    minutes = short if hours < 1 else middle if hours <= 2 else long
    return float(minutes) * 60.0
