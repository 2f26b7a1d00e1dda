"""Memories other tools leave behind, read as turns the pipeline ingests (graphs.cli_portable writes them):

- ``langgraph-store``: a LangGraph store dump, one ``Item.dict()`` per line (``namespace``, ``key``, ``value``,
  ``created_at``, ``updated_at``); the text is the value's ``content`` (LangMem's ``{"content": {"content": ...}}``
  included), else its ``text``, ``memory`` or ``data``, else the value as JSON.
- ``langmem``: LangMem's memories, which live in a LangGraph store: the same dump, only items whose value is
  ``{"kind": "Memory", "content": ...}`` (LangMem's other kinds, its prompts and procedures, are left out).
- ``mem0``: mem0's memories as ``get_all`` returns them (``{"results": [...]}``), a JSON list of them, or one
  per line: ``id``, ``memory``, ``created_at`` (else ``updated_at``).

Each memory becomes one user turn at its original time, with a source id made from its origin and id, so
importing the same file again rewrites the same turns. The whole file is read and checked first: a bad line is
an InvalidInput naming it, and nothing is written.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import NAMESPACE

SOURCES = ("langgraph-store", "langmem", "mem0")


def _when(value: Any, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or not 0 <= value < 1e11:  # seconds since the epoch, before the year 5138
            raise InvalidInput(where, f"{value!r} is not a time (seconds since the epoch)")
        return float(value)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(where, f"{value[:40]!r} is not an ISO 8601 time") from None
        if stamp.tzinfo is None:
            raise InvalidInput(where, f"{value[:40]!r} has no UTC offset: the time it names is not known")
        return stamp.timestamp()
    raise InvalidInput(where, "missing: a memory's time is kept, so it must be given")


def _source(origin: str, *parts: str) -> str:
    return f"{origin}-{uuid.uuid5(NAMESPACE, origin + '|' + json.dumps(parts, ensure_ascii=False)).hex[:24]}"


def _turn(text: Any, ts: float, source: str, where: str) -> dict[str, Any]:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(where, "no text: the memory is empty")
    return {"speaker": "user", "text": text, "ts": ts, "source_id": source}


def _json_lines(lines: Iterable[str]) -> list[tuple[int, Any]]:
    out = []
    for n, raw in enumerate(lines, 1):
        if raw.strip():
            try:
                out.append((n, json.loads(raw)))
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"line {n}", f"not JSON ({exc.msg} at column {exc.colno})") from None
    return out


def _store_text(value: dict[str, Any]) -> Any:
    content = value.get("content")
    if isinstance(content, dict) and isinstance(content.get("content"), str):
        return content["content"]
    for candidate in (content, value.get("text"), value.get("memory"), value.get("data")):
        if isinstance(candidate, str):
            return candidate
    return json.dumps(content if isinstance(content, dict) else value, ensure_ascii=False, sort_keys=True)


def store_turns(lines: Iterable[str], only_langmem: bool = False) -> list[dict[str, Any]]:
    """Turns of a LangGraph store dump (``only_langmem``: LangMem's memories in it)."""
    origin = "langmem" if only_langmem else "lgstore"
    turns = []
    for n, item in _json_lines(lines):
        where = f"line {n}"
        if not isinstance(item, dict) or not isinstance(item.get("value"), dict) or not isinstance(item.get("key"), str) \
                or not isinstance(item.get("namespace"), list):
            raise InvalidInput(where, 'not a store item: {"namespace": [...], "key": "...", "value": {...}, '
                                      '"created_at": "...", "updated_at": "..."} expected')
        value = item["value"]
        if only_langmem and value.get("kind") != "Memory":
            continue
        ts = _when(item.get("created_at", item.get("updated_at")), f"{where}.created_at")
        turns.append(_turn(_store_text(value), ts, _source(origin, *map(str, item["namespace"]), item["key"]), where))
    return turns


def mem0_turns(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Turns of mem0's exported memories."""
    text = "\n".join(lines)
    try:
        whole = json.loads(text)
        items = [(f"results[{i}]", m) for i, m in enumerate(whole["results"] if isinstance(whole, dict) else whole)]
    except (json.JSONDecodeError, KeyError, TypeError):
        items = [(f"line {n}", m) for n, m in _json_lines(text.splitlines())]
    turns = []
    for where, m in items:
        if not isinstance(m, dict) or not isinstance(m.get("id"), str):
            raise InvalidInput(where, 'not a mem0 memory: {"id": "...", "memory": "...", "created_at": "..."} expected')
        ts = _when(m.get("created_at") or m.get("updated_at"), f"{where}.created_at")
        turns.append(_turn(m.get("memory"), ts, _source("mem0", m["id"]), f"{where}.memory"))
    return turns


def foreign_turns(source: str, lines: Iterable[str]) -> list[dict[str, Any]]:
    """The turns ``source`` (one of SOURCES) holds, oldest first."""
    if source == "mem0":
        turns = mem0_turns(lines)
    elif source in ("langgraph-store", "langmem"):
        turns = store_turns(lines, only_langmem=source == "langmem")
    else:
        raise InvalidInput("--from", f"{source!r} is not one of {SOURCES}")
    if not turns:
        raise InvalidInput("file", f"no {source} memories in it")
    return sorted(turns, key=lambda t: (t["ts"], t["source_id"]))
