"""A5 on a LangGraph server (`langgraph dev`, LangGraph Platform): a timer flushes quiet threads' open segments.

A server keeps the memory graph's threads in its own checkpointer, out of reach of the data directory's sweep
(graphs.idle_segments). ``langgraph.json`` mounts ``app`` (``http.app``: the supported way to add a lifespan to a
LangGraph server), whose lifespan runs ``sweep_forever``: every ``idle_sweep_seconds`` it lists the server's idle
``lumina_memory`` threads through the SDK's in-process client, and each whose last turn and last write are both
older than ``boundary_idle_seconds`` gets a ``{"flush": true}`` run as its owner (``respond`` off). The server runs one run
per thread at a time: the flush is created with ``multitask_strategy="reject"``, so a thread a run is writing
(busy, or taken between the listing and the flush) is left to the next round, as the data directory's sweep
leaves a thread whose ``thread:<id>`` lease another worker holds. A LangGraph cron does not fit this job: it runs
on a schedule whether or not the conversation went quiet, and would cut a live conversation's segment.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

log = logging.getLogger("lumina.idle")

GRAPH = "lumina_memory"
PAGE = 100


def last_turn_ts(values: dict[str, Any] | None) -> float | None:
    turns = (values or {}).get("turns") or []
    return float(turns[-1]["ts"]) if turns else None


def written_at(thread: dict[str, Any]) -> float:
    """When the server last wrote the thread (epoch seconds; 0 when it does not say)."""
    stamp = thread.get("updated_at")
    if isinstance(stamp, datetime):
        return stamp.timestamp()
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


async def sweep_server_threads(client, *, idle_seconds: float, now: float | None = None) -> dict[str, Any]:
    """One round: flush every idle ``lumina_memory`` thread whose open segment's last turn is older than
    ``idle_seconds``; what was flushed and what was left for the next round (with why)."""
    now = time.time() if now is None else now
    flushed: list[str] = []
    skipped: list[dict[str, str]] = []
    offset = 0
    while True:
        page = await client.threads.search(metadata={"graph_id": GRAPH}, status="idle", limit=PAGE, offset=offset)
        for thread in page:
            values = thread.get("values") or {}
            last = last_turn_ts(values)
            owner = values.get("owner")
            if last is None or not owner:
                continue
            # Quiet on both clocks: the conversation's (its last turn) and the server's (its last write), so a
            # transcript of old turns being imported is not cut between two of its runs.
            if now - max(last, written_at(thread)) < idle_seconds:
                continue
            try:
                await client.runs.wait(thread["thread_id"], GRAPH, input={"flush": True},
                                       context={"user_id": owner, "respond": False}, multitask_strategy="reject")
            except Exception as exc:  # noqa: BLE001 - the SDK's HTTP error: a run took the thread first
                skipped.append({"thread": thread["thread_id"], "reason": f"{type(exc).__name__}: {exc}"[:200]})
                continue
            flushed.append(thread["thread_id"])
        if len(page) < PAGE:
            break
        offset += PAGE
    if flushed or skipped:
        log.info("idle sweep flushed=%d skipped=%d", len(flushed), len(skipped))
    return {"flushed": flushed, "skipped": skipped}


async def sweep_forever(client, *, every: float, idle_seconds: float) -> None:
    """``sweep_server_threads`` every ``every`` seconds until cancelled; a failed round is logged, not fatal."""
    while True:
        try:
            await sweep_server_threads(client, idle_seconds=idle_seconds)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - one failed round (a store down) must not end the timer
            log.exception("idle sweep round failed; the next round retries")
        await asyncio.sleep(every)


@asynccontextmanager
async def lifespan(app):
    from langgraph_sdk import get_client

    from lumina_memory.stores.settings import default_settings

    settings = default_settings()
    task = None
    if settings.idle_sweep_seconds > 0:
        task = asyncio.create_task(sweep_forever(get_client(), every=settings.idle_sweep_seconds,
                                                 idle_seconds=settings.boundary_idle_seconds))
        log.info("idle sweep every %gs (idle after %gs)", settings.idle_sweep_seconds, settings.boundary_idle_seconds)
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass


def _app():
    from starlette.applications import Starlette

    return Starlette(lifespan=lifespan)


app = _app()
"""What ``langgraph.json``'s ``http.app`` mounts: no routes of its own, only the lifespan above."""
