"""What deliberate recall reaches beyond the memories it ranks: F5's archived memories, and policy B's cold log.

F5's ``enable_archive_recall``: whether deliberate recall searches the archive.

With it on (the notes' default), a deliberate question (purpose "question") reaches archived memories (level 4)
and auto-deleted ones through their recorded turns, says so on each item, and flags what it reached for revival
(nodes.lifecycle.recall_view). With it off, the turns of those memories are no candidates at all: they take no
room in the budget, come back in no item and are flagged for no revival. Recall for a reply never shows an
archived memory either way.

Policy B's cold log (L9: "full logs, full-text searchable"): turns the raw-turn retention moved to Parquet are
no longer in the recall index. With ``storage_policy`` B, a deliberate question also asks the cold log for the
turns sharing most of its terms (``storage_policy_b_recall_items`` of them, at least one term shared), quoted as
items of the tier ``cold_log`` in the budget the memories left.
"""

from __future__ import annotations

import logging

import numpy as np

from lumina_memory.stores.factory import open_cold_turns

from .lifecycle.recall_view import DELIBERATE
from .retrieval.budget import count_tokens
from .retrieval.temporal import date_label

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


def cold_log_items(run):
    """A recall stage after the items are placed: policy B's cold log quoted for a deliberate question, in the room
    the budget (or the item limit) leaves."""
    services, request = run.services, run.request
    settings = services.settings
    wanted = settings.storage_policy_b_recall_items
    if settings.storage_policy != "B" or request.purpose not in DELIBERATE or not wanted or not run.q_terms:
        return run
    overhead = request.item_overhead
    room = None if run.full_budget is None else run.full_budget - sum(
        int(i.get("tokens") or count_tokens(i.get("text", ""))) + overhead for i in run.items)
    slots = wanted if request.limit is None else min(wanted, request.limit - len(run.items))
    if slots <= 0 or (room is not None and room <= 0):
        return run
    found = open_cold_turns(settings).search(request.user_id, run.q_terms, slots)
    added = 0
    for turn, matched in found:
        date = date_label(turn.ts, settings.timezone)
        text = f"[{date}] {turn.speaker}: {turn.text}"
        tokens = count_tokens(text)
        if room is not None and tokens + overhead > room:
            continue
        run.items.append({"segment_id": turn.segment_id, "kind": "episode", "unit": "turns", "text": text,
                          "date": date, "first_ts": turn.ts, "tiers": ["cold_log"], "source_ids": [turn.source_id],
                          "quoted_source_ids": [turn.source_id], "whole_source_ids": [turn.source_id],
                          "turn_ids": [turn.turn_id], "speakers": [turn.speaker], "keywords": [],
                          "score": round(matched / len(set(run.q_terms)), 4), "tokens": tokens,
                          "from_record": True, "cold_log": True})
        added += 1
        if room is not None:
            room -= tokens + overhead
    if added:
        log.info("recall user=%s cold_log_items=%d", request.user_id, added)
    return run
