"""What recall shows of the lifecycle (F4, F5, F3): every item says its memory's level and whether it is
archived; recall flags what it touched for the next batch's reinforcement.

Deliberate recall (purpose "question": 「覚えてる？」, the CLI's `recall`) reaches everything, faded and
archived memories too: their turns come from the record (``from_record``), and an archived memory it reaches
is flagged for revival. Recall for a reply (priming) shows a memory as it stands at its level — its turns at
level 1, its summary at 2, its keywords at 3 — and never an archived one.
"""

from __future__ import annotations

import time
from typing import Any

DELIBERATE = ("question",)


def apply_lifecycle(services, user_id: str, items: list[dict[str, Any]], purpose: str,
                    now: float | None = None) -> list[dict[str, Any]]:
    table = getattr(services.stores.archive, "memories", None)
    ids = sorted({i["segment_id"] for i in items if i.get("segment_id")})
    if table is None or not ids:
        return items
    rows = {r["memory_id"]: r for r in table.rows(user_id, ids)}
    deliberate = purpose in DELIBERATE
    out = []
    for item in items:
        row = rows.get(item.get("segment_id"))
        if row is None:  # the open segment, or a segment from before the lifecycle
            out.append({**item, "level": 1, "archived": False})
            continue
        level = int(row["level"])
        shown = {**item, "level": level, "archived": level == 4, "from_record": level > 1}
        if not deliberate:
            if level == 4:
                continue
            if level > 1 and row["text"]:
                shown["text"] = row["text"]
                shown["from_record"] = False
        out.append(shown)
    touched = [i["segment_id"] for i in out if i.get("segment_id") in rows]
    if touched:
        table.mark_recalled(user_id, touched, now if now is not None else time.time(), deliberate)
    return out
