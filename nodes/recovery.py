"""Recovery: complete every derived tier from the archive, the durable base.

Two witnesses are compared with the archive, never trusted alone:

- the archive's **outbox** (written in the same transaction as the segments by archive_to_duckdb):
  a segment's row lists the derived writes it still owes — a process killed after the archive commit,
  or a store that was down. ``recover`` rebuilds those segments from the archived record and turns and
  runs the SAME node write paths (upsert_long_term, link_associations; mid-term with the remaining TTL),
  idempotent writes with deterministic ids, in the order the rows were queued;
- **mid-term** itself: Redis may lose records without any crash of ours (a private server killed before
  its snapshot, a production server restarted without persistence). ``rebuild_midterm`` re-puts every
  segment archived within the TTL window that Redis lacks, with its remaining TTL.

Both run when services open (start-up, so also on every re-run of an import); ``retry_deferred`` runs
them again before a flush while work is owed (an outage that ended), at most every
``Services.outbox_retry_seconds``; the mid-term adapter calls ``rebuild_midterm`` after it had to
reconnect (a restarted server). Each logs what it repaired.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass
from itertools import groupby

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.leases import leases_of, skipped

from .pending import DEFERRABLE, TIER_OF_STAGE, note_degraded, owed, settle

log = logging.getLogger("lumina.recovery")
RECOVERY_LEASE = "outbox-recovery"
"""The lease (stores.leases) under which one worker at a time completes the outbox: every worker reads the same
owed rows, so two at once would write each twice and settle each other's rows."""


@dataclass
class _Ctx:
    """The little of a run's context the flush nodes read."""

    user_id: str


def _forgotten(archive, user_id: str, segment_ids: list[str]) -> set[str]:
    """Segments whose memory the lifecycle auto-deleted: the record keeps them, no derived tier may again."""
    table = getattr(archive, "memories", None)
    return table.forgotten(user_id, segment_ids) if table is not None and segment_ids else set()


def _items(archive, user_id: str, rows: list[dict]) -> tuple[list[dict], list[str]]:
    """Pending items as the flush nodes see them, rebuilt from the archive; and the segment ids of rows
    whose segment the archive no longer has (erased since): nothing to complete."""
    items, gone = [], []
    forgotten = _forgotten(archive, user_id, [row["segment_id"] for row in rows])
    for row in rows:
        record = archive.get_segment(user_id, row["segment_id"])
        if record is None or record.segment_id in forgotten:  # erased, or a memory the lifecycle deleted
            gone.append(row["segment_id"])
            continue
        turns = [
            {"turn_id": t.turn_id, "source_id": t.source_id, "speaker": t.speaker, "text": t.text, "ts": t.ts}
            for t in archive.get_turns(user_id, record.turn_ids)
        ]
        owed_now = set(row["stages"])
        items.append({
            "segment_id": record.segment_id,
            "turns": turns,
            "domain": record.domain,
            "close_reason": record.close_reason,
            "record": record.model_dump(),
            "promotion": row["promotion"] or None,
            "stages": [s for s in ("redis", "duckdb", "qdrant", "graph") if s not in owed_now],
            "queued_at": row["queued_at"],  # the archive commit's time: mid-term's TTL runs from there
        })
    return items, gone


def _midterm_stage(services, user_id: str, items: list[dict]) -> list[dict]:
    """Mid-term writes owed: each record re-put with the TTL it has left (nothing when it expired)."""
    todo = [item for item in items if "redis" not in item["stages"]]
    if not todo:
        return items
    try:
        _put_remaining(services, user_id, todo)
        done = {"redis"}
        deferred: list[str] = []
    except StoreUnavailable as exc:
        note_degraded(services, "redis", exc)
        done, deferred = {"redis"}, ["redis"]
    owed_ids = {item["segment_id"] for item in todo}
    return [
        {**item, "stages": [*item["stages"], *done], "deferred": [*item.get("deferred", []), *deferred]}
        if item["segment_id"] in owed_ids else item
        for item in items
    ]


def _put_remaining(services, user_id: str, items: list[dict]) -> int:
    """Re-put the items' records into mid-term with their remaining TTL; returns how many went in."""
    from lumina_memory.stores.models import SegmentRecord

    ttl = services.settings.midterm_ttl_seconds
    now = time.time()
    put = 0
    for item in items:
        remaining = int(ttl - (now - item.get("queued_at", now)))
        if remaining >= 1:
            services.stores.midterm.put_segments([SegmentRecord.model_validate(item["record"])], remaining)
            put += 1
    return put


def recover(services, user_id: str | None = None, reason: str = "start-up", *, wait: bool | float = False) -> dict:
    """Complete every derived write the outbox says is owed (all users, or one); returns counts. Under
    ``RECOVERY_LEASE``: when another worker holds it past ``wait``, that worker is completing the same rows,
    and the report says ``skipped`` and why."""
    with leases_of(services).hold(RECOVERY_LEASE, wait=wait) as got:
        if not got:
            log.info("recovery (%s) left to the worker holding %r", reason, RECOVERY_LEASE)
            return skipped(RECOVERY_LEASE, wait)
        return _recover(services, user_id, reason)


def _recover(services, user_id: str | None, reason: str) -> dict:
    from .link_associations import link_associations
    from .upsert_long_term import upsert_long_term

    archive = services.stores.archive
    if not hasattr(archive, "outbox"):
        return {}
    knowledge_owed = _knowledge_owed(services, user_id)
    rows = archive.outbox(user_id)
    report: Counter = Counter()
    if not rows:
        _sync_knowledge(services, user_id, reason, report, knowledge_owed)
        return dict(report)
    owed_before = Counter(stage for row in rows for stage in row["stages"])
    # Oldest first; a user's rows are completed together (one batch per tier, like the run that queued them).
    ordered = sorted(rows, key=lambda r: r["seq"])
    by_user: dict[str, list[dict]] = {}
    for row in ordered:
        by_user.setdefault(row["user_id"], []).append(row)
    for user, user_rows in by_user.items():
        items, gone = _items(archive, user, user_rows)
        if gone:
            archive.settle_outbox(user, {s: [] for s in gone})
        if not items:
            continue
        ctx = _Ctx(user)
        state: dict = {"pending": _midterm_stage(services, user, items)}
        owed_long_term = {item["segment_id"] for item in state["pending"] if "qdrant" not in item["stages"]}
        state.update(upsert_long_term(state, ctx, services) or {})
        restore_level_state(services, user, [item["segment_id"] for item in state["pending"]
                                             if item["segment_id"] in owed_long_term
                                             and "qdrant" not in item.get("deferred", [])])
        # What is owed now (graph included when not done yet), before the graph stage settles its rows.
        settle(archive, user, state["pending"])
        link_associations(state, ctx, services)
        report["segments"] += len(items)
    left = archive.outbox(user_id)
    owed_after = Counter(stage for row in left for stage in row["stages"])
    report.update({f"completed {TIER_OF_STAGE[s]}": owed_before[s] - owed_after[s] for s in DEFERRABLE if owed_before[s]})
    report["still owed"] = len(left)
    _sync_knowledge(services, user_id, reason, report, knowledge_owed)  # the segments are in the graph now
    degraded = getattr(services, "degraded", None)
    if degraded is not None:
        for stage in DEFERRABLE:
            if not owed_after[stage]:
                degraded.pop(TIER_OF_STAGE[stage], None)
    level = logging.WARNING if report["segments"] else logging.INFO
    log.log(level, "recovery (%s): %s", reason, ", ".join(f"{k}={v}" for k, v in report.items()))
    return dict(report)


def _knowledge_owed(services, user_id: str | None) -> int:
    table = getattr(services.stores.archive, "knowledge", None)
    return table.unsynced_count(user_id) if table is not None else 0


def _sync_knowledge(services, user_id: str | None, reason: str, report: Counter, owed_before: int) -> None:
    """Knowledge items the derived tiers do not mirror yet (a crash between the archive commit and their
    sync, a store that was down): written now (by the graph stage above, or here), or left owed while a
    store is still down. The report counts both."""
    from .knowledge.tiers import sync_best_effort

    if owed_before:
        sync_best_effort(services, user_id, reason=reason)
        still = _knowledge_owed(services, user_id)
        report["knowledge items synced"] = max(0, owed_before - still)
        if still:
            report["knowledge items owed"] = still


def restore_level_state(services, user_id: str, segment_ids: list[str]) -> int:
    """Points just re-upserted from the archive carry the segment as it was archived (its recorded vector,
    no level): the memory may have faded since (issue 17). Put back its level, retention and protection as
    the archive's memory row holds them, and from level 2 on its ``memory_vector`` (its text at that level
    re-embedded), as the lifecycle's re-embedding wrote them. Missing points (not promoted) are skipped by
    the store; a store that fails now leaves the writes owed to the lifecycle's next run. Returns the
    memories restored."""
    from lumina_memory.nodes.lifecycle.memory_vector import compressed, reembedded_fields

    table = getattr(services.stores.archive, "memories", None)
    if table is None or not segment_ids:
        return 0
    rows = table.rows(user_id, segment_ids)
    try:
        services.stores.vectors.set_payload(user_id, reembedded_fields(services.embedder, rows))
    except StoreUnavailable as exc:
        log.warning("recovery: level state of %d re-upserted memories waits for the lifecycle's next run: %s",
                    len(rows), exc)
        for row in rows:
            table.queue(user_id, row["memory_id"], "reembed" if compressed(row) else "payload")
    return len(rows)


def rederive(services, user_id: str) -> dict:
    """Queue every archived segment of the user for every derived tier and complete them: the repair
    for a data dir damaged before the outbox existed (doctor's "derivations complete" FAIL). Writes are
    idempotent; segments go oldest first, as they were first written. Promotion verdicts are made again."""
    archive = services.stores.archive
    segments = sorted(archive.segments(user_id), key=lambda r: (r.end_ts, r.segment_id))
    owed_stages = ["qdrant", "graph"]  # mid-term: only what was archived within its TTL, below
    archive.put_outbox([(user_id, r.segment_id, owed_stages, "") for r in segments])
    if hasattr(archive, "knowledge"):
        archive.knowledge.mark_unsynced(user_id)  # the knowledge tiers are derived too
    report = recover(services, user_id, reason="rederive", wait=True)
    rebuild_midterm(services, reason="rederive")
    return report


def rebuild_midterm(services, reason: str = "start-up") -> int:
    """Re-put every segment archived within the mid-term TTL that Redis lacks; returns how many."""
    archive, midterm = services.stores.archive, services.stores.midterm
    ttl = services.settings.midterm_ttl_seconds
    expected = archive.archived_since(time.time() - ttl + 1)
    if not expected:
        return 0
    missing = midterm.missing([(u, s) for u, s, _at in expected])
    if not missing:
        return 0
    at = {(u, s): a for u, s, a in expected}
    now = time.time()
    put = 0
    for user_id, group in groupby(sorted(missing), key=lambda p: p[0]):
        pairs = list(group)
        forgotten = _forgotten(archive, user_id, [s for _u, s in pairs])
        for _user, segment_id in pairs:
            if segment_id in forgotten:
                continue
            record = archive.get_segment(user_id, segment_id)
            remaining = int(ttl - (now - at[(user_id, segment_id)]))
            if record is not None and remaining >= 1:
                midterm.put_segments([record], remaining)
                put += 1
    log.warning("recovery (%s): mid-term lacked %d of the %d segments archived within its TTL; "
                "restored %d from the archive with their remaining TTL", reason, len(missing), len(expected), put)
    return put


def on_startup(services) -> None:
    """What opening services runs: the outbox, then mid-term against the archive. A store that is down
    now leaves its work owed (logged); start-up goes on."""
    try:
        recover(services, reason="start-up")
    except StoreUnavailable as exc:
        log.warning("recovery (start-up) postponed: %s", exc)
    try:
        rebuild_midterm(services, reason="start-up")
    except StoreUnavailable as exc:
        note_degraded(services, "redis", exc)
        log.warning("mid-term check (start-up) postponed: %s", exc)


def retry_deferred(services) -> None:
    """Before a flush: complete work owed from before (a store that was down), oldest first, at most
    every ``outbox_retry_seconds`` while anything is owed."""
    archive = services.stores.archive
    if not hasattr(archive, "outbox_size"):
        return
    now = time.monotonic()
    if now - getattr(services, "outbox_tried_at", 0.0) < getattr(services, "outbox_retry_seconds", 30.0):
        return
    if not archive.outbox_size():
        return
    services.outbox_tried_at = now
    try:
        recover(services, reason="store back")
        if "mid-term" in getattr(services, "degraded", {}):
            rebuild_midterm(services, reason="store back")
    except StoreUnavailable as exc:
        log.warning("owed derived writes wait longer: %s", exc)


def outbox_summary(archive) -> dict:
    """{'segments': n, 'owed': {tier: n}} of the outbox (stats, doctor)."""
    rows = archive.outbox() if hasattr(archive, "outbox") else []
    owed_tiers = Counter(TIER_OF_STAGE[s] for r in rows for s in r["stages"])
    return {"segments": len(rows), "owed": dict(owed_tiers)}


__all__ = ["recover", "rederive", "restore_level_state", "rebuild_midterm", "retry_deferred", "on_startup", "note_degraded", "outbox_summary", "owed"]
