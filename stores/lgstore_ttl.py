"""Time-to-live of the LangGraph store's items (stores.langgraph_store): LangGraph's ``TTLConfig`` checked,
a put's ``ttl`` checked, and the sweeper thread that deletes what expired.

TTLs are in minutes, as everywhere in LangGraph. ``default_ttl`` applies to a put that does not say
``ttl=`` (``ttl=None`` says "never expires"); ``refresh_on_read: true`` lets reads that ask for it
(``refresh_ttl``, whose default is this setting) restart the TTL of what they return, as LangGraph's
SQLite store reads it (not set: reads never refresh); ``omit_expired: true`` hides expired items from
reads before a sweep deletes them; ``sweep_interval_minutes`` is the sweeper's period (default 5).
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from langgraph.store.base import TTLConfig

from .errors import InvalidInput

log = logging.getLogger("lumina.store")

DEFAULT_SWEEP_MINUTES = 5.0
_FLAGS = ("refresh_on_read", "omit_expired")
_MINUTES = ("default_ttl", "sweep_interval_minutes")


def check_config(config: Mapping[str, Any] | None) -> TTLConfig | None:
    """``config`` as a TTLConfig (a dict the caller may still change, as LangGraph's stores allow), or
    InvalidInput naming ``ttl`` for an unknown key or a value of the wrong kind."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise InvalidInput("ttl", f"must be a mapping (LangGraph's TTLConfig), got {type(config).__name__}")
    unknown = sorted(set(config) - {*_FLAGS, *_MINUTES})
    if unknown:
        raise InvalidInput("ttl", f"unknown keys {unknown}; TTLConfig has {', '.join((*_FLAGS, *_MINUTES))}")
    for flag in _FLAGS:
        if flag in config and not isinstance(config[flag], bool):
            raise InvalidInput("ttl", f"{flag} must be true or false, got {config[flag]!r}")
    for key in _MINUTES:
        if config.get(key) is not None:
            check_minutes(config[key], f"ttl.{key}")
    return dict(config)  # type: ignore[return-value]


def check_minutes(minutes: Any, field: str = "ttl") -> float:
    """A TTL in minutes: a finite number above zero."""
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not math.isfinite(minutes) or minutes <= 0:
        raise InvalidInput(field, f"must be a number of minutes above zero, got {minutes!r}")
    return float(minutes)


class Sweeper:
    """A daemon thread calling ``sweep`` every ``interval`` minutes until stopped — the thread LangGraph's
    SqliteStore and PostgresStore run, behind the same ``start``/``stop`` contract."""

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, interval_minutes: float) -> concurrent.futures.Future[None]:
        """Start sweeping (once: a running sweeper keeps its period). The future ends when the sweeper
        stops; cancelling it stops the sweeper."""
        check_minutes(interval_minutes, "sweep_interval_minutes")
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        with self._guard:
            if self.running:
                return future
            self._stop.clear()
            thread = threading.Thread(target=self._loop, args=(interval_minutes * 60.0, future),
                                      daemon=True, name="lumina-store-ttl-sweeper")
            self._thread = thread
            thread.start()
        log.info("store TTL sweeper started (every %s min)", interval_minutes)
        return future

    def _loop(self, interval_s: float, future: concurrent.futures.Future[None]) -> None:
        while not self._stop.wait(interval_s):
            try:
                swept = self._sweep()
                if swept:
                    log.info("store TTL sweep deleted %d expired items", swept)
            except Exception:  # a failed sweep (a store down) is retried at the next period
                log.exception("store TTL sweep failed")
        if future.set_running_or_notify_cancel():
            future.set_result(None)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the thread; True once it has ended (or was not running), False if ``timeout`` ran out."""
        with self._guard:
            thread = self._thread
            self._stop.set()
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        if thread.is_alive():
            log.warning("store TTL sweeper did not stop within %s s", timeout)
            return False
        with self._guard:
            if self._thread is thread:
                self._thread = None
        return True
