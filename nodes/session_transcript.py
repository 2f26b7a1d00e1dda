"""F10: a coding agent's session transcript (Claude Code's JSONL: one entry per line with ``type: user`` or
``type: assistant``) read as conversation turns. Pure.

The notes' format: ``{"type": "user", "uuid", "message": {"role", "content"}, "timestamp"}`` where
``content`` is a string or a list of blocks (text, tool_use, tool_result, thinking, image). What becomes a
turn, and why:

- a user entry's text blocks (a user entry of tool results only is the tool answering, not the user: skipped);
- the assistant's text blocks, every assistant entry up to the next user message joined into one reply
  (the agent writes one entry per block: thinking, text, tool_use …);
- slash commands are skipped with the reply they got (the notes: ``/compact`` is no conversation), as are
  the entries the agent marks as meta (``isMeta``: caveats it inserts) or as a side chain (a sub-agent);
- every other type (``summary``, ``queue-operation``, ``file-history-snapshot`` …) carries no turn.

A turn's source id is its entry's ``uuid`` (the first entry of a joined reply), so a transcript ingested again
(at each session end, as the notes trigger it) adds only the turns it had not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

TURN_TYPES = ("user", "assistant")
_COMMAND = re.compile(r"^\s*(?:/[A-Za-z]|<command-(?:name|message|args)>|<local-command-)")


def is_session_entry(obj: object) -> bool:
    """A line of the session format: an object with a ``type`` and no ``user_id`` (our own rows have one)."""
    return isinstance(obj, Mapping) and isinstance(obj.get("type"), str) and "user_id" not in obj


def text_of(content: object) -> str:
    """The text blocks of a message's content (a string is its own text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, Mapping) and b.get("type") == "text" and b.get("text"))
    return ""


def _is_tool_result(content: object) -> bool:
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)


def session_rows(entries: Iterable[tuple[int, Mapping[str, Any]]], user_id: str,
                 speaker: str) -> tuple[list[tuple[int, dict[str, Any]]], dict[str, int]]:
    """(line, row) of each turn of the entries ((line, entry) in file order), rows as ``ingest`` takes them
    (user_id, speaker, text, ts, source_id), the assistant's turns spoken by ``speaker``; and the counts of
    what was skipped (``commands``, ``meta``, ``tool_results``, ``other``)."""
    rows: list[tuple[int, dict[str, Any]]] = []
    skipped = {"commands": 0, "meta": 0, "tool_results": 0, "other": 0}
    reply: tuple[int, dict[str, Any]] | None = None
    in_command = False

    def close_reply() -> None:
        nonlocal reply
        if reply is not None and reply[1]["text"].strip():
            rows.append(reply)
        reply = None

    for line, entry in entries:
        kind = entry.get("type")
        if kind not in TURN_TYPES:
            skipped["other"] += 1
            continue
        if entry.get("isMeta") or entry.get("isSidechain"):
            skipped["meta"] += 1
            continue
        message = entry.get("message") if isinstance(entry.get("message"), Mapping) else {}
        content = message.get("content", "")
        if kind == "user":
            if _is_tool_result(content):
                skipped["tool_results"] += 1
                continue
            close_reply()
            text = text_of(content)
            in_command = bool(_COMMAND.match(text))
            if in_command:
                skipped["commands"] += 1
                continue
            if text.strip():
                rows.append((line, {"user_id": user_id, "speaker": "user", "text": text,
                                    "ts": entry.get("timestamp"), "source_id": entry.get("uuid")}))
            continue
        text = text_of(content)
        if in_command:  # the command's output, not a reply
            skipped["commands"] += 1
            continue
        if not text.strip():  # thinking or tool calls only: nothing said
            continue
        if reply is None:
            reply = (line, {"user_id": user_id, "speaker": speaker, "text": text, "ts": entry.get("timestamp"),
                            "source_id": entry.get("uuid")})
        else:
            reply[1]["text"] += "\n\n" + text
    close_reply()
    return rows, skipped
