"""A user's capacity report (issue 49): memories per level against the ratio targets (F4), protected memories
against their cap (F8), and warnings before the caps force anything.

The ratios count as the batch counts them (nodes.lifecycle.ratios): the denominator is the user's non-protected
memories, the archive included; level k may hold ``floor(ratio × total)`` of them (all of them below
``ratio_min_memories``). The excess of a level goes one level down at the next batch and may push the level
below over in turn, so the report carries it down the way ratio enforcement does: ``forced`` is how many
memories of each level the next batch compresses (or, from level 3, archives) for the ratios alone, before
any decay by the thresholds. The protected cap is the only per-user cap a store enforces
(``max_protected_memories``); the report warns from ``capacity_warn_share`` of it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lumina_memory.stores.ids import validate_id

_SLACK = 1e-9  # as ratios._RATIO_SLACK: 0.29 × 100 is 28.999999999999996
_NEXT = {1: "compresses", 2: "compresses", 3: "archives"}


def capacity_report(services, user_id: str) -> dict[str, Any]:
    """{"user_id", "memories", "levels": {1..4: n}, "ratio_total", "ratios": [{level, count, share, target,
    allowed, forced}], "protected": {count, cap, share}, "undo_entries", "warnings": [text]}."""
    user_id = validate_id(user_id, "user_id")
    params = services.settings.lifecycle
    table = services.stores.archive.memories
    arrays, ids, _seqs = table.load([user_id])
    level = np.asarray(arrays.get("level", []), dtype=np.int64)
    protected = np.asarray(arrays.get("protected", []), dtype=bool)
    free = level[~protected]
    total = int(len(free))
    warnings: list[str] = []
    ratios, carried = [], 0
    for k, target in ((1, params.level1_ratio), (2, params.level2_ratio), (3, params.level3_ratio)):
        count = int((free == k).sum())
        allowed = total if total < params.ratio_min_memories else int(math.floor(target * total + _SLACK))
        arriving, forced = carried, max(0, count + carried - allowed)
        carried = forced
        ratios.append({"level": k, "count": count, "share": round(count / total, 4) if total else 0.0,
                       "target": target, "allowed": allowed, "forced": forced})
        if forced:
            from_above = f" and {arriving} pushed down from level {k - 1}" if arriving else ""
            warnings.append(f"level {k} is over its target: {count} of {total} non-protected memories{from_above}, "
                            f"room for {allowed} ({target:.0%}); the next batch {_NEXT[k]} {forced} of them")
    cap = params.max_protected_memories
    held = int(protected.sum())
    share = held / cap if cap else 0.0
    if cap and held >= params.capacity_warn_share * cap:
        warnings.append(f"{held} of {cap} protected memories ({share:.0%}): protecting more is refused at {cap} "
                        "(LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORIES); unprotect some with `lumina-memory unprotect`")
    return {"user_id": user_id, "memories": int(len(ids)),
            "levels": {k: int((level == k).sum()) for k in (1, 2, 3, 4)}, "ratio_total": total, "ratios": ratios,
            "protected": {"count": held, "cap": cap, "share": round(share, 4)},
            "undo_entries": table.undo.count(user_id), "warnings": warnings}
