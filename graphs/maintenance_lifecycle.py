"""The forgetting lifecycle's daily batch (F9) as maintenance-graph nodes, one per phase (nodes.lifecycle.phases).

    lifecycle_owed → lifecycle_days → lifecycle_reembed → lifecycle_relations → lifecycle_deletions → lifecycle_merge
      → lifecycle_summary

- ``lifecycle_owed``       writes earlier runs still owe (a run that stopped between these nodes, a store down)
- ``lifecycle_days``       the notes' steps 1–8 over columns for each due day, one archive transaction per day
                           with its completion mark and the derived writes it owes (nodes.lifecycle.run)
- ``lifecycle_reembed``    step 3.5: compressed texts into the long-term vectors, level payloads
- ``lifecycle_relations``  the graph tier's typed edges
- ``lifecycle_deletions``  auto-deleted memories out of every tier
- ``lifecycle_merge``      A9: near-duplicate low-activity facts merged, history and sources kept; similar
                           low-activity memories folded into one (``report["lifecycle_merge_episodes"]``)
- ``lifecycle_summary``    ``report["lifecycle"]``: level moves (from 1–4 to 1–4 or deleted), memories per level
                           now, reinforced, revived, deleted, links added, writes applied and waiting

The state carries reports only (counts and the 4×5 move table), never the columns. Each node streams its
progress on LangGraph's custom stream as ``{"step", "done", "total"}`` (``stream_mode="custom"``): the CLI
draws a bar per step from it, a LangGraph server's client can too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.config import get_stream_writer

from lumina_memory.nodes.lifecycle.phases import STORE_PHASES, Progress, apply_owed, apply_phase, level_counts, summarise
from lumina_memory.nodes.lifecycle.run import DAY_COUNTS, run_days, today_of
from lumina_memory.nodes.services import Services

if TYPE_CHECKING:
    from .maintenance_state import MaintenanceState


def step_progress(step: str) -> Progress:
    """(done, total) of ``step`` onto the run's custom stream (a no-op when nobody streams it)."""
    write = get_stream_writer()
    return lambda done, total: write({"step": step, "done": int(done), "total": int(total)})


def lifecycle_owed(state: MaintenanceState, services: Services) -> dict:
    applied = apply_owed(services, progress=step_progress("lifecycle_owed"))
    return {"report": {"lifecycle_owed": {"applied": applied}}}


def lifecycle_days(state: MaintenanceState, services: Services) -> dict:
    report = run_days(services, now=state["now"], user_id=state.get("user_id"), progress=step_progress("lifecycle_days"))
    return {"report": {"lifecycle_days": report}}


def _store_phase(name: str):
    step = f"lifecycle_{name}"

    def node(state: MaintenanceState, services: Services) -> dict:
        return {"report": {step: apply_phase(services, name, step_progress(step))}}

    node.__name__ = node.__qualname__ = step
    node.__doc__ = f"Apply the owed {'/'.join(STORE_PHASES[name])} writes (nodes.lifecycle.phases)."
    return node


lifecycle_reembed = _store_phase("reembed")
lifecycle_relations = _store_phase("relations")
lifecycle_deletions = _store_phase("deletions")


def lifecycle_merge(state: MaintenanceState, services: Services) -> dict:
    """A9: near-duplicate low-activity facts merged, keeping history and sources (nodes.lifecycle.merge_low_activity),
    and similar low-activity memories folded into one (nodes.lifecycle.merge_episodes)."""
    from lumina_memory.nodes.lifecycle.merge_low_activity import merge_low_activity_knowledge, users_with_knowledge

    users = [state["user_id"]] if state.get("user_id") else users_with_knowledge(services)
    progress = step_progress("lifecycle_merge")
    candidates, merged = 0, 0
    for done, user in enumerate(users, 1):
        out = merge_low_activity_knowledge(services, user, now=state["now"])
        candidates += out["candidates"]
        merged += len(out["merged"])
        progress(done, len(users))
    return {"report": {"lifecycle_merge": {"users": len(users), "candidates": candidates, "merged": merged},
                       "lifecycle_merge_episodes": _merge_episodes(state, services)}}


def _merge_episodes(state: MaintenanceState, services: Services) -> dict[str, Any]:
    """A9 on episodes, when ``low_activity_enabled`` turns A9 on: similar low-activity memories folded into one
    (nodes.lifecycle.merge_episodes); the writes the merges owe (vectors, mid-term, graph) are applied at once, so
    the folded ones leave every tier in this run."""
    from lumina_memory.nodes.lifecycle.merge_episodes import merge_episodes, users_with_memories

    if not services.settings.lifecycle.low_activity_enabled:  # A9 off: the F notes alone decide (settings_lifecycle)
        return {"enabled": False, "users": 0, "candidates": 0, "merged": 0, "folded": 0, "applied": {}}
    users = [state["user_id"]] if state.get("user_id") else users_with_memories(services)
    day = today_of(services, state["now"])
    candidates, folded, merged = 0, 0, 0
    for user in users:
        out = merge_episodes(services, user, day, now=state["now"])
        candidates += out["candidates"]
        merged += len(out["merged"])
        folded += sum(len(absorbed) for _survivor, absorbed in out["merged"])
    applied = apply_owed(services) if merged else {}
    return {"enabled": True, "users": len(users), "candidates": candidates, "merged": merged, "folded": folded,
            "applied": applied}


def _done(report: dict[str, Any], step: str, nothing: dict[str, Any]) -> dict[str, Any]:
    """``step``'s report, or ``nothing`` done when it was skipped (another worker held its lease)."""
    return nothing if report[step].get("skipped") else report[step]


def lifecycle_summary(state: MaintenanceState, services: Services) -> dict:
    """The batch's summary (``summarise``); steps skipped because another worker was running the batch count
    as nothing done here and are named under ``skipped`` with the reason."""
    report: dict[str, Any] = state.get("report", {})
    no_days = {"today": today_of(services, state["now"]), "days": 0, "user_days": 0,
               "transitions": [[0] * 5 for _ in range(4)], **dict.fromkeys(DAY_COUNTS, 0), "compression": {}}
    phases = {name: _done(report, f"lifecycle_{name}", {"applied": {}, "waiting": 0}) for name in STORE_PHASES}
    summary = summarise(_done(report, "lifecycle_days", no_days),
                        _done(report, "lifecycle_owed", {"applied": {}})["applied"], phases,
                        level_counts(services, state.get("user_id")))
    passed = {step: report[step]["reason"] for step in (f"lifecycle_{n}" for n in ("owed", "days", *STORE_PHASES))
              if report[step].get("skipped")}
    if passed:
        summary["skipped"] = passed
    return {"report": {"lifecycle": summary}}


LIFECYCLE_STEPS = (lifecycle_owed, lifecycle_days, lifecycle_reembed, lifecycle_relations, lifecycle_deletions,
                   lifecycle_merge, lifecycle_summary)
