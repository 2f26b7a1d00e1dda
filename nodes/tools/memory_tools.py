"""``search_memory`` and ``read_memory`` (A2): LangChain tools a model calls to recall on purpose.

    tools = create_memory_tools(services, user_id="alice")     # bound to one user
    tools = create_memory_tools(services)                      # the user of the run that calls them

Unbound tools take the user from the LangGraph run they are called in: the run context's ``user_id``
(``context={"user_id": ...}``, graphs.context.RunContext) or ``config["configurable"]["user_id"]``. The user
is never a tool argument, so a model cannot ask for someone else's memory; tools bound to one user refuse
to run inside another user's run. Both tools return text the model reads and, as the ToolMessage's
artifact, the same results as data. Bad input (an unknown kind, a date that is no date, a malformed id)
comes back as a tool error the model can read and correct, never as an exception out of the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from lumina_memory.stores.errors import InvalidInput, LuminaError
from lumina_memory.stores.ids import validate_id

from .pointers import parse_pointer
from .reading import open_pointer
from .searching import Kind, render, search

SEARCH_DESCRIPTION = (
    "Search the user's long-term memory on purpose: past conversations (episodes), facts learned about the "
    "user (knowledge, with when they held), procedures the user was taught, and knowledge bases (kb). "
    "Returns the best matches, each with an id, its kind, date, level, tiers, score and text. Use read_memory(id) "
    "to open one in full (a long reply reassembled, a fact with its history)."
)
READ_DESCRIPTION = (
    "Open one memory by the id search_memory (or the memory context) showed: ep:<message>, seg:<conversation>, "
    "fact:<item>, proc:<procedure>, kb:<name>:<doc>:<chunk>, or a date and time header such as 2023-08-03T14:05 (the "
    "conversation at that minute). Returns the whole message, conversation, fact "
    "with its history, procedure with its versions, or knowledge-base passage."
)


class SearchMemoryInput(BaseModel):
    query: str = Field(description="What to look for, in the user's words (any language).")
    kind: Kind | None = Field(default=None, description="Only this kind: episode, knowledge, procedure or kb. "
                                                        "Leave out for all.")
    since: str | None = Field(default=None, description="Only memories dated on or after this ISO date (YYYY-MM-DD).")
    until: str | None = Field(default=None, description="Only memories dated on or before this ISO date (YYYY-MM-DD).")


class ReadMemoryInput(BaseModel):
    id: str = Field(description="A memory id exactly as shown, e.g. ep:D2:2, seg:…, fact:…, proc:…, kb:…")


ServicesLike = Any  # nodes.services.Services, or a callable that returns one


def _services_of(services: ServicesLike | Callable[[], Any] | None):
    if services is None:
        from ..services import default_services

        return default_services()
    return services() if callable(services) and not hasattr(services, "stores") else services


def _context_user(config: RunnableConfig | None) -> str | None:
    """The user of the LangGraph run the tool is called in: the run context's ``user_id``, else
    ``configurable.user_id``; None outside a run that names one."""
    runtime = None
    try:
        from langgraph.runtime import get_runtime

        runtime = get_runtime()
    except RuntimeError:  # not inside a runnable at all
        pass
    context = getattr(runtime, "context", None)
    user = context.get("user_id") if isinstance(context, Mapping) else getattr(context, "user_id", None)
    if user is None and config:
        user = (config.get("configurable") or {}).get("user_id")
    return user


def _user(bound: str | None, config: RunnableConfig | None) -> str:
    in_run = _context_user(config)
    if bound is not None and in_run is not None and in_run != bound:
        raise ToolException("these memory tools belong to another user than this run's; "
                            "create them with create_memory_tools(services) to follow the run's user")
    user = bound if bound is not None else in_run
    if user is None:
        raise ToolException("no user for this memory: pass user_id to create_memory_tools, or run the tool in a "
                            "LangGraph run with context={'user_id': ...} or configurable user_id")
    try:
        return validate_id(user, "user_id")
    except InvalidInput as exc:
        raise ToolException(str(exc)) from None


def _explain_validation(error: Exception) -> str:
    """Arguments the schema refused, said so the model can fix its call (not "Tool input validation error")."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        return "invalid arguments: " + "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ())) or 'input'}: {e.get('msg')}" for e in errors())
    return f"invalid arguments: {error}"


def create_memory_tools(services: ServicesLike | None = None, user_id: str | None = None, *, budget: int = 1_500,
                        max_results: int = 8) -> list[BaseTool]:
    """[search_memory, read_memory] over ``services`` (an opened Services, a provider of one, or None for the
    process-wide default), for ``user_id`` or, when None, the user of the run they are called in.
    ``budget``: tokens of episodes a search reads (recall's budget); ``max_results``: hits shown."""
    if user_id is not None:
        validate_id(user_id, "user_id")

    def search_memory(query: str, kind: str | None = None, since: str | None = None, until: str | None = None,
                      *, config: RunnableConfig) -> tuple[str, list[dict[str, Any]]]:
        user = _user(user_id, config)
        try:
            hits = search(_services_of(services), user, query, kind=kind, since=since, until=until, budget=budget,
                          max_results=max_results)
        except LuminaError as exc:  # refused input, an unknown KB, a store down: said to the model
            raise ToolException(str(exc)) from None
        return render(hits, query), [h.model_dump() for h in hits]

    def read_memory(id: str, *, config: RunnableConfig) -> tuple[str, dict[str, Any]]:  # noqa: A002 - the tool's argument
        user = _user(user_id, config)
        try:
            pointer = parse_pointer(id)
            opened = open_pointer(_services_of(services), user, pointer)
        except LuminaError as exc:  # refused input, an unknown KB, a store down: said to the model
            raise ToolException(str(exc)) from None
        if opened is None:
            raise ToolException(f"no memory {id!r} for this user (ids come from search_memory)")
        return opened.text, opened.model_dump()

    common = dict(response_format="content_and_artifact", handle_tool_error=True,
                  handle_validation_error=_explain_validation)
    return [
        StructuredTool.from_function(search_memory, name="search_memory", description=SEARCH_DESCRIPTION,
                                     args_schema=SearchMemoryInput, **common),
        StructuredTool.from_function(read_memory, name="read_memory", description=READ_DESCRIPTION,
                                     args_schema=ReadMemoryInput, **common),
    ]
