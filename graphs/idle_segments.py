"""A5: a conversation that went quiet has its open segment encoded without waiting for the next message.

For the CLI's threads (one ``user:<id>`` thread per user, in ``<data_dir>/checkpoints.sqlite`` or, in server mode,
the memory's PostgreSQL: stores.places.checkpoints_open.open_checkpoints) the maintenance run flushes every
thread whose last turn is older than ``boundary_idle_seconds``: the flush archives only the turns not yet
recorded (the archive is idempotent by turn id) and the segment becomes a memory. In server mode the threads of
every process are swept, whichever wrote them. Each thread is flushed under its ``thread:<id>`` lease, which
the CLI holds for a turn on the thread: a thread being written elsewhere is skipped (reported) until the next
run. Besides the maintenance run, the sweep runs whenever the CLI opens the memory graph on the data directory
(``sweep_at_open``, setting ``idle_sweep_on_open``): a conversation left quiet is encoded by the next command
that opens the memory, cron or not. A LangGraph server keeps its threads in its own checkpointer: its timer
(graphs.idle_server) flushes them instead.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lumina_memory.nodes.services import Services
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.leases import MAX_NAME_CHARS, LeaseBusy, leases_of, wait_seconds
from lumina_memory.stores.leases import skipped as lease_skipped
from lumina_memory.stores.places.checkpoints_open import open_checkpoints
from lumina_memory.stores.places.checkpoints_place import THREAD_PREFIX

from .replay import thread_config


log = logging.getLogger("lumina.idle")

THREAD_LEASE = "thread:"
"""Prefix of the lease a writer of one checkpoint thread holds (``thread:<thread id>``): the sweep and a CLI turn
in another process would otherwise both append to the thread's state and flush its segment."""


def thread_lease_name(thread: str) -> str:
    """``thread:<id>``; a thread id too long for a lease name is named by its digest (names are hashed anyway)."""
    name = THREAD_LEASE + thread
    if len(name) <= MAX_NAME_CHARS:
        return name
    try:
        digest = hashlib.sha256(thread.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        raise InvalidInput("thread id", f"{thread[:40]!r} is not valid Unicode (a lone surrogate)") from None
    return THREAD_LEASE + "sha256:" + digest


def thread_lease(services: Services, thread: str, *, wait: bool | float = False):
    """The lease of a checkpoint thread (stores.leases), for a ``with`` block yielding whether it was obtained."""
    return leases_of(services).hold(thread_lease_name(thread), wait=wait)


@contextmanager
def writing_thread(services: Services, user_id: str, doing: str) -> Iterator[None]:
    """The block runs holding the lease of ``user_id``'s CLI thread, waited for as long as leases wait
    (stores.leases.DEFAULT_WAIT: a sweep's flush of the thread ends well before); LeaseBusy when still held."""
    thread = thread_config(user_id)["configurable"]["thread_id"]
    with thread_lease(services, thread, wait=True) as got:
        if not got:
            raise LeaseBusy(thread_lease_name(thread), wait_seconds(True), doing)
        yield


def flush_idle_threads(services: Services, now: float | None = None) -> dict[str, Any]:
    """Flush every idle CLI thread, each under its thread lease: a thread whose lease another worker holds (a
    turn being written there) is skipped, reported under ``skipped`` with the reason, and the others flushed."""
    now = time.time() if now is None else now
    checkpoints = open_checkpoints(services.settings, create=False)
    if checkpoints is None:
        return {"flushed": 0, "turns": 0}
    from .memory_graph import build_graph

    try:
        graph = build_graph(services, checkpointer=checkpoints.saver)
        flushed = turns_encoded = 0
        skipped: list[dict[str, Any]] = []
        for thread in checkpoints.threads():
            if not thread.startswith(THREAD_PREFIX):
                continue
            with thread_lease(services, thread) as got:
                if not got:
                    skipped.append({"thread": thread, "reason": lease_skipped(thread_lease_name(thread), False)["reason"]})
                    continue
                user_id = thread[len(THREAD_PREFIX):]
                config = thread_config(user_id)
                turns = graph.get_state(config).values.get("turns") or []  # read under the lease: the latest turns
                if not turns or now - float(turns[-1]["ts"]) < services.settings.boundary_idle_seconds:
                    continue
                graph.invoke({"flush": True}, config, context={"user_id": user_id, "respond": False})
            flushed += 1
            turns_encoded += len(turns)
        report: dict[str, Any] = {"flushed": flushed, "turns": turns_encoded}
        if skipped:
            report["skipped"] = skipped
        return report
    finally:
        checkpoints.close()


def sweep_at_open(services: Services, now: float | None = None) -> dict[str, Any] | None:
    """``flush_idle_threads`` when the memory graph opens on a data directory and ``idle_sweep_on_open`` is on
    (None when off). A failure is logged and the opening goes on: the maintenance run's sweep retries."""
    if not services.settings.idle_sweep_on_open:
        return None
    try:
        report = flush_idle_threads(services, now)
    except Exception:  # noqa: BLE001 - a store down at open must not stop the command that opened the memory
        log.exception("idle sweep at open failed; the next open or maintenance run retries")
        return None
    if report.get("flushed") or report.get("skipped"):
        log.info("idle sweep at open: flushed=%d turns=%d skipped=%d", report["flushed"], report["turns"],
                 len(report.get("skipped", [])))
    return report
