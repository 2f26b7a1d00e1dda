"""Shared bookkeeping for the flush nodes: each applies one idempotent write to every closed segment
that has not had it yet, and marks the stage done, so a resumed run skips nothing and repeats
nothing that matters.

A derived tier (mid-term, long-term, graph) that is unavailable does not stop the flush: its stage is
marked ``deferred`` on the segment, the segment still reaches the archive, and the archive's outbox
keeps the owed write until nodes.recovery applies it (when the store is back, at start-up, or on a
re-run). The archive itself is never deferred: it is the durable base everything is rebuilt from.
"""

from __future__ import annotations

import logging
from typing import Callable

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.models import SegmentRecord

log = logging.getLogger("lumina.recovery")

DEFERRABLE = ("redis", "qdrant", "graph")
"""Stages whose store may be down without losing anything: the archive's outbox remembers them."""
STAGES = ("redis", "duckdb", "qdrant", "graph")
TIER_OF_STAGE = {"redis": "mid-term", "duckdb": "archive", "qdrant": "long-term", "graph": "graph"}


def note_degraded(services, stage: str, exc: Exception) -> None:
    """Remember that a tier is down (for stats/doctor); recovery clears it once the tier takes writes."""
    degraded = getattr(services, "degraded", None)
    if degraded is not None:
        degraded[TIER_OF_STAGE.get(stage, stage)] = f"{type(exc).__name__}: {exc}"[:300]


def advance(
    state: dict,
    stage: str,
    write: Callable[[dict], dict | None] | None = None,
    write_all: Callable[[list[dict]], list[dict | None]] | None = None,
    outbox: tuple[object, str] | None = None,
    on_deferred: Callable[[str, StoreUnavailable], None] | None = None,
) -> dict:
    """Apply ``write`` to each closed segment still missing ``stage`` — or ``write_all`` to all of them
    at once (a transcript batch closes many: one transaction instead of one per segment).

    ``outbox``: (archive, user_id) — after the stage, record in the archive's outbox what each segment
    still owes (nothing: its row goes). The last stage of the chain passes it."""
    pending = state.get("pending") or []
    if not pending:
        return {}
    todo = [item for item in pending if stage not in item.get("stages", [])]
    try:
        if write_all is not None:
            changes = dict(zip((id(item) for item in todo), write_all(todo) if todo else []))
        else:
            changes = {id(item): write(item) for item in todo}
    except StoreUnavailable as exc:
        if stage not in DEFERRABLE:
            raise
        changes = {id(item): {"deferred": [*item.get("deferred", []), stage]} for item in todo}
        log.warning("tier=%s unavailable, %d segment(s) wait in the outbox: %s",
                    TIER_OF_STAGE[stage], len(todo), exc)
        if on_deferred is not None:
            on_deferred(stage, exc)
    updated = []
    for item in pending:
        if stage in item.get("stages", []):
            updated.append(item)
        else:
            updated.append({**item, **(changes[id(item)] or {}), "stages": [*item.get("stages", []), stage]})
    if outbox is not None and todo:
        unchanged = {id(item) for item in pending}
        settle(outbox[0], outbox[1], [item for item in updated if id(item) not in unchanged])
    return {"pending": updated}


def owed(item: dict) -> list[str]:
    """The derived writes a segment still owes: stages deferred, and stages not reached yet."""
    stages = item.get("stages", [])
    return [s for s in DEFERRABLE if s in item.get("deferred", []) or s not in stages]


def settle(archive, user_id: str, items: list[dict]) -> None:
    """Write to the archive's outbox what each item still owes (rows with nothing owed go)."""
    if items and hasattr(archive, "settle_outbox"):
        archive.settle_outbox(user_id, {item["segment_id"]: owed(item) for item in items})


def record_of(item: dict) -> SegmentRecord:
    return SegmentRecord.model_validate(item["record"])
