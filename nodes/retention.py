"""Retention per data kind (S7) and the storage policy (L9), enforced by the maintenance graph.

``enforce_retention(services, now=None)`` applies, on the conversation's clock for turns and segments
(their message times) and on the wall clock for logs (``now`` defaults to the time of the call):

- raw turns (the conversation log; L3's archive retention, the notes' 30 days by default) older than
  ``retention_raw_turns_days``, by ``storage_policy``:
  ``keep`` (default, measured: bench.storage_policy) — nothing: raw turns stay, recall quality depends on them;
  ``A`` — the turns leave the archive and the turn vectors, and the raw text leaves their segments (archive
  rows and long-term payloads): only summaries, keywords and embeddings stay in search; the undo log's entries
  of their memories go too (each copies the memory's text, so none outlives the turns);
  ``B`` — as A, after the turns were written to Parquet files (stores.cold_turns) that deliberate recall
  reads through DuckDB (``cold_turns``);
- segments that ended more than ``retention_segments_days`` ago leave the archive (with their memories'
  lifecycle rows), the long-term vectors and the graph (their turns follow the raw-turn rule; a mid-term record expires by its own TTL; a knowledge item learned
  from them stays while its own retention keeps it);
- knowledge items last said more than ``retention_knowledge_days`` ago (a restatement merged into an item is
  a saying of it; superseded and forgotten ones too) leave the archive, the knowledge vectors and the graph: the
  archive marks them forgotten first (recall and the profile stop showing them, and their tiers' removal is
  owed, as for the monthly forgetting), the tiers drop them, then their rows go with their undo entries — a store
  that is down leaves them forgotten and owed, and the next run (or sync) finishes;
- procedures neither recalled, reported on nor taught again for ``retention_procedures_days`` (unset: forever)
  leave with all their versions, unless tagged [IMPORTANT] or taught by a protected memory (the monthly
  forgetting's disuse rule, with no use count or version sparing them), their undo entries with them;
- the agent's task decompositions and failure patterns (S5, the notes' decomposition patterns: 90 days) not learnt
  again or counted on for ``retention_strategies_days`` leave;
- activity-log events older than ``retention_logs_days`` are dropped.

The audit log is kept forever (the notes' compliance rule; its hash chain is what proves it whole): nothing here
touches it.

Backups are pruned by the backup code (``retention_backups_days``). Returns what was done, per kind.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import Any

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.factory import open_cold_turns
from lumina_memory.stores.models import Turn

from .activity import activity_log, record

log = logging.getLogger("lumina.retention")
DAY = 86_400.0
_NEVER = 2**31 - 1  # a use count or version no procedure reaches: retention spares none for them


def _by_user(rows) -> dict[str, list]:
    out: dict[str, list] = defaultdict(list)
    for row in rows:
        out[row.user_id].append(row)
    return out


def _strip_segment_texts(services, user_id: str, segment_ids: list[str]) -> int:
    """Policies A/B: the segments keep their summary, keywords and embedding; their raw lines go."""
    stores = services.stores
    cleared = stores.archive.clear_segment_texts(user_id, segment_ids)
    promoted = {h.payload.get("segment_id") for h in stores.vectors.get(user_id, segment_ids)}
    records = [r for r in (stores.archive.get_segment(user_id, s) for s in segment_ids if s in promoted) if r is not None]
    if records:
        stores.vectors.upsert(records)  # the archive's record, text now blank: the payload's raw text goes
    return cleared


def _raw_turns(services, now: float) -> dict[str, Any]:
    settings = services.settings
    days, policy = settings.retention_raw_turns_days, settings.storage_policy
    if days is None:
        return {"policy": policy, "days": None, "turns": 0}
    if policy == "keep":
        return {"policy": policy, "days": days, "turns": 0, "note": "storage_policy keep: raw turns are kept"}
    stores = services.stores
    cold = open_cold_turns(settings) if policy == "B" else None
    expired = _by_user(stores.archive.turns_before(now - days * DAY))
    report: dict[str, Any] = {"policy": policy, "days": days, "turns": 0, "segments_stripped": 0, "users": len(expired)}
    for user_id, turns in expired.items():
        if cold is not None:
            cold.write(user_id, turns)  # first: the archive rows go only once they are in a file
        turn_ids = [t.turn_id for t in turns]
        if stores.turns is not None:
            stores.turns.delete_matching(user_id, "turn_id", turn_ids)
        segments = sorted({t.segment_id for t in turns if t.segment_id})
        stripped = _strip_segment_texts(services, user_id, segments) if segments else 0
        memories = getattr(stores.archive, "memories", None)
        if memories is not None and segments:  # an undo entry copies its memory's text: it goes with the turns
            memories.undo.forget(user_id, segments)
        deleted = stores.archive.delete_turns(user_id, turn_ids)
        _forget_indexes(services, user_id)
        report["turns"] += deleted
        report["segments_stripped"] += stripped
        record(services, user_id, "maintenance", step="retention.raw_turns", policy=policy, turns=deleted,
               segments_stripped=stripped)
    return report


def _segments(services, now: float) -> dict[str, Any]:
    days = services.settings.retention_segments_days
    if days is None:
        return {"days": None, "segments": 0}
    stores = services.stores
    expired = _by_user(stores.archive.segments_before(now - days * DAY))
    total = 0
    for user_id, segments in expired.items():
        ids = [s.segment_id for s in segments]
        stores.vectors.delete_matching(user_id, "segment_id", ids)
        stores.graph.delete_segments(user_id, ids, knowledge=False)  # a fact learned from them stays while kept
        memories = getattr(stores.archive, "memories", None)
        for memory_id in ids if memories is not None else ():  # a memory's text is its segment's: it goes too
            memories.delete(user_id, memory_id)
        total += stores.archive.delete_segments(user_id, ids)
        _forget_indexes(services, user_id)
        record(services, user_id, "maintenance", step="retention.segments", segments=len(ids))
    return {"days": days, "segments": total, "users": len(expired)}


def _knowledge(services, now: float) -> dict[str, Any]:
    days = services.settings.retention_knowledge_days
    table = getattr(services.stores.archive, "knowledge", None)
    if days is None or table is None:
        return {"days": days, "items": 0}
    stores = services.stores
    vectors = getattr(stores, "knowledge", None)
    expired = table.expire_said_before(now - days * DAY, now)
    report = {"days": days, "items": 0, "users": len(expired), "waiting": 0}
    for user_id, item_ids in expired.items():
        try:  # the derived tiers first: rows deleted before them could leave a point nothing would remove
            if vectors is not None:
                vectors.delete(user_id, item_ids)
            stores.graph.delete_knowledge(user_id, item_ids)
        except StoreUnavailable as exc:
            report["waiting"] += len(item_ids)
            log.warning("retention: %d knowledge item(s) of a user stay forgotten and owed: %s", len(item_ids), exc)
            continue
        deleted = table.delete_items(user_id, item_ids)
        memories = getattr(stores.archive, "memories", None)
        if memories is not None:  # nothing can bring a deleted fact back: its undo entries go
            memories.undo.forget(user_id, item_ids)
        report["items"] += deleted
        record(services, user_id, "maintenance", step="retention.knowledge", items=deleted)
    return report


def _procedures(services, now: float) -> dict[str, Any]:
    """Procedures unused past the retention: the table's disuse rule with no use count or version sparing them."""
    days = services.settings.retention_procedures_days
    table = getattr(services.stores.archive, "procedures", None)
    if days is None or table is None:
        return {"days": days, "procedures": 0}
    counts = services.stores.archive.tier_counts()
    report = {"days": days, "procedures": 0, "users": 0}
    for user_id in sorted(counts.users() | set(counts.other_users)):
        gone = table.forget_unused(user_id, now, float(days), min_uses=_NEVER, mature_version=_NEVER, undoable=False)
        if gone:
            report["procedures"] += len(gone)
            report["users"] += 1
            record(services, user_id, "maintenance", step="retention.procedures", procedures=len(gone))
    return report


def _strategies(services, now: float) -> dict[str, Any]:
    """S5's decompositions and failure patterns not learnt again or counted on within the retention."""
    from .strategies import strategies

    days = services.settings.retention_strategies_days
    if days is None:
        return {"days": None, "strategies": 0}
    gone = strategies(services).expire_before(now - days * DAY)
    for user_id, n in gone.items():
        record(services, user_id, "maintenance", step="retention.strategies", strategies=n)
    return {"days": days, "strategies": sum(gone.values()), "users": len(gone)}


def _forget_indexes(services, user_id: str) -> None:
    """The in-process recall indexes hold the removed rows: rebuilt from the archive on next use."""
    for index in (services.turn_index, services.keyword_index):
        index.forget(user_id)


def enforce_retention(services, now: float | None = None) -> dict[str, Any]:
    """Apply every retention setting once (see the module docstring); returns counts per kind."""
    now = time.time() if now is None else float(now)
    report = {
        "raw_turns": _raw_turns(services, now),
        "segments": _segments(services, now),
        "knowledge": _knowledge(services, now),
        "procedures": _procedures(services, now),
        "strategies": _strategies(services, now),
        "logs": {"days": services.settings.retention_logs_days,
                 "events": activity_log(services.settings).prune(now - services.settings.retention_logs_days * DAY)},
    }
    log.info("retention turns=%d segments=%d knowledge=%d log_events=%d", report["raw_turns"]["turns"],
             report["segments"]["segments"], report["knowledge"]["items"], report["logs"]["events"])
    return report


def cold_turns(services, user_id: str, contains: str | None = None, limit: int = 100) -> list[Turn]:
    """Deliberate recall of raw turns that policy B moved to Parquet (DuckDB ``read_parquet``)."""
    return open_cold_turns(services.settings).read(user_id, contains, limit)
