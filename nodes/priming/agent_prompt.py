"""Priming in any LangGraph agent: a ``prompt`` for ``create_react_agent`` (or a step before the model) that puts
the primed memory of the run's user in front of the conversation.

The user comes from the run as for the memory tools (``context={"user_id": …}`` or ``configurable.user_id``, or
bound here), never from the model. The message primed for is the latest human message; with none (an agent
woken by a timer) it is a heartbeat and gets the heartbeat budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from ..tools.loop import message_text
from ..tools.memory_tools import ServicesLike, _services_of, _user
from .prime import prime

MEMORY_HEADING = ("What you remember of this user (open a pointer with read_memory; a date and time header such as "
                  "[2023-08-03T14:05] is the pointer of the lines under it):")


def primed_prompt(services: ServicesLike | None = None, *, user_id: str | None = None, instructions: str = "",
                  preset: str = "default", message_type: str | None = None
                  ) -> Callable[[Any, RunnableConfig], list[BaseMessage]]:
    """``prompt=primed_prompt(services, instructions="You are Lumina…")``: each model call gets one system message
    (the instructions, then the primed sections) followed by the conversation."""

    def prompt(state: Any, config: RunnableConfig) -> list[BaseMessage]:
        messages: Sequence[BaseMessage] = state["messages"] if isinstance(state, dict) else state.messages
        user = _user(user_id, config)
        last = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
        text = message_text(last.content).strip() if last is not None else ""
        kind = message_type or (None if text else "heartbeat")
        primed = prime(_services_of(services), user, text, message_type=kind, preset=preset)
        parts = [p for p in (instructions.strip(), f"{MEMORY_HEADING}\n{primed.text}" if primed.text else "") if p]
        return ([SystemMessage("\n\n".join(parts))] if parts else []) + list(messages)

    return prompt
