"""What the next lifecycle batch day would forget of one user, without writing anything (issue 49).

The batch's steps are pure functions of the columns (nodes.lifecycle.batch: ``daily_batch`` copies every column
it writes), so the preview runs the very steps on the user's columns as loaded and reads their outcome: no
second rule set to drift from the batch's. It shows the user's next due day only (a user days behind catches up
one day at a time; each later day starts from this one's outcome). Relations and auto-linking do not decide
levels and are left out; nor are texts compressed (the model is not called). Knowledge forgetting is monthly:
the preview counts the facts marked of low activity, the ones it could forget. With A9 on
(``low_activity_enabled``) it lists the episode merges the maintenance run would make now (``merges``: the same
``plan_merges`` the run applies), judged on the memories as they stand, before the previewed day.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lumina_memory.stores.ids import validate_id

from .batch import daily_batch
from .columns import MemoryColumns, Relations
from .undo_steps import undo_steps


def forget_preview(services, user_id: str, *, now: float) -> dict[str, Any]:
    """{"user_id", "day" (batch day previewed), "days_due", "changes": [{memory_id, step, level_from, level_to,
    retention_from, retention_to, text}], "counts": {step: n}, "merges": [{survivor, folded: {id: cosine}, text}],
    "knowledge_low_activity": n}; nothing is written."""
    from .run import today_of

    user_id = validate_id(user_id, "user_id")
    table = services.stores.archive.memories
    today = today_of(services, now)
    due = table.due_users(today, [user_id])
    if user_id in due:
        last = due[user_id]
        day = today if last is None else last + 1
    else:  # today's batch already ran for the user: the next one is tomorrow's
        day = today + 1
    arrays, ids, _seqs = table.load([user_id])
    changes: list[dict[str, Any]] = []
    if len(ids):
        columns = MemoryColumns.new(**arrays)
        outcome = daily_batch(columns, Relations.empty(), day, services.settings.lifecycle)
        steps = undo_steps(np.arange(len(ids)), outcome.level_before, outcome.columns.level, outcome.deleted)
        texts = {r["memory_id"]: r for r in table.rows(user_id, [str(ids[i]) for i in steps])} if steps else {}
        for i, step in sorted(steps.items()):
            row = texts.get(str(ids[i]), {})
            text = row.get("text") if row.get("text") is not None else (row.get("segment_text") or "")
            changes.append({"memory_id": str(ids[i]), "step": step, "level_from": int(outcome.level_before[i]),
                            "level_to": 5 if step == "delete" else int(outcome.columns.level[i]),
                            "retention_from": round(float(columns.retention[i]), 4),
                            "retention_to": round(float(outcome.columns.retention[i]), 4), "text": text[:120]})
    knowledge = getattr(services.stores.archive, "knowledge", None)
    low = len(knowledge.low_activity_ids(user_id)) if knowledge is not None else 0
    counts = {s: sum(1 for c in changes if c["step"] == s) for s in ("compress", "archive", "delete")}
    merges = []
    if services.settings.lifecycle.low_activity_enabled:  # A9 off: the maintenance run merges nothing
        from .merge_episodes import plan_merges

        merges = [{"survivor": row["memory_id"], "folded": {m: round(s, 4) for m, s in folded.items()},
                   "text": (values["text"] or "")[:120]} for row, folded, values in plan_merges(services, user_id)[1]]
    return {"user_id": user_id, "day": int(day), "days_due": max(0, today - day + 1), "changes": changes,
            "counts": counts, "merges": merges, "knowledge_low_activity": low}
