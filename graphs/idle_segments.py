"""A5: a conversation that went quiet has its open segment encoded without waiting for the next message.

For the CLI's threads (``<data_dir>/checkpoints.sqlite``, one ``user:<id>`` thread per user) the maintenance
run flushes every thread whose last turn is older than ``boundary_idle_seconds``: the flush archives only the
turns not yet recorded (the archive is idempotent by turn id) and the segment becomes a memory. A LangGraph
server keeps its threads in its own checkpointer: schedule a cron run of ``lumina_memory`` with
``{"flush": true}`` on the thread instead (README, "Memories that fade").
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from lumina_memory.nodes.services import Services
from lumina_memory.stores.places.checkpoints_place import FILE, THREAD_PREFIX

from .replay import thread_config


def flush_idle_threads(services: Services, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    path = services.settings.resolved_data_dir() / FILE
    if not path.exists():
        return {"flushed": 0, "turns": 0}
    from .memory_graph import build_graph

    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA secure_delete=ON")
    try:
        graph = build_graph(services, checkpointer=SqliteSaver(conn))
        try:
            threads = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
        except sqlite3.OperationalError:  # nothing was ever checkpointed
            return {"flushed": 0, "turns": 0}
        flushed = turns_encoded = 0
        for thread in threads:
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
        conn.close()
