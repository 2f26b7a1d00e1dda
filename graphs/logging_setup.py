"""Log format for Lumina Memory's own loggers: ``LUMINA_LOG_FORMAT=text|json`` and ``LUMINA_LOG_LEVEL``.

The graph already logs one line per node (graphs.memory_graph ``_bind``)::

    node=flush_to_redis user=yui segment=5f0c... tier=mid-term ms=3.2

``json`` turns each record into one JSON object per line, with those ``key=value`` pairs lifted into fields
(numbers as numbers), ready for Loki, CloudWatch or ``jq``::

    {"ts": "2026-...Z", "level": "INFO", "logger": "lumina.graph", "node": "flush_to_redis", "user": "yui",
     "segment": "5f0c...", "tier": "mid-term", "ms": 3.2}

Only the ``lumina`` logger tree is configured (it stops propagating to the root), so a host application —
``langgraph dev``, a notebook, your service — keeps its own logging untouched.

No raw PII reaches a log line (S7): the handler's ``RedactFilter`` passes every message, its
``extra=`` fields and its traceback through ``lumina_memory.nodes.text.redact`` (every kind, whatever
``LUMINA_PII_KINDS`` says: a log has no use for an e-mail address or a card number).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import traceback
from datetime import datetime, timezone
from typing import Literal, TextIO

from lumina_memory.nodes.text.redact import redact_text, redact_value

LOGGER = "lumina"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
HANDLER_NAME = "lumina"
"""The name of the handler configure_logging installs (found and replaced by it on a second call)."""
_PAIR = re.compile(r"(\w+)=(\S*)")
_WHOLE = re.compile(r"^\s*(\w+=\S*\s*)+$")
# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is exported as a field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


def _number(value: str) -> object:
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


class RedactFilter(logging.Filter):
    """Replaces PII in a record's message, its ``extra=`` fields and its traceback by placeholders."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_text(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, ()
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and isinstance(value, (str, dict, list, tuple)):
                setattr(record, key, redact_value(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record; a ``k=v k=v`` message becomes fields, any other stays in ``msg``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        out: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
        }
        if _WHOLE.match(message):
            out.update((k, _number(v)) for k, v in _PAIR.findall(message))
        else:
            out["msg"] = message
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out:
                out[key] = value
        if record.exc_text:
            out["exc"] = record.exc_text  # already redacted by RedactFilter
        elif record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record, not at set-up: a handler that
    kept a replaced stream (a notebook cell's, a test runner's) would write to a closed file."""

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


def configure_logging(
    fmt: Literal["text", "json"] | None = None,
    level: int | str | None = None,
    stream: TextIO | None = None,
) -> logging.Logger:
    """Give the ``lumina`` loggers one handler in ``fmt`` at ``level``; unset arguments come from
    ``LUMINA_LOG_FORMAT`` (default text) and ``LUMINA_LOG_LEVEL`` (default WARNING). Idempotent."""
    fmt = fmt or os.environ.get("LUMINA_LOG_FORMAT", "text").strip().lower()  # type: ignore[assignment]
    if fmt not in ("text", "json"):
        raise ValueError(f"LUMINA_LOG_FORMAT must be text or json, not {fmt!r}")
    if level is None:
        level = os.environ.get("LUMINA_LOG_LEVEL", "WARNING").strip().upper()
    logger = logging.getLogger(LOGGER)
    for handler in list(logger.handlers):
        if handler.get_name() == HANDLER_NAME:
            logger.removeHandler(handler)
    handler = logging.StreamHandler(stream) if stream is not None else _CurrentStderr()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(RedactFilter())
    handler.set_name(HANDLER_NAME)
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger
