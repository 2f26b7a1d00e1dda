"""Input validation: every rejection names the field and happens before anything is written."""

from __future__ import annotations

import re
import time
import unicodedata
from datetime import datetime, timezone

from stores.errors import InvalidInput
from stores.ids import validate_id
from stores.settings import SPEAKERS

# C0/C1 controls other than tab, newline and carriage return; they break terminals, logs and JSON
# consumers downstream and never carry meaning in a chat message.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def validate_text(text: object, max_chars: int, field: str = "text") -> str:
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
    if len(text) > max_chars:
        raise InvalidInput(field, f"has {len(text):,} characters; the limit is {max_chars:,} (LUMINA_MAX_MESSAGE_CHARS)")
    return text


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
