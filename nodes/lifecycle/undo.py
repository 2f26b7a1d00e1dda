"""Undo of forgetting (issue 49): a memory compressed, archived, auto-deleted or merged, a fact or a procedure
forgotten, put back from the undo log (stores.memory_undo) within ``lifecycle.undo_window_days``.

    report = undo_forgetting(services, "alice", step="compress")            # every compression in the window
    report = undo_forgetting(services, "alice", memory_id="seg:…")          # one memory (or fact)
    report = undo_forgetting(services, "alice", since_day=date(2026, 6, 1).toordinal())

A memory goes back to its state before the earliest selected step (its text, level, retention, decay, archive
fields; every column the batch wrote); the entries of that memory from there on are used up, a later step
included (undoing a compression also undoes the archiving that followed it). Its vectors follow through the
paths the lifecycle uses: a memory still held gets its payload and ``memory_vector`` from its restored text
(``reembedded_fields``, as the re-embedding phase writes them); an auto-deleted one is owed to the long-term
and graph tiers again and completed by recovery (the segment and its turns were kept as the record), and the
graph gets the user's relations.

So that the very next batch does not forget it again for the same reason, an undone memory counts as
recalled: the next batch reinforces it (F3: memory_days reduced, decay raised), then judges it from the
restored state like any other. A memory restored from an auto-deletion is archived again with its archive
clock restarted on the undo's batch day, so the deletion conditions are judged from there. A fact counts as
used now (its low-activity mark cleared). A merge is undone whole (``_whole_merges``): the folded memories come
back as auto-deleted ones do, the survivor gets its row from before the merge, the merge's derived_from relations
go. A procedure comes back with every version (stores.procedures_duckdb.restore_lineages), counted as used now.
Erasure deletes the undo log with the rest of the user: never undoable.
Deliberate `forget` is not logged either: the user asked for the memory to be gone.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from lumina_memory.stores.errors import InvalidInput, StoreUnavailable
from lumina_memory.stores.factory import open_audit_log
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.undo_steps import FOLDED, MERGED_INTO, STEPS
from lumina_memory.stores.secret import memory_secret

from .columns import ARCHIVED
from .memory_vector import compressed, reembedded_fields

log = logging.getLogger("lumina.lifecycle")
DAY_SECONDS = 86_400.0
WINDOW_SETTING = "LUMINA_LIFECYCLE__UNDO_WINDOW_DAYS"


def _what(memory_id: str | None, step: str | None, since_day: int | None) -> str:
    parts = [f"memory {memory_id!r}" if memory_id else "", f"step {step}" if step else "",
             f"since day {since_day}" if since_day is not None else ""]
    return ", ".join(p for p in parts if p)


def live_entries(services, user_id: str, *, memory_id: str | None = None, step: str | None = None,
                 since_day: int | None = None, now: float) -> list[dict[str, Any]]:
    """The selected entries still inside the undo window, oldest first; InvalidInput saying why when none is."""
    if step is not None and step not in STEPS:
        raise InvalidInput("step", f"must be one of {STEPS}, got {step!r}")
    window = services.settings.lifecycle.undo_window_days
    found = services.stores.archive.memories.undo.entries(user_id, memory_id, step, since_day)
    what = _what(memory_id, step, since_day)
    if not found:
        raise InvalidInput("undo", f"nothing to undo for user {user_id!r}{' (' + what + ')' if what else ''}: "
                                   f"forgetting steps are kept {window} days ({WINDOW_SETTING}); a forget or an "
                                   "erasure is never undoable")
    live = [e for e in found if e["ts"] >= now - window * DAY_SECONDS]
    if not live:
        raise InvalidInput("undo", f"the undo window has passed for user {user_id!r}"
                                   f"{' (' + what + ')' if what else ''}: {len(found)} forgetting step(s), all "
                                   f"older than {window} days ({WINDOW_SETTING}); they can no longer be undone")
    return live


def _today(services, now: float) -> int:
    from datetime import UTC, datetime

    from .clock import batch_day

    params = services.settings.lifecycle
    return batch_day(datetime.fromtimestamp(now, UTC), params.schedule_hour, params.timezone)


def undo_forgetting(services, user_id: str, *, memory_id: str | None = None, step: str | None = None,
                    since_day: int | None = None, now: float | None = None, actor: str = "api") -> dict[str, Any]:
    """Undo the selected forgetting steps of one user. Returns {"memories": [{memory_id, step, level}],
    "facts": [item_id], "entries": n used up}. InvalidInput when nothing selected is in the window."""
    user_id = validate_id(user_id, "user_id")
    if memory_id is not None:
        memory_id = validate_id(memory_id, "memory_id")
    now = time.time() if now is None else float(now)
    live = live_entries(services, user_id, memory_id=memory_id, step=step, since_day=since_day, now=now)
    undo = services.stores.archive.memories.undo
    live = _whole_merges(undo, user_id, live)
    procedures = [e for e in live if e["step"] == "procedure"]
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in live:
        if entry["step"] != "procedure":
            first.setdefault((entry["step"] == "knowledge", entry["target_id"]), entry)
    used: dict[str, list[str]] = {}
    for (fact, target), entry in first.items():  # the target's entries from its earliest selected one on
        later = [e for e in undo.entries(user_id, target)
                 if (e["step"] == "knowledge") == fact and (e["ts"], e["day"]) >= (entry["ts"], entry["day"])]
        used[target] = [e["undo_id"] for e in later]
        # A memory deleted or folded after the selected step had its relations removed then: they come back with
        # it; a survivor of a later merge stops deriving from the memories folded into it.
        gone_with = [r for e in later if e["step"] in ("delete", "merge") for r in e["prior"].get("relations", [])]
        folded = [m for e in later for m in e["prior"].get(FOLDED, [])]
        if (gone_with or folded) and not fact:
            entry["prior"] = {**entry["prior"], "relations": gone_with, FOLDED: folded}
    memories = [e for (fact, _t), e in first.items() if not fact]
    facts = [e["target_id"] for (fact, _t), e in first.items() if fact]
    restored = _restore_memories(services, user_id, memories, used, now) if memories else []
    if facts:
        undo.restore_facts(user_id, facts, [u for f in facts for u in used[f]], now)
        from lumina_memory.nodes.knowledge.tiers import sync_best_effort

        sync_best_effort(services, user_id, reason="undo")
    lineages = services.stores.archive.procedures.restore_lineages(user_id, procedures, now) if procedures else []
    report = {"memories": restored, "facts": facts, "procedures": lineages,
              "entries": sum(len(v) for v in used.values()) + len(procedures)}
    open_audit_log(services.stores.archive, memory_secret(services.settings)).append(
        "forgetting_undone", actor, user_id,
        json.dumps({"memories": [m["memory_id"] for m in restored], "facts": facts, "procedures": lineages, "at": now},
                   sort_keys=True))
    log.info("undo for %s: %d memories, %d facts, %d procedures", user_id, len(restored), len(facts), len(lineages))
    return report


def _merge_of(entry: dict[str, Any]) -> tuple[str, float]:
    """A merge's key: its survivor and when it ran."""
    return entry["prior"].get(MERGED_INTO) or entry["target_id"], entry["ts"]


def _whole_merges(undo, user_id: str, live: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A merge is undone whole: any selected memory of it (or one whose later step it is) brings in the entries
    of the survivor and of every memory folded with it, and so on while those bring in further merges (a
    survivor folded into another later)."""
    merges = undo.entries(user_id, step="merge")
    while merges:
        chosen = {e["undo_id"] for e in live}
        targets: dict[str, float] = {}  # each memory's earliest selected step: every later one is undone with it
        for e in sorted(live, key=lambda e: (e["ts"], e["day"])):
            if e["step"] in ("compress", "archive", "delete", "merge"):
                targets.setdefault(e["target_id"], e["ts"])
        keys = {_merge_of(e) for e in merges if e["undo_id"] in chosen or
                (e["target_id"] in targets and e["ts"] >= targets[e["target_id"]])}
        extra = [e for e in merges if _merge_of(e) in keys and e["undo_id"] not in chosen]
        if not extra:
            break
        live = sorted(live + extra, key=lambda e: (e["ts"], e["day"]))
    return live


def _restore_memories(services, user_id: str, entries: list[dict[str, Any]], used: dict[str, list[str]],
                      now: float) -> list[dict[str, Any]]:
    stores = services.stores
    table = stores.archive.memories
    active = [e["prior"] for e in entries if int(e["prior"]["level"]) != ARCHIVED]
    archived = [e["prior"] for e in entries if int(e["prior"]["level"]) == ARCHIVED]
    consumed = [u for e in entries for u in used[e["target_id"]]]
    targets = [e["target_id"] for e in entries]
    held = {r["memory_id"] for r in table.rows(user_id, targets)}
    with stores.archive.transaction():
        table.undo.restore_memories(user_id, active, consumed, {"recalled": True})
        table.undo.restore_memories(user_id, archived, [], {"archived_on": _today(services, now)})
    deleted = [m for m in targets if m not in held]  # auto-deleted since (by the selected step or a later one)
    kept = [m for m in targets if m in held]
    # A deletion the stores had not applied yet must not remove the restored memory afterwards.
    table.settle([(user_id, m, "delete") for m in deleted])
    rows = table.rows(user_id, kept) if kept else []
    if rows:
        try:
            stores.vectors.set_payload(user_id, reembedded_fields(services.embedder, rows))
        except StoreUnavailable as exc:
            log.warning("undo: vectors of %d memories wait for the lifecycle's next run: %s", len(rows), exc)
            for row in rows:
                table.queue(user_id, row["memory_id"], "reembed" if compressed(row) else "payload")
    if deleted:
        _rederive(services, user_id, deleted)
    services.keyword_index.forget(user_id)
    services.turn_index.forget(user_id)
    levels = {r["memory_id"]: int(r["level"]) for r in table.rows(user_id, [e["target_id"] for e in entries])}
    return [{"memory_id": e["target_id"], "step": e["step"], "level": levels.get(e["target_id"])} for e in entries]


def _rederive(services, user_id: str, memory_ids: list[str]) -> None:
    """Auto-deleted memories back in the long-term and graph tiers from their kept segments (recovery's path),
    and the graph's relations as the archive holds them; a store that is down leaves them owed."""
    from lumina_memory.nodes.recovery import recover

    stores = services.stores
    stores.archive.put_outbox([(user_id, m, ["qdrant", "graph"], "") for m in memory_ids])
    try:
        recover(services, user_id, reason="undo", wait=True)
        stores.graph.set_relations(user_id, [(r["src"], r["dst"], r["kind"], r["score"])
                                             for r in stores.archive.memories.relations(user_id)])
    except StoreUnavailable as exc:  # the outbox keeps the segments owed; relations follow the user's next change
        log.warning("undo: tiers of %d restored memories are owed: %s", len(memory_ids), exc)
