"""Building the embedded vector store's indexes when enough points wait for them (a maintenance step).

qdrant-edge indexes only when asked; until then a new point is found by an exact scan of its user's points:
correct, and slow once a user has tens of thousands of turn and passage points (at 10,000 memories with long
replies the scan was the largest single cost of a recall). The maintenance graph and a file ingest call
``build_due_indexes``: a collection is indexed once ``settings.vector_index_after`` points wait unindexed beyond
what the last build left (the engine leaves small segments to exact scans by design, so those are not owed).
A Qdrant server (``QDRANT_URL``) indexes in the background by itself and is left alone.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from .maintenance_state import load_state, update_state

log = logging.getLogger("lumina.maintenance")
STATE_KEY = "vector_indexes"  # collection -> points left unindexed by its last build


def build_due_indexes(services, *, force: bool = False) -> dict[str, Any]:
    """Index every collection that is due (or all, ``force``); what was built, and what each collection has left."""
    left_after = dict(load_state(services).get(STATE_KEY, {}))
    report: dict[str, Any] = {"built": [], "waiting": {}}
    for store in services.stores.vector_collections():
        waiting = store.unindexed()
        if waiting is None:  # the engine indexes by itself
            continue
        name = store.collection
        if not (force and waiting) and waiting - int(left_after.get(name, 0)) < services.settings.vector_index_after:
            report["waiting"][name] = waiting
            continue
        started = time.perf_counter()
        store.optimize()
        left_after[name] = store.unindexed() or 0
        built = {"collection": name, "points": waiting, "left_unindexed": left_after[name],
                 "seconds": round(time.perf_counter() - started, 2)}
        log.info("vector index built %s", built)
        report["built"].append(built)
    if report["built"]:
        update_state(services, STATE_KEY, left_after, replace=True)
    return report
