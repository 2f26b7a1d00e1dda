"""Shared bookkeeping for the flush nodes: each applies one idempotent write to every closed segment
that has not had it yet, and marks the stage done, so a resumed run skips nothing and repeats
nothing that matters."""

from __future__ import annotations

from typing import Callable

from stores.models import SegmentRecord


def advance(
    state: dict,
    stage: str,
    write: Callable[[dict], dict | None] | None = None,
    write_all: Callable[[list[dict]], list[dict | None]] | None = None,
) -> dict:
    """Apply ``write`` to each closed segment still missing ``stage`` — or ``write_all`` to all of them
    at once (a transcript batch closes many: one transaction instead of one per segment)."""
    pending = state.get("pending") or []
    if not pending:
        return {}
    todo = [item for item in pending if stage not in item.get("stages", [])]
    if write_all is not None:
        changes = dict(zip((id(item) for item in todo), write_all(todo) if todo else []))
    else:
        changes = {id(item): write(item) for item in todo}
    updated = []
    for item in pending:
        if stage in item.get("stages", []):
            updated.append(item)
        else:
            updated.append({**item, **(changes[id(item)] or {}), "stages": [*item.get("stages", []), stage]})
    return {"pending": updated}


def record_of(item: dict) -> SegmentRecord:
    return SegmentRecord.model_validate(item["record"])
