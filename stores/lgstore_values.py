"""What LuminaStore (stores.langgraph_store) accepts and how it shows it: key, label, value and query
checks (a named InvalidInput before anything is written), namespace prefixes and matching, timestamps."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import MatchCondition

from .errors import InvalidInput
from .kv_duckdb import ns_path

MAX_KEY_CHARS = 1024
# Defaults of settings.max_query_chars / max_store_value_bytes (graphs.lumina_store passes the settings'):
# an unbounded query or value costs minutes of tokenising and embedding before anything is refused.
MAX_QUERY_CHARS, MAX_VALUE_BYTES = 2_000, 256_000


def _default_tokenize(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInput("key", "must be a non-empty string")
    if len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise InvalidInput("key", f"must be at most {MAX_KEY_CHARS} characters without NUL bytes")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("key", "is not valid UTF-8 text") from None
    return key


def _check_labels(namespace: Sequence[str], field: str = "namespace") -> None:
    for label in namespace:
        if len(label) > MAX_KEY_CHARS or "\x00" in label:
            raise InvalidInput(field, f"labels must be at most {MAX_KEY_CHARS} characters without NUL bytes")
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(field, f"label {label[:40]!r} is not valid UTF-8 text") from None


def _prefixes(namespace: Sequence[str]) -> list[str]:
    return [ns_path(namespace[: i + 1]) for i in range(len(namespace))]


def _ns_match(cond: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = cond.path
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if cond.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


def _ts(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _value_json(value: Any) -> str:
    """The value as stored, or InvalidInput before anything is written."""
    if not isinstance(value, Mapping):
        raise InvalidInput("value", f"must be a dict (JSON object), got {type(value).__name__}")
    try:
        text = json.dumps(dict(value), ensure_ascii=False, sort_keys=True, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise InvalidInput("value", f"must be JSON-serialisable UTF-8 text without NaN ({exc})") from None
    return text


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out)
