"""F5's ``enable_archive_recall``: whether deliberate recall searches the archive.

With it on (the notes' default), a deliberate question (purpose "question") reaches archived memories (level 4)
and auto-deleted ones through their recorded turns, says so on each item, and flags what it reached for revival
(nodes.lifecycle.recall_view). With it off, the turns of those memories are no candidates at all: they take no
room in the budget, come back in no item and are flagged for no revival. Recall for a reply never shows an
archived memory either way.
"""

from __future__ import annotations

import logging

import numpy as np

from .lifecycle.recall_view import DELIBERATE

log = logging.getLogger("lumina.recall")
ARCHIVED_LEVEL = 4


def archived_segments(services, user_id: str) -> set[str]:
    """The user's memories recall would reach only in the archive: archived (level 4) or auto-deleted."""
    table = getattr(services.stores.archive, "memories", None)
    if table is None:
        return set()
    view, gone = table.recall_view(user_id)
    return {memory_id for memory_id, row in view.items() if int(row["level"]) == ARCHIVED_LEVEL} | set(gone)


def leave_archive_out(run):
    """A recall stage after fusion: with ``lifecycle.enable_archive_recall`` off, a deliberate recall's fused
    relevance of every turn of an archived memory is zero, so ranking never takes it."""
    services, request = run.services, run.request
    if (services.settings.lifecycle.enable_archive_recall or request.purpose not in DELIBERATE
            or not run.on.get("lifecycle") or run.rel is None or not len(run.rel)):
        return run
    archived = archived_segments(services, request.user_id)
    if not archived:
        return run
    index = run.index
    codes = [index.segment_code[s] for s in archived if s in index.segment_code]
    if codes:
        left_out = np.isin(index.segment_of, codes)
        run.rel = np.where(left_out, 0.0, run.rel)
        log.info("recall user=%s archive_recall=off archived_turns_left_out=%d", request.user_id, int(left_out.sum()))
    return run
