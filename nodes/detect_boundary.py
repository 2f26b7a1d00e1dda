"""detect_boundary: place the incoming turn in the open segment, or close that segment first (L2)."""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np
from langchain_core.messages import RemoveMessage

from lumina_memory.nodes.characters import CHARACTERS
from lumina_memory.stores import ids

from .boundary_rules import BoundaryInput, BoundaryRules, decide
from .domain import detect_domain

_CHECKED_MAX = 100_000
log = logging.getLogger("lumina.recovery")


def reconcile_open_segment(state: dict, ctx, services) -> dict:
    """The update that empties the open segment when its turns are archived already.

    A checkpoint can be older than the archive: a process killed after a run's archive commit and
    before that run's checkpoint leaves the open segment of the previous run in the state, while its
    turns went into a closed, archived segment. Going on with it would put those turns in a second
    segment (with the first one's id). The turns of an open segment are archived together or not at
    all, so its first turn tells; each open segment is looked up once per process."""
    turns = state.get("turns") or []
    if not turns:
        return {}
    checked = getattr(services, "open_segments_checked", None)
    key = (ctx.user_id, turns[0]["turn_id"])
    if checked is not None and key in checked:
        return {}
    if not services.stores.archive.has_turn(ctx.user_id, turns[0]["turn_id"]):
        if checked is not None:
            if len(checked) >= _CHECKED_MAX:
                checked.clear()
            checked.add(key)
        return {}
    log.warning("user=%s segment=%s: the open segment's %d turn(s) are archived already (the checkpoint "
                "predates the last archive commit); starting a new segment", ctx.user_id,
                state.get("segment_id", ""), len(turns))
    return {"turns": [], "segment_id": "", "domain": "", "character_turns": {c: 0 for c in CHARACTERS}}


def segment_domain(turns: list[dict]) -> str:
    """The domain at least two turns of the segment agree on, else ''."""
    votes = Counter(d for d in (detect_domain(t["text"]) for t in turns) if d)
    if not votes:
        return ""
    domain, count = votes.most_common(1)[0]
    return domain if count >= 2 else ""


def similarity_to_segment(services, turns: list[dict], text: str, vector_of: dict[str, np.ndarray] | None = None) -> float:
    texts = [t["text"] for t in turns] + [text]
    if vector_of is not None:
        vectors = np.stack([vector_of[t] for t in texts])
    else:
        vectors = services.embedder.embed(texts)
    centroid = vectors[:-1].mean(axis=0)
    norm = float(np.linalg.norm(centroid)) or 1.0
    return float(vectors[-1] @ centroid / norm)


def rules_for(settings, ctx) -> BoundaryRules:
    return BoundaryRules(
        similarity_threshold=ctx.similarity_threshold if ctx.similarity_threshold is not None else settings.boundary_similarity,
        similarity_min_turns=settings.boundary_similarity_min_turns,
        idle_seconds=ctx.idle_seconds if ctx.idle_seconds is not None else settings.boundary_idle_seconds,
        max_turns=ctx.max_turns if ctx.max_turns is not None else settings.short_term_max_turns,
        shift_phrases=settings.shift_phrases,
    )


def _close_pending(state: dict, reason: str) -> list[dict]:
    closed = {
        "segment_id": state["segment_id"],
        "turns": list(state["turns"]),
        "domain": state.get("domain", ""),
        "close_reason": reason,
        "stages": [],
    }
    return [*state.get("pending", []), closed]


def _trim_messages(state: dict, keep_last: int) -> list[RemoveMessage]:
    """Chat messages of a closed segment leave the state with it (L1 keeps ≤ 12 turns); they live
    on in the archive. ``keep_last`` keeps the message that opens the new segment."""
    messages = state.get("messages") or []
    drop = messages[: len(messages) - keep_last] if keep_last else messages
    return [RemoveMessage(id=m.id) for m in drop if m.id]


def _close_now(state: dict) -> dict:
    """Close the open segment on request (flush)."""
    turns = state.get("turns") or []
    if not turns:
        return {"flush": False, "boundary": {"close": False, "reason": "nothing to flush"}}
    return {
        "flush": False,
        "pending": _close_pending(state, "explicit"),
        "turns": [],
        "segment_id": "",
        "domain": "",
        "character_turns": {c: 0 for c in CHARACTERS},
        "boundary": {"close": True, "reason": "explicit", "closed_segment": state["segment_id"]},
        "messages": _trim_messages(state, 0),
    }


def _place(state: dict, incoming: dict, rules: BoundaryRules, ctx, services, vector_of=None) -> dict:
    """The update that puts ``incoming`` into the open segment, closing that segment first when a
    rule says the topic moved on."""
    turns: list[dict] = state.get("turns") or []
    domain_now = detect_domain(incoming["text"])
    similarity = None
    if turns and len(turns) >= rules.similarity_min_turns:
        similarity = similarity_to_segment(services, turns, incoming["text"], vector_of)
    decision = decide(
        BoundaryInput(
            open_turns=len(turns),
            idle_seconds=incoming["ts"] - state.get("last_update", incoming["ts"]) if turns else 0.0,
            similarity=similarity,
            text=incoming["text"],
            speaker=incoming["speaker"],
            domain_before=state.get("domain", ""),
            domain_now=domain_now,
        ),
        rules,
    )
    update: dict = {"incoming": None, "boundary": {**decision.as_dict(), "turn_id": incoming["turn_id"]}}
    if decision.close:
        update["pending"] = _close_pending(state, decision.reason)
        update["boundary"]["closed_segment"] = state["segment_id"]
        update["messages"] = _trim_messages(state, 1 if incoming["source_id"].startswith("msg-") else 0)
        turns = []
    if not turns:
        update.update(
            segment_id=ids.segment_id(ctx.user_id, incoming["turn_id"]),
            started_at=incoming["ts"],
            character_turns={c: 0 for c in CHARACTERS},
        )
    counts = dict(update.get("character_turns") or state.get("character_turns") or {c: 0 for c in CHARACTERS})
    if incoming["speaker"] in counts:
        counts[incoming["speaker"]] += 1
    new_turns = [*turns, incoming]
    update.update(
        turns=new_turns,
        character_turns=counts,
        last_update=incoming["ts"],
        domain=segment_domain(new_turns),
    )
    return update


def _place_batch(state: dict, arrivals: list[dict], rules: BoundaryRules, ctx, services) -> tuple[dict, dict]:
    """Each arrival placed in order exactly as one run per turn would; returns (update, the state as
    the update leaves it)."""
    view = dict(state)
    update: dict = {"arrivals": None, "incoming": None}
    texts = list(dict.fromkeys([t["text"] for t in view.get("turns") or []] + [t["text"] for t in arrivals]))
    vector_of = dict(zip(texts, services.embedder.embed(texts))) if texts else {}
    closed: list[str] = []
    for incoming in arrivals:
        step = _place(view, incoming, rules, ctx, services, vector_of)
        step.pop("messages", None)
        if "closed_segment" in step["boundary"]:
            closed.append(step["boundary"]["closed_segment"])
        view.update(step)
        update.update(step)
    if closed:
        update["messages"] = _trim_messages(state, 0)  # transcript turns are not chat messages
    if arrivals:
        update["boundary"] = {**update["boundary"], "turns": len(arrivals), "closed_segments": closed}
    return update, view


def detect_boundary(state: dict, ctx, services) -> dict:
    reset = reconcile_open_segment(state, ctx, services)
    if reset:
        return {**reset, **_detect(state | reset, ctx, services)}
    return _detect(state, ctx, services)


def _detect(state: dict, ctx, services) -> dict:
    arrivals = state.get("arrivals")
    if arrivals is not None:
        update, view = _place_batch(state, arrivals, rules_for(services.settings, ctx), ctx, services)
        if state.get("flush"):
            closing = _close_now(view)
            if closing["boundary"]["close"]:
                closing["boundary"]["closed_segments"] = [*update.get("boundary", {}).get("closed_segments", []), view["segment_id"]]
                closing["messages"] = _trim_messages(state, 0)
            update.update(closing)
        return update
    if state.get("flush"):
        return _close_now(state)
    incoming = state.get("incoming")
    if not incoming:
        return {}
    return _place(state, incoming, rules_for(services.settings, ctx), ctx, services)
