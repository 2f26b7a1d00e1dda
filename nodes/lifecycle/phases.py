"""The daily batch's phases after its days commit, and the report they add up to (F9).

    owed → days → reembed → relations → deletions → summary

``owed`` and the three store-side phases apply the derived writes a committed day left in the archive's
``lifecycle_outbox`` (``run.run_days`` writes them in the day's own transaction):

- ``reembed``    step 3.5: texts compressed to a new level re-embedded into the long-term points' payload
                 as the memory's vector, with its level (``reembed``; the point's own vector stays the
                 record's, ``memory_vector``), and level/retention payloads of memories whose text did not
                 change (``payload``)
- ``relations``  the graph tier's typed edges, set to the user's relations as the archive holds them
- ``deletions``  auto-deleted memories removed from the vector, mid-term and graph tiers
- ``owed``       all of these at once, for earlier runs that stopped between phases (a crash, a store down)

Each store-side phase settles only its own kinds, so a crash between phases leaves the rest owed for the next
run's ``owed``; the writes are idempotent (replace, set, delete by id), so one applied twice changes nothing.
Reports are small dicts of counts: a graph's state never holds the columns.
"""

from __future__ import annotations

import logging
from collections import Counter
from itertools import groupby
from operator import itemgetter
from typing import Any, Callable, Sequence

import numpy as np

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.records import OUTBOX_ACTIONS

from .memory_vector import level_fields, reembedded_fields

log = logging.getLogger("lumina.lifecycle")

Progress = Callable[[int, int], None]
"""(done, total) of a phase; total 0 when there is nothing to do."""

REEMBED_ACTIONS = ("payload", "reembed")
RELATION_ACTIONS = ("relations",)
DELETE_ACTIONS = ("delete",)
STORE_PHASES: dict[str, tuple[str, ...]] = {
    "reembed": REEMBED_ACTIONS, "relations": RELATION_ACTIONS, "deletions": DELETE_ACTIONS}
"""Store-side phases in the order they run, each with the outbox kinds it owns."""
PAGE = 10_000  # owed rows read at a time: the outbox of a first batch over 1M memories is not held whole


def apply_owed(services, actions: Sequence[str] = OUTBOX_ACTIONS, progress: Progress | None = None) -> dict[str, int]:
    """Apply the owed derived writes of ``actions`` kinds, user by user, settling each page once applied.
    A store that is down stops the phase: what it had not reached stays owed for the next run."""
    table = services.stores.archive.memories
    total = table.owed_count(actions) if progress is not None else 0
    counts: Counter = Counter()
    done, previous = 0, None
    while rows := table.owed(PAGE, actions):
        if rows == previous:  # settle removed nothing: never spin
            break
        previous, settled = rows, []
        try:
            for user, group in groupby(rows, key=itemgetter(0)):
                mine = [(m, a) for _u, m, a in group]
                _apply_user(services, user, mine)
                settled += [(user, m, a) for m, a in mine]
                counts.update(a for _m, a in mine)
                done += len(mine)
                if progress is not None:
                    progress(min(done, total), total)
        except StoreUnavailable as exc:
            log.warning("lifecycle writes %s wait for the next run: %s", "/".join(actions), exc)
            break
        finally:
            table.settle(settled)
    if progress is not None:
        progress(min(done, total), total)
    return dict(counts)


def _apply_user(services, user: str, rows: list[tuple[str, str]]) -> None:
    stores = services.stores
    table = stores.archive.memories
    wanted = [m for m, a in rows if a in REEMBED_ACTIONS]
    known = {r["memory_id"]: r for r in table.rows(user, wanted)} if wanted else {}  # gone: deleted since
    reembed = [known[m] for m, a in rows if a == "reembed" and m in known]
    if reembed:  # the point keeps its recorded vector: see nodes.lifecycle.memory_vector
        stores.vectors.set_payload(user, reembedded_fields(services.embedder, reembed))
    payload = {m: level_fields(known[m]) for m, a in rows if a == "payload" and m in known}
    if payload:
        stores.vectors.set_payload(user, payload)
    deletions = [m for m, a in rows if a == "delete"]
    if deletions:
        stores.vectors.delete(user, deletions)
        stores.midterm.delete_segments(user, deletions)
        # A fact learned from a forgotten memory is not forgotten with it (the archive keeps the item).
        stores.graph.delete_segments(user, deletions, knowledge=False)
    if any(a == "relations" for _m, a in rows):
        stores.graph.set_relations(user, [(r["src"], r["dst"], r["kind"], r["score"]) for r in table.relations(user)])


def apply_phase(services, name: str, progress: Progress | None = None) -> dict[str, Any]:
    """One store-side phase (``STORE_PHASES``): what it applied, and how many writes of its kinds still wait."""
    actions = STORE_PHASES[name]
    applied = apply_owed(services, actions, progress)
    return {"applied": applied, "waiting": services.stores.archive.memories.owed_count(actions)}


def level_counts(services, user_id: str | None = None) -> list[int]:
    """Memories at level 1–4 now (the user's, or everyone's)."""
    counts = services.stores.archive.memories.level_counts(user_id)
    return [int(counts.get(level, 0)) for level in (1, 2, 3, 4)]


def summarise(days: dict[str, Any], owed_before: dict[str, int], phases: dict[str, dict[str, Any]],
              levels: list[int]) -> dict[str, Any]:
    """The batch's report: ``days``' counts (days, user_days, the 4×5 level moves summed over the days, from
    level 1–4 to 1–4 or deleted, reinforced, revived, deleted, links_added), ``levels`` (memories at 1–4 now),
    writes ``applied`` by kind after the days, those applied before them, and those still ``waiting`` (a
    store was down)."""
    applied: Counter = Counter()
    for report in phases.values():
        applied.update(report["applied"])
    moves = np.asarray(days["transitions"], dtype=np.int64)
    report = {**days, "levels": list(levels), "applied": dict(applied), "applied_before": dict(owed_before),
              "waiting": sum(int(r["waiting"]) for r in phases.values())}
    log.info("lifecycle batch today=%s days=%s user_days=%s moved=%s", days["today"], days["days"], days["user_days"],
             int(moves.sum() - np.trace(moves[:, :4])))
    return report
