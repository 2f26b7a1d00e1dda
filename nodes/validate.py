"""Input validation: every rejection names the field and happens before anything is written."""

from __future__ import annotations

import re
import time
import unicodedata
from datetime import datetime, timezone

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.settings import SPEAKERS

from .text.redact import KINDS, redact

# S3: a message over max_message_chars is chunked, not refused; beyond this it is refused whatever the
# settings (a 1M-character message is a paste gone wrong or an attack, and costs minutes to embed).
HARD_MAX_CHARS = 1_000_000

# C0/C1 controls other than tab, newline and carriage return; they break terminals, logs and JSON
# consumers downstream and never carry meaning in a chat message.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean_text(text: object, field: str = "text") -> str:
    """A string of valid Unicode without control characters, NFC, stripped, not empty, at most
    HARD_MAX_CHARS; or InvalidInput naming ``field``."""
    if not isinstance(text, str):
        raise InvalidInput(field, f"must be a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(field, f"is not valid Unicode (lone surrogate at position {exc.start})") from None
    if _CONTROL.search(text):
        raise InvalidInput(field, "contains control characters")
    text = unicodedata.normalize("NFC", text).strip()
    if not text:
        raise InvalidInput(field, "is empty")
    if len(text) > HARD_MAX_CHARS:
        raise InvalidInput(field, f"has {len(text):,} characters; nothing over {HARD_MAX_CHARS:,} is accepted")
    return text


def validate_text(text: object, max_chars: int, field: str = "text") -> str:
    """``clean_text`` and at most ``max_chars`` (queries, names: texts that are refused when too long)."""
    text = clean_text(text, field)
    if len(text) > max_chars:
        raise InvalidInput(field, f"has {len(text):,} characters; the limit is {max_chars:,} (LUMINA_MAX_MESSAGE_CHARS)")
    return text


# Degenerate text (S3): a run of white space, or of one character (or a unit of up to 4 repeated), longer
# than this carries no more meaning than its first few; 100,000 「あ」 would otherwise become 50 chunks.
_SPACE_RUN = re.compile(r"\s*\n\s*\n\s*\n\s*|[ \t\u3000]{9,}")  # blank lines first: one match per run
_CHAR_RUN = re.compile(r"(.)\1{16,}", re.DOTALL)
_UNIT_RUN = re.compile(r"(.{2,4}?)\1{8,}", re.DOTALL)
_KEEP_RUN = 8


def compact_text(text: str) -> tuple[str, int | None]:
    """Degenerate runs compacted: long white space to one space (or one blank line), a character or a
    short unit repeated many times to ``_KEEP_RUN`` of them and "…". Returns the text and its original
    length when anything changed (None when nothing did)."""
    out = _SPACE_RUN.sub(lambda m: "\n\n" if "\n" in m.group() else " ", text)
    out = _CHAR_RUN.sub(lambda m: m.group(1) * _KEEP_RUN + "…", out)
    out = _UNIT_RUN.sub(lambda m: m.group(1) * 3 + "…", out)
    return (out, len(text)) if out != text else (text, None)


def redaction_kinds(settings) -> tuple[str, ...]:
    """The PII kinds to redact under ``settings`` (none when pii_redaction is off)."""
    return tuple(settings.pii_kinds) if settings.pii_redaction else ()


def validate_message(
    text: object, field: str = "text", kinds: tuple[str, ...] | None = None
) -> tuple[str, int | None, dict[str, int]]:
    """A message's text as every tier stores it: cleaned (``clean_text``), degenerate runs compacted,
    PII of ``kinds`` redacted (None: every kind, privacy by default). Returns (text, original length if
    compacted, redactions per kind). Long texts are not refused: the caller chunks them (S3)."""
    text = clean_text(text, field)
    text, original = compact_text(text)
    text, counts = redact(text, KINDS if kinds is None else kinds)
    return text, original, counts


def validate_speaker(speaker: object) -> str:
    if not isinstance(speaker, str) or speaker.lower() not in SPEAKERS:
        raise InvalidInput("speaker", f"{str(speaker)[:40]!r} is not one of {', '.join(SPEAKERS)}")
    return speaker.lower()


def parse_ts(value: object, field: str = "ts") -> float:
    """Epoch seconds from a number or an ISO-8601 string; naive times are taken as UTC."""
    if value is None or value == "":
        return time.time()
    if isinstance(value, bool):
        raise InvalidInput(field, "must be epoch seconds or an ISO-8601 string")
    if isinstance(value, (int, float)):
        ts = float(value)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(field, f"{value[:40]!r} is not an ISO-8601 time") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        ts = parsed.timestamp()
    else:
        raise InvalidInput(field, "must be epoch seconds or an ISO-8601 string")
    if not (0 <= ts < 1e11):
        raise InvalidInput(field, f"{ts} is out of range")
    return ts


def validate_user_id(user_id: object) -> str:
    return validate_id(user_id, "user_id")


def validate_source_id(source_id: object) -> str:
    return validate_id(source_id, "source_id")


def _redact_content(content: object, kinds: tuple[str, ...]) -> object:
    if isinstance(content, str):
        return redact(content, kinds)[0]
    if isinstance(content, list):  # content blocks: only the text parts (an image's data is not text)
        return [
            redact(b, kinds)[0] if isinstance(b, str)
            else {**b, "text": redact(b["text"], kinds)[0]} if isinstance(b, dict) and isinstance(b.get("text"), str)
            else b
            for b in content
        ]
    return content


def _redact_message(message: object, kinds: tuple[str, ...]) -> object:
    if isinstance(message, str):
        return redact(message, kinds)[0]
    if isinstance(message, tuple) and len(message) == 2:
        return (message[0], _redact_content(message[1], kinds))
    if isinstance(message, dict) and "content" in message:
        return {**message, "content": _redact_content(message["content"], kinds)}
    content = getattr(message, "content", None)
    if content is not None and hasattr(message, "model_copy"):
        return message.model_copy(update={"content": _redact_content(content, kinds)})
    return message


def redact_run_input(data: object, kinds: tuple[str, ...]) -> object:
    """A run's input with the PII of ``kinds`` redacted in every text it carries (turn, transcript rows,
    chat messages), for the graph to checkpoint instead of the raw input: LangGraph saves the input
    before the first node runs. Anything that is not such text is left as it is (validation judges it)."""
    if not kinds or not isinstance(data, dict):
        return data
    out = dict(data)
    if isinstance(out.get("turn"), dict) and isinstance(out["turn"].get("text"), str):
        out["turn"] = {**out["turn"], "text": redact(out["turn"]["text"], kinds)[0]}
    if isinstance(out.get("transcript"), list):
        out["transcript"] = [
            {**row, "text": redact(row["text"], kinds)[0]} if isinstance(row, dict) and isinstance(row.get("text"), str) else row
            for row in out["transcript"]
        ]
    if out.get("messages") is not None:
        messages = out["messages"]
        out["messages"] = [_redact_message(m, kinds) for m in messages] if isinstance(messages, list) else _redact_message(messages, kinds)
    return out
