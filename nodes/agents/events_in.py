"""Agents' input checked before anything is embedded or written: events, WM patches, shared memories, queries.

Every refusal is ``InvalidInput`` naming the field (pydantic's errors are translated), so a caller sees the same
named error whatever the backend, and nothing is written for a batch that holds one bad item. PII of ``kinds``
(``nodes.validate.redaction_kinds``: the chat's setting, on by default) is redacted from every text an agent
brings (content, location, metadata, WM values, shared memories, queries) before it is embedded or stored.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ValidationError

from lumina_memory.stores.agent_records import AgentEvent, SharedMemory, agent_id as check_agent
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.texts import check_texts

from ..text.redact import redact_text, redact_value

MAX_QUERY_CHARS = 10_000
"""A retrieval query longer than this is refused (it would be embedded whole and truncated by the model)."""


def new_id() -> str:
    return uuid.uuid4().hex


def check_json(field: str, value: Any) -> None:
    """``value`` is JSON (dicts, lists, strings, numbers, bools, None) whose every string is valid Unicode."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInput(field, f"must be JSON-serialisable: {' '.join(str(exc).split())[:120]}") from None
    except UnicodeEncodeError as exc:
        raise InvalidInput(field, f"is not valid Unicode (lone surrogate at position {exc.start})") from None


def check_content(field: str, text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(field, "must be a non-empty string")
    check_texts({field: text}, [field])
    return text


def check_query(query: object, kinds: tuple[str, ...] = ()) -> str:
    text = check_content("query", query)
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput("query", f"is {len(text)} characters; at most {MAX_QUERY_CHARS}")
    return redact_text(text, kinds) if kinds else text


def _model(cls: type[BaseModel], data: Mapping[str, Any]) -> Any:
    try:
        return cls.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or cls.__name__
        raise InvalidInput(field, " ".join(str(first.get("msg", exc)).split())[:200]) from None


def event_of(agent: str, raw: AgentEvent | Mapping[str, Any], now: float,
             importance: Callable[[AgentEvent], float], kinds: tuple[str, ...] = ()) -> AgentEvent:
    """The event ``raw`` (a dict or an AgentEvent) of ``agent``, with an id (a new one unless given: a retried
    store with the same id adds nothing), the run's time unless given, and the rule importance unless given."""
    agent = check_agent(agent)
    if isinstance(raw, AgentEvent):
        given = raw.model_fields_set
        data = raw.model_dump()
    elif isinstance(raw, Mapping):
        data = dict(raw)
        given = set(data)
    else:
        raise InvalidInput("event", f"must be a dict or an AgentEvent, not {type(raw).__name__}")
    if data.get("agent_id", agent) != agent:
        raise InvalidInput("agent_id", f"the event names {str(data['agent_id'])[:40]!r}, stored for {agent!r}")
    data["agent_id"] = agent
    data.setdefault("event_id", None)
    if data["event_id"] is None:
        data["event_id"] = new_id()
    if data.get("time") is None:
        data["time"] = now
    data["content"] = check_content("content", data.get("content"))
    check_texts(data, ["participants"])
    for name in ("location", "metadata"):
        check_json(name, data.get(name))
    if kinds:
        data["content"] = redact_text(data["content"], kinds)
        for name in ("location", "metadata"):
            if data.get(name) is not None:
                data[name] = redact_value(data[name], kinds)
    event = _model(AgentEvent, data)
    if "importance" not in given or data.get("importance") is None:
        event = event.model_copy(update={"importance": float(importance(event))})
    return event


def shared_of(raw: SharedMemory | Mapping[str, Any] | str, *, author: str, scope: str, run_id: str,
              visible_to: list[str] | None, group_id: str | None, now: float,
              kinds: tuple[str, ...] = ()) -> SharedMemory:
    """A shared memory from a text, a dict (content, memory_id, importance, tags, source_events) or a
    SharedMemory; the call's scope, audience, run and author apply unless a SharedMemory gives its own."""
    if isinstance(raw, SharedMemory):
        data = raw.model_dump()
    elif isinstance(raw, str):
        data = {"content": raw}
    elif isinstance(raw, Mapping):
        data = dict(raw)
    else:
        raise InvalidInput("memory", f"must be a text, a dict or a SharedMemory, not {type(raw).__name__}")
    data.setdefault("author", author)
    data.setdefault("scope", scope)
    data.setdefault("run_id", run_id)
    data.setdefault("group_id", group_id)
    data.setdefault("visible_to", list(visible_to or []))
    data.setdefault("created_at", now)
    if not data.get("memory_id"):
        data["memory_id"] = new_id()
    data["content"] = check_content("content", data.get("content"))
    check_texts(data, ["tags", "source_events"])
    if kinds:
        data["content"] = redact_text(data["content"], kinds)
    memory = _model(SharedMemory, data)
    check_agent(memory.author, "author")
    for other in memory.visible_to:
        check_agent(other, "visible_to")
    for source in memory.source_events:
        check_agent(source, "source_events")
    if memory.scope == "group" and not memory.group_id:
        raise InvalidInput("group_id", "a group memory needs its group")
    if memory.group_id is not None:
        check_agent(memory.group_id, "group_id")
    if memory.scope == "bilateral":
        pair = set(memory.visible_to)
        if len(pair) != 2 or memory.author not in pair:
            raise InvalidInput("visible_to", "a bilateral memory is visible to exactly two agents, its author and one other")
    return memory


def wm_patch(patch: object, kinds: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(patch, Mapping):
        raise InvalidInput("patch", f"must be a dict, not {type(patch).__name__}")
    for key in patch:
        if not isinstance(key, str) or not key:
            raise InvalidInput("patch", "keys must be non-empty strings")
    check_json("patch", dict(patch))
    return redact_value(dict(patch), kinds) if kinds else dict(patch)
