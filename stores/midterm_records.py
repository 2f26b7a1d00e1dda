"""How a mid-term segment record is written in Redis/Valkey: one hash of text fields, its embedding packed.

The adapter (stores.midterm_redis) writes and reads records with these; doctor checks a record's version
against ``SCHEMA_VERSION`` without opening the store.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from .models import SegmentRecord
from .records import RecentSignal

SCHEMA_VERSION = "1"
EMBEDDING_FIELD = "embedding_f32"  # little-endian float32, base64: 4x smaller than JSON, text-safe
SIGNAL_FIELDS = ("segment_id", "importance", "end_ts", EMBEDDING_FIELD)
"""What recall ranks recent segments by (``decode_signal`` reads them in this order)."""


def text(value: bytes | str) -> str:
    # Injected clients may or may not use decode_responses; accept both.
    return value.decode("utf-8") if isinstance(value, bytes) else value


def encode_segment(record: SegmentRecord) -> dict[str, str]:
    fields: dict[str, str] = {"_v": SCHEMA_VERSION}
    for name, value in record.model_dump(exclude={"embedding"}).items():
        # Strings stay raw so redis-cli shows them readably; everything else is JSON (floats round-trip).
        fields[name] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    packed = struct.pack(f"<{len(record.embedding)}f", *record.embedding)
    fields[EMBEDDING_FIELD] = base64.b64encode(packed).decode("ascii")
    return fields


def decode_segment(raw: Mapping[Any, Any]) -> SegmentRecord:
    fields = {text(k): text(v) for k, v in raw.items()}
    data: dict[str, Any] = {}
    for name, info in SegmentRecord.model_fields.items():
        if name == "embedding" or name not in fields:
            continue  # missing fields fall back to model defaults (records written by older versions)
        data[name] = fields[name] if info.annotation is str else json.loads(fields[name])
    packed = base64.b64decode(fields.get(EMBEDDING_FIELD, ""))
    data["embedding"] = list(struct.unpack(f"<{len(packed) // 4}f", packed))
    return SegmentRecord.model_validate(data)


def decode_signal(values: Sequence[Any] | None) -> RecentSignal | None:
    """A record's ``SIGNAL_FIELDS`` (None when the record expired under the index)."""
    if not values or values[0] is None:
        return None
    seg, importance, end_ts, packed = (None if v is None else text(v) for v in values)
    vector = np.frombuffer(base64.b64decode(packed or ""), dtype="<f4").astype(np.float32)
    return RecentSignal(seg, float(json.loads(importance or "0")), float(json.loads(end_ts or "0")), vector)


def redact_url(url: str) -> str:
    """The server URL with its password masked, for messages and reports."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
