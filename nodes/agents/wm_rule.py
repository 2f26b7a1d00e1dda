"""The WM -> STM rule (P1/P2, the note's section 4.3): what working-memory changes become short-term events.

Two WM fields end something when a patch replaces or removes them:
- ``current_action`` (the note's schema): the action that was running is finished, an ``action`` event.
- ``current_conversation`` (an extra key of the WM: ``{"with": [...], "topic" or "content": ...}``): the
  conversation ended, a ``conversation`` event whose participants are its ``with``/``participants``.
The event's metadata keeps the ended value and the importance cues the value itself carries (``failure``,
``goal_related``, ``request``, ``proposal``, ``emotion_intensity``, ``new_agent``, ``threat``), so the rule
importance (nodes.agents.importance) sees them. The event's id is derived from the agent and the ended value,
so two processes applying the same patch make one event, not two.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import NAMESPACE, validate_id

ENDING_FIELDS = {"current_action": "action", "current_conversation": "conversation"}
CUES = ("failure", "goal_related", "request", "proposal", "emotion_intensity", "new_agent", "threat")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


def _participants(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return []
    people = value.get("with", value.get("participants", []))
    people = [people] if isinstance(people, str) else people
    if not isinstance(people, list):
        return []
    return [p for p in people if _is_id(p)]


def _is_id(value: Any) -> bool:
    """Names in a WM that are not agent ids (a display name) are left out of the event's participants."""
    try:
        validate_id(value, "participants")
    except InvalidInput:
        return False
    return True


def ended_events(agent: str, before: dict[str, Any], patch: dict[str, Any], now: float) -> list[dict[str, Any]]:
    """The events (dicts for nodes.agents.events_in.event_of) that applying ``patch`` to ``before`` ends."""
    out = []
    for field, kind in ENDING_FIELDS.items():
        old = before.get(field)
        if old is None or field not in patch or patch[field] == old:
            continue
        cues = {k: old[k] for k in CUES if isinstance(old, dict) and k in old}
        key = json.dumps([agent, field, old], ensure_ascii=False, sort_keys=True, default=str)
        out.append({
            "event_id": str(uuid.uuid5(NAMESPACE, f"agent-wm|{key}")),
            "time": now,
            "type": kind,
            "content": _text(old),
            "participants": _participants(old) if kind == "conversation" else [],
            "metadata": {**cues, "from_wm": field, "ended": old},
        })
    return out
