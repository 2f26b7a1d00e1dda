"""The agents' benches' memory: Services and an ``AgentMemory`` on one data dir, closed on every exit path.

The embedded mid-term tier is a private redis-server that is daemonized on purpose (it outlives the process that
started it, so processes of one data dir share it: stores.redis_server). A benchmark owns its data dir, so what it
started it stops: the memory, the Services, then the data dir's private Redis (and with it its watchdog), on a
return, an exception, Ctrl-C, or SIGTERM (turned into SystemExit while the memory is open, so the same ``finally``
runs: bench.sigterm). A Redis that was already answering on the data dir before the bench opened it belongs to
someone else and is left running; ``REDIS_URL`` deployments have no private server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from bench.sigterm import exit_on_sigterm


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
