"""Check a run's input before the graph persists any of it, and claim a thread for one user.

LangGraph writes a run's input into the thread's checkpoint (the ``input`` checkpoint) before the first
node runs, so a rejection inside ``ingest_turn`` comes too late: the refused text would already sit in
the checkpoint database. ``ingest_turn.check_run_input`` applies the same validation to the input itself,
with the checks of this module; the graph (graphs.input_guard) calls it before a run starts. ``ingest_turn`` still validates
everything (a caller may drive the nodes another way); this is the early, write-free copy of it.

A thread belongs to the user of its first run (``owner`` in the state): another user's run on it would
read the owner's open segment in recall, and a flush would archive the owner's turns under the other
user. ``check_owner`` refuses that, answering "not found" rather than "forbidden" (L11: a caller learns
nothing about other users' threads).

Two refusals have their own names, for callers that report them: ``MessageTooLong`` (over
``max_ingest_chars``: ingest time grows with a message's length, so the limit is what ingest does in
bounded time) and ``SourceReused`` (a source id already stored with another text: taking the new text
silently would leave the old one in every tier derived from it, dropping it silently would lose it).
"""

from __future__ import annotations

from typing import Any, Mapping

from lumina_memory.stores.errors import InvalidInput

INPUT_KEYS = ("messages", "turn", "transcript", "flush")

LIMIT_SETTING = "LUMINA_MAX_INGEST_CHARS"


class MessageTooLong(InvalidInput):
    """A message longer than ingest takes (``max_ingest_chars``); nothing of it was written."""

    def __init__(self, field: str, length: int, limit: int):
        self.length, self.limit = length, limit
        super().__init__(field, f"has {length:,} characters; ingest takes at most {limit:,} ({LIMIT_SETTING}): "
                                "split it into several messages, or raise the setting")

    def __reduce__(self):  # copy and pickle rebuild it from these
        return type(self), (self.field, self.length, self.limit)


class SourceReused(InvalidInput):
    """A source id already stored (archived, or in the thread's open segment) with a different text."""

    def __init__(self, field: str, source_id: str):
        self.source_id = source_id
        super().__init__(field, f"{source_id!r} is already stored with different text; a source_id names one "
                                "text: send the new text under a new source_id")

    def __reduce__(self):
        return type(self), (self.field, self.source_id)


def check_length(text: str, limit: int, field: str) -> None:
    """MessageTooLong unless ``text`` (as stored: cleaned and compacted) has at most ``limit`` characters."""
    if len(text) > limit:
        raise MessageTooLong(field, len(text), limit)


def message_text(content: object) -> str | object:
    """The text of a chat message's content: a string as is; LangChain's standard content blocks
    (``[{"type": "text", "text": ...}, "plain string", {"type": "image", ...}]``) → their text parts
    joined by newlines. Anything else is returned unchanged, for validate_text to refuse by type."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return content


def check_owner(owner: object, user_id: str) -> None:
    """A thread already used by another user is, for this user, a thread that does not exist."""
    if owner and owner != user_id:
        raise InvalidInput(
            "thread_id", f"not found for user_id {user_id!r}; a thread belongs to one user, start a new thread"
        )


def thread_owner(values: Mapping[str, Any] | None) -> str | None:
    return (values or {}).get("owner") or None
