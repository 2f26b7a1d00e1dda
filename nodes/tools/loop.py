"""A bounded tool loop for one reply: the model may look things up (search_memory, read_memory) before it
answers, at most ``max_tool_calls`` times.

Each round is streamed, so the reply's journal (A11) sees text as it comes, as without tools. Once the
limit is reached, further calls are answered "limit reached" and the model gets one more round to answer;
a model that still only calls tools gets no more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

log = logging.getLogger("lumina.respond")

MAX_TOOL_CALLS = 4
"""Look-ups one reply may make: enough for search → read → a second search → read; bounded, so a model
that keeps calling tools cannot hold a reply (and the user) for long."""


def message_text(content: object) -> str:
    """The text of a message's content (a string, or content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                       if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))
    return str(content)


def bind(chat_model, tools: Sequence[BaseTool]):
    """``chat_model`` with ``tools`` bound, or None when it cannot call tools (no ``bind_tools``)."""
    if not tools or not hasattr(chat_model, "bind_tools"):
        return None
    try:
        return chat_model.bind_tools(list(tools))
    except NotImplementedError:  # BaseChatModel's default: this model has no tool calling
        return None


def stream_round(model, messages: Sequence[BaseMessage], write: Callable[[str], None] | None) -> AIMessage:
    """One model call, streamed; its text chunks go to ``write`` as they come. The whole message back."""
    full = None
    for chunk in model.stream(list(messages)):  # models without streaming yield one chunk
        if write is not None:
            text = message_text(chunk.content)
            if text:
                write(text)
        full = chunk if full is None else full + chunk
    if full is None:
        return AIMessage(content="")
    return AIMessage(content=full.content, tool_calls=list(getattr(full, "tool_calls", []) or []),
                     id=getattr(full, "id", None))


def run_tool_loop(bound_model, tools: Sequence[BaseTool], messages: list[BaseMessage],
                  write: Callable[[str], None] | None = None, max_tool_calls: int = MAX_TOOL_CALLS) -> tuple[str, list[ToolMessage]]:
    """Rounds of model → tool calls → tool results until the model answers in text. Returns the answer and
    the tool results the model read. ``messages`` grows with the rounds."""
    by_name = {t.name: t for t in tools}
    results: list[ToolMessage] = []
    made = 0
    limited = False
    while True:
        reply = stream_round(bound_model, messages, write)
        calls = reply.tool_calls
        if not calls or limited:
            if calls:
                log.warning("tool loop stopped: the model kept calling tools after %d look-ups", made)
            return message_text(reply.content).strip(), results
        messages.append(reply)
        for call in calls:
            tool = by_name.get(call["name"])
            if made >= max_tool_calls:
                limited = True
                result = ToolMessage(f"limit of {max_tool_calls} memory look-ups reached; answer now with what you found",
                                     tool_call_id=call["id"], name=call["name"], status="error")
            elif tool is None:
                result = ToolMessage(f"no tool {call['name']!r}; the tools are {', '.join(by_name)}",
                                     tool_call_id=call["id"], name=call["name"], status="error")
            else:
                made += 1
                result = tool.invoke({**call, "type": "tool_call"})
            messages.append(result)
            results.append(result)
        log.info("tool round calls=%s made=%d", [c["name"] for c in calls], made)
