"""The stages of recall that fill the budget (see recall_stages.STAGES): the knowledge a question asks for leads,
the episodes are packed in what is left, and the facts only near the question follow in what remains."""

from __future__ import annotations

from ..knowledge.recall_items import knowledge_hits, with_knowledge
from ..knowledge.recall_procedures import procedure_hits
from .packing import pack_turns
from .recall_run import RecallRun
from .segment_items import segment_items


def lead_knowledge(run: RecallRun) -> RecallRun:
    """Finds the facts and procedures the question asks for, and the budget left once those that fit lead."""
    # The facts the question asks about (it names their attribute or subject) lead, current ones first, then the
    # procedure a how-question asks for; they take their share of the budget. Facts that are only near the
    # question in meaning follow the episodes, in what budget is left: their source turn is often packed already
    # (LoCoMo: leading with them cost evidence at 1,024 tokens).
    request, services, on = run.request, run.services, run.on
    user_id, query, limit, shown = request.user_id, request.query, request.limit, request.shown_facts
    run.facts = facts = (knowledge_hits(services, user_id, query, limit=3 if limit is None else max(1, limit // 2),
                                        query_vector=run.qvec) if on["knowledge"] else [])
    run.asked = [f for f in facts if "cue" in f["channels"] and f.get("item_id") not in shown]
    run.related = [f for f in facts if "cue" not in f["channels"] and f.get("item_id") not in shown]
    run.how = procedure_hits(services, user_id, query) if on["procedures"] else []
    run.budget = run.full_budget = request.budget
    if (run.asked or run.how) and run.budget is not None:
        # Only what fits leads: a recipe longer than the whole budget would overflow it, and charged anyway it
        # would leave the episodes nothing.
        run.asked, run.how, run.budget = _leading_within(run.asked, run.how, run.budget, request.item_overhead)
    return run


def _leading_within(asked: list[dict], how: list[dict], budget: int, item_overhead: int
                    ) -> tuple[list[dict], list[dict], int]:
    """The asked facts and procedures, in order, that fit ``budget`` (each paying ``item_overhead``), and the
    budget they leave."""
    kept: tuple[list[dict], list[dict]] = ([], [])
    for target, entries in zip(kept, (asked, how)):
        for entry in entries:
            if entry["tokens"] + item_overhead <= budget:
                target.append(entry)
                budget -= entry["tokens"] + item_overhead
    return kept[0], kept[1], budget


def pack_items(run: RecallRun) -> RecallRun:
    """Packs the ranked turns into items at the settings' granularity: turns, segments, or turns then segments."""
    request, services, index = run.request, run.services, run.index
    settings, turns, budget, limit = services.settings, index.turns, run.budget, request.limit
    granularity = settings.recall_granularity
    if granularity == "auto":
        granularity = "turns" if budget is not None else "segments"
    ordered, tiers, user_id = run.ordered, run.tiers, request.user_id
    overhead, dates_once, groups = request.item_overhead, request.dates_once, request.pointer_groups
    if granularity == "mixed" and budget is not None:
        ordered = list(ordered)  # read twice below
        items = pack_turns(ordered, turns, tiers, int(budget * settings.recall_mixed_turn_share), None, settings,
                           run.wanted, run.q_terms, index.token_counts, run.pick, overhead, dates_once, groups)
        seen = {turns[index.position[t]].segment_id for item in items for t in item["turn_ids"]}
        used = sum(item["tokens"] for item in items)
        rest_ordered = [c for c in ordered if turns[c[1]].segment_id not in seen]
        items += segment_items(rest_ordered, turns, tiers, services, user_id, budget - used, None)
    elif granularity == "segments":
        items = segment_items(ordered, turns, tiers, services, user_id, budget,
                              limit or (None if budget else run.wanted))
    else:
        items = pack_turns(ordered, turns, tiers, budget, limit if budget is None else None, settings, run.wanted,
                           run.q_terms, index.token_counts, run.pick, overhead, dates_once, groups, run.refunds)
        if run.refunds is not None and run.full_budget is not None:
            run.full_budget += run.refunds.tokens
    run.items = items
    return run


def place_knowledge(run: RecallRun) -> RecallRun:
    """Puts the asked facts and procedure first, every fact ordering the episodes, and the related facts after
    them in what budget is left."""
    if not (run.on["knowledge"] or run.how):
        return run
    overhead, limit, full_budget = run.request.item_overhead, run.request.limit, run.full_budget
    episodes = with_knowledge(run.items, run.facts)[len(run.facts):]  # every fact orders the episodes (current first)
    items = [*run.asked, *run.how, *episodes]
    if full_budget is not None:
        room = full_budget - sum(i["tokens"] + overhead for i in items)
        for fact in run.related:
            if fact["tokens"] + overhead <= room:
                items.append(fact)
                room -= fact["tokens"] + overhead
    else:
        items += run.related
    if limit is not None:
        items = items[:limit]
    run.items = items
    return run
