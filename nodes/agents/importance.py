"""Rule-based importance of a new short-term event (P3, the note's section 4.5.3, method 1).

importance = base by event type + the modifiers that apply, capped at 1 (``settings.agents.base_importance`` and
``importance_modifiers``). The modifiers' inputs are ``event.metadata`` keys the simulation sets:

| key | type | applies to | modifier |
|---|---|---|---|
| ``request`` / ``proposal`` | bool | conversation | request_or_proposal (a direct request or proposal) |
| ``emotion_intensity`` | float 0-1 | conversation | emotional, when > 0.5 |
| ``goal_related`` | bool | action | goal_related |
| ``failure`` | bool | action | failure (the action failed) |
| ``new_agent`` | bool | observation | new_agent (an agent seen for the first time) |
| ``threat`` | bool | observation | threat (a danger detected) |

A key given always wins. When a conversation's keys are absent the text is read offline with the readers the
chat uses: a request or proposal is what the message-type rules call a request ("…しよう", "could you…",
"お願い"), and the emotion intensity is the chat memories' F2 reading (nodes.text.emotion_f2: intensity 0-100
read as 0-1, so "emotional" is the "over 50 of 100" the chat's knowledge importance uses). Actions and
observations have no general offline reader (whether an action serves a goal, or an agent is new, is the
simulation's knowledge), so their modifiers apply only when the keys say so.
A reflection has no modifiers (the note: higher-order results are always important).
"""

from __future__ import annotations

import math

from lumina_memory.nodes.priming.message_type import detect_message_type
from lumina_memory.nodes.text.emotion_f2 import read_emotion
from lumina_memory.stores.agent_records import AgentEvent
from lumina_memory.stores.errors import InvalidInput

EMOTIONAL_ABOVE = 0.5
MODIFIERS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "conversation": ("request_or_proposal", "emotional"),
    "action": ("goal_related", "failure"),
    "observation": ("new_agent", "threat"),
    "reflection": (),
}
BOOL_KEYS = ("request", "proposal", "goal_related", "failure", "new_agent", "threat")


def _flag(metadata: dict, key: str) -> bool | None:
    if key not in metadata or metadata[key] is None:
        return None
    value = metadata[key]
    if not isinstance(value, bool):
        raise InvalidInput(f"metadata.{key}", f"must be true or false, got {value!r}")
    return value


def emotion_intensity(event: AgentEvent) -> float:
    """``metadata["emotion_intensity"]`` when given (0-1), else F2's offline reading of the content."""
    given = event.metadata.get("emotion_intensity")
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, (int, float)) or not 0 <= given <= 1 or math.isnan(given):
            raise InvalidInput("metadata.emotion_intensity", f"must be a number from 0 to 1, got {given!r}")
        return float(given)
    return read_emotion(event.content).intensity / 100.0


def modifiers_applying(event: AgentEvent) -> list[str]:
    """Names of the modifiers (keys of ``importance_modifiers``) that apply to ``event``."""
    meta = event.metadata
    flags = {key: _flag(meta, key) for key in BOOL_KEYS}
    on: list[str] = []
    if event.type == "conversation":
        asked = (flags["request"], flags["proposal"])
        if any(asked) or (asked == (None, None) and detect_message_type(event.content) == "request"):
            on.append("request_or_proposal")
        if emotion_intensity(event) > EMOTIONAL_ABOVE:
            on.append("emotional")
    elif event.type == "action":
        on += [key for key in ("goal_related", "failure") if flags[key]]
    elif event.type == "observation":
        on += [key for key in ("new_agent", "threat") if flags[key]]
    return on


def rule_importance(event: AgentEvent, params) -> float:
    """The note's rule: ``params.base_importance[type]`` plus the modifiers that apply, capped at 1."""
    base = params.base_importance.get(event.type)
    if base is None:
        raise InvalidInput("type", f"no base importance for {event.type!r}; set base_importance[{event.type!r}]")
    modifiers = params.importance_modifiers
    score = base + sum(modifiers.get(name, 0.0) for name in modifiers_applying(event))
    return round(min(1.0, max(0.0, score)), 4)
