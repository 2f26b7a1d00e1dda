"""Agents' records as table rows and back (stores.agent_tables): every value checked before it is written.

A row is refused as ``InvalidInput`` naming its field: an id that ``ids.validate_id`` refuses (hostile ids never
reach SQL), empty content, text that is not valid Unicode (a lone surrogate: both engines reject it, each with an
error naming neither the field nor the place), a time that is not finite, a value that is not JSON, a shared
memory whose scope and audience disagree. Rows read back are the records' own models.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

from . import agent_tables_sql as q
from .agent_records import EVENT_TYPES, LTM_TYPES, SCOPES, AgentEvent, LtmRecord, SharedMemory
from .agent_records import agent_id as _agent
from .errors import InvalidInput
from .ids import validate_id
from .texts import check_texts


def ids_of(values: Iterable[str], field: str) -> list[str]:
    return [validate_id(v, field) for v in values]


def finite(value: float | None, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(field, f"must be a finite number, got {value!r}")
    return float(value)


def content(value: str, field: str = "content") -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, "must be non-empty text")
    check_texts({field: value}, (field,))
    return value


def json_text(value: Any, field: str) -> str | None:
    """``value`` as JSON text: valid Unicode (a lone surrogate is refused, not escaped), no NaN."""
    if value is None:
        return None
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(field, f"is not JSON: {exc}") from None
    check_texts({field: text}, (field,))
    return text


def event_row(e: AgentEvent) -> list[Any]:
    if e.type not in EVENT_TYPES:
        raise InvalidInput("type", f"must be one of {EVENT_TYPES}, got {e.type!r}")
    return [validate_id(e.event_id, "event_id"), _agent(e.agent_id), finite(e.time, "time"), e.type,
            content(e.content), ids_of(e.participants, "participants"), json_text(e.location, "location"),
            finite(e.importance, "importance"), json_text(e.metadata, "metadata")]


def ltm_row(r: LtmRecord) -> list[Any]:
    if r.type not in LTM_TYPES:
        raise InvalidInput("type", f"must be one of {LTM_TYPES}, got {r.type!r}")
    row = [validate_id(r.memory_id, "memory_id"), _agent(r.agent_id), finite(r.created_at, "created_at"),
           finite(r.last_accessed, "last_accessed"), int(r.access_count), r.type, content(r.content),
           r.summary, finite(r.importance, "importance"), list(r.tags), ids_of(r.source_events, "source_events"),
           finite(r.decay_factor, "decay_factor")]
    check_texts({"summary": r.summary, "tags": row[9]}, ("summary", "tags"))
    return row


def shared_row(m: SharedMemory) -> list[Any]:
    author, run = _agent(m.author, "author"), validate_id(m.run_id, "run_id")
    visible = ids_of(m.visible_to, "visible_to")
    if m.scope not in SCOPES:
        raise InvalidInput("scope", f"must be one of {SCOPES}, got {m.scope!r}")
    if m.scope == "group" and m.group_id is None:
        raise InvalidInput("group_id", "a group memory names its group")
    if m.scope != "group" and m.group_id is not None:
        raise InvalidInput("group_id", f"only a group memory names a group (scope is {m.scope!r})")
    if m.scope == "bilateral" and (len(set(visible)) != 2 or len(visible) != 2 or author not in visible):
        raise InvalidInput("visible_to", "a bilateral memory is visible to exactly two agents, its author one of them")
    if m.scope != "bilateral" and visible:
        raise InvalidInput("visible_to", f"only a bilateral memory lists who sees it (scope is {m.scope!r})")
    group = None if m.group_id is None else validate_id(m.group_id, "group_id")
    row = [validate_id(m.memory_id, "memory_id"), run, author, m.scope, group, visible,
           finite(m.created_at, "created_at"), content(m.content), finite(m.importance, "importance"),
           list(m.tags), ids_of(m.source_events, "source_events")]
    check_texts({"tags": row[9]}, ("tags",))
    return row


def event(row: Sequence[Any]) -> AgentEvent:
    (event_id, agent, time, kind, content, participants, location, importance, metadata) = row
    return AgentEvent(event_id=event_id, agent_id=agent, time=time, type=kind, content=content,
                      participants=list(participants), location=None if location is None else json.loads(location),
                      importance=importance, metadata=json.loads(metadata))


def ltm_record(row: Sequence[Any]) -> LtmRecord:
    return LtmRecord(**dict(zip(q.names(q.LTM_COLUMNS), row)))


def shared_memory(row: Sequence[Any]) -> SharedMemory:
    return SharedMemory(**dict(zip(q.names(q.SHARED_COLUMNS), row)))
