"""Knowledge's periodic steps (issue 18) as maintenance-graph nodes, after the lifecycle's.

    knowledge_daily → knowledge_weekly → knowledge_monthly

- ``knowledge_daily``   P4 consolidation: users with episodes archived since the last run get their similar
                        episodes across days grouped into semantic memories (nodes.knowledge.consolidate);
                        knowledge items idle too long are marked of low activity (nodes.knowledge.forgetting);
                        the items the user raised become ``issue`` facts and the resolved ones end with the plans
                        about them (A5's propagation, nodes.knowledge.resolutions)
- ``knowledge_weekly``  A7 review: every user's facts folded again under the current settings, duplicates merged
                        and contradictions resolved (nodes.knowledge.review), once per local ISO week
- ``knowledge_monthly`` once per local month: knowledge items of low activity long enough and not recalled since
                        are forgotten (their rows stay: the record), and procedures that keep failing
                        (confidence below ``LUMINA_PROCEDURES__FORGET_BELOW_CONFIDENCE`` after at least
                        ``…__FORGET_MIN_OUTCOMES`` outcomes) or that nobody used for 180 days are forgotten.

What they last did is kept under ``knowledge`` in ``maintenance-state.json``; with a ``user_id`` (the CLI's
``--user``, a cron's context) both run for that user now, whatever the schedule.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from lumina_memory.nodes.knowledge.consolidate import consolidate_user
from lumina_memory.nodes.knowledge.forgetting import forget_idle, forget_unused_procedures, mark_low_activity
from lumina_memory.nodes.knowledge.resolutions import propagate_resolutions
from lumina_memory.nodes.knowledge.tiers import sync_best_effort
from lumina_memory.nodes.knowledge.review import review_user
from lumina_memory.nodes.services import Services

from .maintenance_lifecycle import step_progress
from .maintenance_state import load_state, update_state

if TYPE_CHECKING:
    from .maintenance_state import MaintenanceState


def _saved(services: Services) -> dict:
    return dict(load_state(services).get("knowledge", {}))


def _save(services: Services, changes: dict) -> None:
    """Only the entries this step changed: knowledge's steps may run at once in two workers (own leases)."""
    update_state(services, "knowledge", changes)


def _users_with_episodes_since(services: Services, since: float) -> tuple[list[str], float]:
    """Users with segments archived at or after ``since`` (the archive's wall clock, not the run's ``now``,
    which a simulated clock may put anywhere), and the newest such time: the next run's mark."""
    rows = services.stores.archive.archived_since(since)
    return sorted({user for user, _segment, _ts in rows}), max((ts for _u, _s, ts in rows), default=since)


def knowledge_daily(state: MaintenanceState, services: Services) -> dict:
    knowledge = _saved(services)
    now = state["now"]
    since = float(knowledge.get("consolidated_until", 0.0))
    due, mark = _users_with_episodes_since(services, since)
    users = [state["user_id"]] if state.get("user_id") else due
    progress = step_progress("knowledge_daily")
    totals = {"users": len(users), "groups": 0, "written": 0, "removed": 0, "issues": 0, "resolved": 0, "ended": 0}
    for done, user in enumerate(users, 1):
        out = consolidate_user(services, user, now=now)
        for key in ("groups", "written", "removed"):
            totals[key] += out.get(key, 0)
        propagated = propagate_resolutions(services, user, now=now)
        for key, n in propagated.items():
            totals[key] += n
        if any(propagated.values()):  # the graph and the knowledge vectors show the items now, not at the next flush
            sync_best_effort(services, user, reason="issue resolutions")
        progress(done, len(users))
    totals["low_activity"] = mark_low_activity(services, now, state.get("user_id"))
    if not state.get("user_id"):
        _save(services, {"consolidated_until": mark})
    return {"report": {"knowledge_daily": totals}}


def _week(now: float, zone: ZoneInfo) -> str:
    year, week, _ = datetime.fromtimestamp(now, UTC).astimezone(zone).isocalendar()
    return f"{year}-W{week:02d}"


def knowledge_weekly(state: MaintenanceState, services: Services) -> dict:
    knowledge = _saved(services)
    week = _week(state["now"], ZoneInfo(services.settings.timezone))
    if not state.get("user_id") and knowledge.get("reviewed_week") == week:
        return {"report": {"knowledge_weekly": {"week": week, "due": False}}}
    users = [state["user_id"]] if state.get("user_id") else _users_with_episodes_since(services, 0.0)[0]
    progress = step_progress("knowledge_weekly")
    changed = 0
    for done, user in enumerate(users, 1):
        changed += review_user(services, user, now=state["now"])["changed"]
        progress(done, len(users))
    if not state.get("user_id"):
        _save(services, {"reviewed_week": week})
    return {"report": {"knowledge_weekly": {"week": week, "due": True, "users": len(users), "changed": changed}}}


def knowledge_monthly(state: MaintenanceState, services: Services) -> dict:
    from lumina_memory.nodes.knowledge.procedures import params_of

    knowledge = _saved(services)
    month = datetime.fromtimestamp(state["now"], UTC).astimezone(ZoneInfo(services.settings.timezone)).strftime("%Y-%m")
    if not state.get("user_id") and knowledge.get("forgot_month") == month:
        return {"report": {"knowledge_monthly": {"month": month, "due": False}}}
    items_forgotten = forget_idle(services, state["now"], state.get("user_id"))
    table = getattr(services.stores.archive, "procedures", None)
    params = params_of(services)
    users = [state["user_id"]] if state.get("user_id") else _users_with_episodes_since(services, 0.0)[0]
    forgotten: dict[str, list[str]] = {}
    for user in users if table is not None else ():
        gone = table.forget_unreliable(user, params.forget_below_confidence, params.forget_min_outcomes,
                                       now=state["now"])
        gone += forget_unused_procedures(services, user, state["now"])
        if gone:
            forgotten[user] = gone
    if not state.get("user_id"):
        _save(services, {"forgot_month": month})
    return {"report": {"knowledge_monthly": {"month": month, "due": True, "users": len(users),
                                             "knowledge_forgotten": len(items_forgotten),
                                             "procedures_forgotten": sum(map(len, forgotten.values()))}}}


KNOWLEDGE_STEPS = (knowledge_daily, knowledge_weekly, knowledge_monthly)
