"""A5: a conversation that went quiet has its open segment encoded without waiting for the next message.

For the CLI's threads (one ``user:<id>`` thread per user, in ``<data_dir>/checkpoints.sqlite`` or, in server mode,
the memory's PostgreSQL: stores.places.checkpoints_place.open_checkpoints) the maintenance run flushes every
thread whose last turn is older than ``boundary_idle_seconds``: the flush archives only the turns not yet
recorded (the archive is idempotent by turn id) and the segment becomes a memory. In server mode the threads of
every process are swept, whichever wrote them. A LangGraph server keeps its threads in its own checkpointer:
schedule a cron run of ``lumina_memory`` with ``{"flush": true}`` on the thread instead (README, "Memories that
fade").
"""

from __future__ import annotations

import time
from typing import Any

from lumina_memory.nodes.services import Services
from lumina_memory.stores.places.checkpoints_place import THREAD_PREFIX, open_checkpoints

from .replay import thread_config


def flush_idle_threads(services: Services, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    checkpoints = open_checkpoints(services.settings, create=False)
    if checkpoints is None:
        return {"flushed": 0, "turns": 0}
    from .memory_graph import build_graph

    try:
        graph = build_graph(services, checkpointer=checkpoints.saver)
        flushed = turns_encoded = 0
        for thread in checkpoints.threads():
            if not thread.startswith(THREAD_PREFIX):
                continue
            user_id = thread[len(THREAD_PREFIX):]
            config = thread_config(user_id)
            turns = graph.get_state(config).values.get("turns") or []
            if not turns or now - float(turns[-1]["ts"]) < services.settings.boundary_idle_seconds:
                continue
            graph.invoke({"flush": True}, config, context={"user_id": user_id, "respond": False})
            flushed += 1
            turns_encoded += len(turns)
        return {"flushed": flushed, "turns": turns_encoded}
    finally:
        checkpoints.close()
