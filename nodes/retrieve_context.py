"""retrieve_context: on a user turn, recall what matters for the reply (L6), prime it (A1) and pick who answers."""

from __future__ import annotations

from .activity import QUERY_CHARS, record
from .character_select import choose_character
from .priming import prime
from .retrieval.recall import recall
from .retrieval.resonance import emotion_of


def retrieve_context(state: dict, ctx, services) -> dict:
    turns = state.get("turns") or []
    if not turns or turns[-1]["speaker"] != "user":
        return {}
    # A recall query is limited (max_query_chars) and a turn may be longer (a part of a long message):
    # its end is what the user asks now.
    query = turns[-1]["text"][-services.settings.max_query_chars:]
    now_ts = turns[-1]["ts"]
    # F7: the emotion of the memory recalled last carries over within a session, not across an idle gap.
    carried = state.get("current_emotion")
    if carried and now_ts - carried["ts"] > services.settings.boundary_idle_seconds:
        carried = None
    items = recall(
        services,
        ctx.user_id,
        query,
        purpose=ctx.purpose,
        open_turns=turns[:-1] or None,
        now_ts=now_ts,
        emotion=carried,
    )
    responder = choose_character(query, state.get("character_turns") or {}, ctx.character)
    # Priming reuses this recall for its knowledge & episodes channel (one recall per turn).
    primed = prime(services, ctx.user_id, query, message_type=getattr(ctx, "message_type", None), character=responder,
                   now_ts=turns[-1]["ts"], recalled=items, preset=getattr(ctx, "priming_preset", "default"))
    # A10: the question (already redacted, S7), what came back, and from where.
    record(services, ctx.user_id, "recall", turn_id=turns[-1]["turn_id"], query=query[:QUERY_CHARS], items=len(items),
           segments=[i["segment_id"] for i in items[:5]], tiers=sorted({t for i in items for t in i["tiers"]}),
           message_type=primed.message_type, primed_tokens=primed.tokens)
    current = emotion_of(services, ctx.user_id, items, now_ts) or (dict(carried, ts=now_ts) if carried else None)
    return {"recalled": items, "primed": primed.model_dump(), "responder": responder, "current_emotion": current}
