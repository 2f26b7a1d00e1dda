"""What the operations' cost records say together (issue 49; records from stores.costs_sql): per operation, how many
ran and failed, the paths they ran, p50/p95/mean milliseconds overall and per stage, and model calls and tokens in
all and per operation. ``stats`` and ``lumina-memory report`` show it.

Percentiles are numpy's linear interpolation between the closest ranks, over the operations that ran the stage.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .costs import DAY

ORDER = ("write", "flush", "recall", "prime", "reply", "maintain")


def spread(values: Sequence[float]) -> dict[str, float]:
    """n, p50, p95 and mean of ``values`` (milliseconds, to 0.001)."""
    array = np.asarray(values, dtype=float)
    if not array.size:
        return {"n": 0, "p50": 0.0, "p95": 0.0, "mean": 0.0}
    return {"n": int(array.size), "p50": round(float(np.percentile(array, 50)), 3),
            "p95": round(float(np.percentile(array, 95)), 3), "mean": round(float(array.mean()), 3)}


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per operation (write, flush, recall, prime, reply first, any other after): the summary of its records."""
    by_op: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_op.setdefault(record["op"], []).append(record)
    ops = [op for op in ORDER if op in by_op] + sorted(set(by_op) - set(ORDER))
    return {op: _one(by_op[op]) for op in ops}


def _one(records: list[dict[str, Any]]) -> dict[str, Any]:
    stages: dict[str, list[float]] = {}
    paths: dict[str, int] = {}
    errors: dict[str, int] = {}
    models: dict[str, dict[str, int]] = {}
    stage_calls: dict[str, dict[str, int]] = {}
    for record in records:
        for name, ms in record["stages"].items():
            stages.setdefault(name, []).append(ms)
        paths[record["path"]] = paths.get(record["path"], 0) + 1
        if record["error"]:
            errors[record["error"]] = errors.get(record["error"], 0) + 1
        for totals, part in ((models, record["models"]), (stage_calls, record.get("stage_calls") or {})):
            for name, used in part.items():
                entry = totals.setdefault(name, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
                for key in entry:
                    entry[key] += int(used.get(key, 0))
    count = len(records)
    totals = {key: sum(int(r[key]) for r in records) for key in ("calls", "input_tokens", "output_tokens")}
    return {
        "count": count, "errors": errors, "paths": paths, "ms": spread([r["ms"] for r in records]),
        "stages": {name: spread(values) for name, values in stages.items()},
        **totals, **{f"{key}_per_op": round(value / count, 3) for key, value in totals.items()},
        "models": models,
        # the model calls and tokens per operation of each stage (or part) that made any
        "stage_calls": {name: {f"{key}_per_op": round(value / count, 3) for key, value in used.items()}
                        for name, used in stage_calls.items()},
    }


def cost_summary(services: Any, since_days: float | None = None, now: float | None = None) -> dict[str, Any]:
    """The summary of the records of the last ``since_days`` (default every record kept, costs_keep_days)."""
    days = services.settings.costs_keep_days if since_days is None else since_days
    start = (time.time() if now is None else now) - days * DAY
    records = services.stores.archive.op_costs().since(start)
    return {"since_days": days, "recording": services.settings.costs_record, "operations": len(records),
            "by_op": summarize(records)}
