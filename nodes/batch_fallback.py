"""batch_fallback: a user turn that will be answered starts the daily batch that user missed (F9's fallback).

The check is a cached lookup (one small archive query per user and batch day); the batch itself runs in the
background (nodes.lifecycle.catch_up), so the reply never waits for it. Transcript replays (``respond`` off)
and the characters' own turns never start it: they are not the user coming back to talk.
"""

from __future__ import annotations

from lumina_memory.nodes.lifecycle.catch_up import catch_up_if_owed


def batch_fallback(state: dict, ctx, services) -> dict:
    incoming = state.get("incoming")
    if not ctx.respond or not incoming or incoming.get("speaker") != "user":
        return {}
    catch_up_if_owed(services, ctx.user_id, float(incoming["ts"]))
    return {}
