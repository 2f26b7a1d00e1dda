"""Settings of the operations' cost records (issue 49; nodes.costs, stores.costs_sql): a group of LuminaSettings,
read from the environment with it (``LUMINA_COSTS_RECORD`` …)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CostSettings(BaseModel):
    # --- what each write and recall costs (issue 49) -------------------------------------------
    costs_record: bool = Field(
        default=True,
        description="Time each write, flush, recall, priming and reply by stage, count its model calls and "
        "tokens, log one `lumina.costs` line per operation and keep the record for `lumina-memory report` "
        "(bench/results/costs_overhead.json: the recorder's cost beside a recall or a write).",
    )
    costs_keep_days: float = Field(
        default=14, gt=0, le=3_650,
        description="Cost records older than this are removed whenever a batch of them is written (a "
        "chat's few thousand operations a day stay a few MB).",
    )
    costs_batch_rows: int = Field(
        default=200, ge=1, le=100_000,
        description="Cost records are written in one transaction per this many (one per recall would cost "
        "an fsync each on the embedded file); the rest at close or after costs_batch_seconds.",
    )
    costs_batch_seconds: float = Field(
        default=10.0, ge=0, le=3_600,
        description="A waiting cost record is written with the next one after this long, so another "
        "process's `report` sees a quiet process's records.",
    )
