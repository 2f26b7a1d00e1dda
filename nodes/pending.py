"""Shared bookkeeping for the flush nodes: each applies one idempotent write to every closed segment
that has not had it yet, and marks the stage done, so a resumed run skips nothing and repeats
nothing that matters."""

from __future__ import annotations

from typing import Callable

from stores.models import SegmentRecord


def advance(state: dict, stage: str, write: Callable[[dict], dict | None]) -> dict:
    pending = state.get("pending") or []
    if not pending:
        return {}
    updated = []
    for item in pending:
        if stage in item.get("stages", []):
            updated.append(item)
            continue
        changes = write(item) or {}
        updated.append({**item, **changes, "stages": [*item.get("stages", []), stage]})
    return {"pending": updated}


def record_of(item: dict) -> SegmentRecord:
    return SegmentRecord.model_validate(item["record"])
