"""The agents' benches' memory: Services and an ``AgentMemory`` on one data dir, closed on every exit path.

The embedded mid-term tier is a private redis-server that is daemonized on purpose (it outlives the process that
started it, so processes of one data dir share it: stores.redis_server). A benchmark owns its data dir, so what it
started it stops: the memory, the Services, then the data dir's private Redis (and with it its watchdog), on a
return, an exception, Ctrl-C, or SIGTERM (turned into SystemExit while the memory is open, so the same ``finally``
runs). A Redis that was already answering on the data dir before the bench opened it belongs to someone else and
is left running; ``REDIS_URL`` deployments have no private server.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

SIGTERM_EXIT = 128 + signal.SIGTERM


@contextlib.contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """SIGTERM raises SystemExit in the main thread while inside (so ``finally`` blocks run); elsewhere a no-op:
    signal handlers can only be set from the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(SIGTERM_EXIT))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def opened_services(settings) -> Iterator[Any]:
    """Services on ``settings``; closed, and the data dir's private Redis stopped if this started it."""
    from lumina_memory.nodes.services import open_services
    from lumina_memory.stores.redis_server import server_status, stop_server

    private = settings.redis_url is None
    ours = private and not server_status(settings)["running"]
    with exit_on_sigterm():
        try:
            services = open_services(settings)
            try:
                yield services
            finally:
                services.close()
        finally:
            if ours:
                stop_server(settings)


@contextlib.contextmanager
def opened_memory(settings, clock: Callable[[], float], **memory_kw) -> Iterator[tuple[Any, Any]]:
    """(Services, AgentMemory on them with the run's ``clock``); the memory's pool closed first."""
    from lumina_memory.nodes.agents.memory import AgentMemory

    with opened_services(settings) as services:
        memory = AgentMemory(services, clock=clock, **memory_kw)
        try:
            yield services, memory
        finally:
            memory.close()
