"""Knowledge fades when nothing uses it (the notes' synaptic homeostasis, animaworks-memory: 能動的忘却).

- Recall that shows an item counts an access (``note_accessed``): it is of low activity no more.
- Daily (``mark_low_activity``): an item not accessed for ``forget_idle_days`` and accessed fewer than
  ``forget_min_accesses`` times is marked of low activity.
- Monthly (``forget_idle``): an item of low activity for ``forget_after_low_activity_days`` and not accessed
  since is forgotten: recall no longer finds it, its point and its graph node go at the tiers' next sync. Its
  archive row stays (the record, `knowledge --all --json` shows ``forgotten_at``); saying it again, or hearing
  it from another episode, brings it back, and so does `lumina-memory undo --step knowledge` within the undo
  window (the undo log's entry is written in the forgetting's transaction; nodes.lifecycle.undo).

Protected, never forgotten: current facts about ``forget_protected_subjects`` (the user: what the profile
shows; the notes always protect a person's own record) and facts learned from a memory the user protected.

Procedures fade by the notes' looser threshold (``forget_unused``): neither recalled nor reported on for
``LUMINA_PROCEDURES__FORGET_IDLE_DAYS`` (180) and used fewer than 3 times; a mature one (version ≥ 3) and one
taught by a protected memory are kept. One that keeps failing goes sooner (``forget_unreliable``).
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from lumina_memory.stores.protocols import KnowledgeItemStore

from .tiers import sync_best_effort


def _table(services) -> KnowledgeItemStore | None:
    return getattr(services.stores.archive, "knowledge", None)


def _params(services):
    return services.settings.knowledge


def note_accessed(services, user_id: str, items: Sequence[dict[str, Any]], now: float | None = None) -> int:
    """Recall showed these items: the knowledge and procedure ones among them count a use."""
    now = time.time() if now is None else now
    archive, used = services.stores.archive, 0
    facts = [i["item_id"] for i in items if i.get("kind") == "knowledge" and i.get("item_id")]
    if facts and _table(services) is not None:
        used += archive.knowledge.mark_accessed(user_id, facts, now)
    procedures = [i["procedure_id"] for i in items if i.get("kind") == "procedure" and i.get("procedure_id")]
    if procedures and getattr(archive, "procedures", None) is not None:
        used += archive.procedures.mark_accessed(user_id, procedures, now)
    return used


def mark_low_activity(services, now: float, user_id: str | None = None) -> int:
    params, table = _params(services), _table(services)
    if table is None or not params.forget_enabled:
        return 0
    return table.mark_low_activity(now, params.forget_idle_days, params.forget_min_accesses,
                                   params.forget_protected_subjects, user_id)


def forget_idle(services, now: float, user_id: str | None = None) -> list[tuple[str, str]]:
    """Forget what stayed of low activity; the tiers drop it now, or at their next sync if a store is down."""
    params, table = _params(services), _table(services)
    if table is None or not params.forget_enabled:
        return []
    archive = services.stores.archive
    with archive.transaction():  # the undo log's entries commit with the forgetting (issue 49)
        gone = table.forget_idle(now, params.forget_after_low_activity_days, params.forget_protected_subjects, user_id)
        archive.memories.undo.record_facts(gone, _batch_day(services, now), now)
    for user in sorted({u for u, _ in gone}):
        sync_best_effort(services, user, reason="knowledge forgetting")
    return gone


def _batch_day(services, now: float) -> int:
    from datetime import UTC, datetime

    from lumina_memory.nodes.lifecycle.clock import batch_day

    lifecycle = services.settings.lifecycle
    return batch_day(datetime.fromtimestamp(now, UTC), lifecycle.schedule_hour, lifecycle.timezone)


def forget_unused_procedures(services, user_id: str, now: float) -> list[str]:
    """This user's procedures forgotten for disuse (lineages)."""
    from .procedures import params_of

    table = getattr(services.stores.archive, "procedures", None)
    if table is None:
        return []
    params = params_of(services)
    return table.forget_unused(user_id, now, params.forget_idle_days, params.forget_min_uses,
                               params.forget_mature_version)
