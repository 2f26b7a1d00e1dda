"""detect_boundary: place the incoming turn in the open segment, or close that segment first (L2)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from langchain_core.messages import RemoveMessage

from stores import ids

from .boundary_rules import BoundaryInput, BoundaryRules, decide
from .domain import detect_domain

_CHARACTERS = ("lumina", "clarisse", "nox")


def segment_domain(turns: list[dict]) -> str:
    """The domain at least two turns of the segment agree on, else ''."""
    votes = Counter(d for d in (detect_domain(t["text"]) for t in turns) if d)
    if not votes:
        return ""
    domain, count = votes.most_common(1)[0]
    return domain if count >= 2 else ""


def similarity_to_segment(services, turns: list[dict], text: str) -> float:
    vectors = services.embedder.embed([t["text"] for t in turns] + [text])
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


def detect_boundary(state: dict, ctx, services) -> dict:
    turns: list[dict] = state.get("turns") or []
    if state.get("flush"):
        if not turns:
            return {"flush": False, "boundary": {"close": False, "reason": "nothing to flush"}}
        return {
            "flush": False,
            "pending": _close_pending(state, "explicit"),
            "turns": [],
            "segment_id": "",
            "domain": "",
            "character_turns": {c: 0 for c in _CHARACTERS},
            "boundary": {"close": True, "reason": "explicit", "closed_segment": state["segment_id"]},
            "messages": _trim_messages(state, 0),
        }
    incoming = state.get("incoming")
    if not incoming:
        return {}
    rules = rules_for(services.settings, ctx)
    domain_now = detect_domain(incoming["text"])
    similarity = None
    if turns and len(turns) >= rules.similarity_min_turns:
        similarity = similarity_to_segment(services, turns, incoming["text"])
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
        user_id = ctx.user_id
        update.update(
            segment_id=ids.segment_id(user_id, incoming["turn_id"]),
            started_at=incoming["ts"],
            character_turns={c: 0 for c in _CHARACTERS},
        )
    counts = dict(update.get("character_turns") or state.get("character_turns") or {c: 0 for c in _CHARACTERS})
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
