"""Which kind of message this is (A1: greeting, question, request, heartbeat), offline, Japanese and English.

The rules are data (message_type_rules.py); this module only applies them. ``default`` is a message none of
the four describes (a statement, small talk); it is primed with the settings' default budget.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Literal

from . import message_type_rules as rules

MessageType = Literal["greeting", "question", "request", "heartbeat", "default"]
MESSAGE_TYPES: tuple[str, ...] = ("greeting", "question", "request", "heartbeat", "default")


@lru_cache(maxsize=1)
def _compiled() -> dict[str, re.Pattern]:
    def union(table: dict[str, list[str]]) -> re.Pattern:
        return re.compile("|".join(f"(?:{p})" for lang in table for p in table[lang]), re.IGNORECASE)

    return {"heartbeat": union(rules.HEARTBEAT), "greeting": union(rules.GREETING), "request": union(rules.REQUEST),
            "question": union(rules.QUESTION), "filler": re.compile(rules.FILLER, re.IGNORECASE)}


def detect_message_type(text: str) -> MessageType:
    """The message's type by the rules; an empty message is a heartbeat (nothing was said)."""
    patterns = _compiled()
    message = unicodedata.normalize("NFKC", text or "").strip()
    if not message or patterns["heartbeat"].search(message):
        return "heartbeat"
    rest = patterns["greeting"].sub(" ", message)
    if rest != message and patterns["filler"].match(rest):
        return "greeting"
    for kind in rules.ORDER[1:]:
        if patterns[kind].search(rest.strip()):
            return kind  # type: ignore[return-value]
    return "default"


def resolve_message_type(text: str, given: str | None) -> MessageType:
    """The type the caller gave (run context), checked, else the detected one."""
    if given is None:
        return detect_message_type(text)
    if given not in MESSAGE_TYPES:
        raise ValueError(f"unknown message_type {given!r}; choose one of {', '.join(MESSAGE_TYPES)}")
    return given  # type: ignore[return-value]
