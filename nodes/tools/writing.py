"""``write_memory`` and ``report_procedure_outcome``: the agent's own writes (the notes' deliberate encoding and
explicit outcome reports), LangChain tools bound to one user and the user's turn they answer.

    tools = create_writing_tools(services, user_id="alice", turn_id=turn["turn_id"])

- ``write_memory(text, important=False)`` is the one write path the notes leave the agent: a note in its own
  words. The tool only checks it and hands it back as its artifact; the reply (nodes.respond) adds it to the
  conversation as the character's turn, so it is stored, summarised, embedded and forgotten with the
  conversation it was written in, like everything said. ``important`` tags it ``[IMPORTANT]``
  (nodes.text.important_tag): a procedure taught in a conversation holding the tag is never forgotten, and a user
  turn holding it makes its memory protected (nodes.text.protect); the lifecycle reads protection requests from
  the user's turns only, so a tagged note of the character's protects its memory once the lifecycle reads the
  tag on every turn.
- ``report_procedure_outcome(procedure_id, outcome)`` counts a success or failure of one of the user's current
  procedures at once, under the user's turn as its outcome id: sent twice it counts once, and the session end's
  own judgement of that conversation (nodes.knowledge.procedures) leaves a procedure the agent already reported on
  in it alone.

The user is never a tool argument (nodes.tools.memory_tools); bad input comes back as a tool error the model
can read.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from lumina_memory.stores.errors import LuminaError
from lumina_memory.stores.ids import validate_id

from ..text.important_tag import tagged
from .memory_tools import _explain_validation, _services_of

WRITE_DESCRIPTION = (
    "Write something down in the user's long-term memory on purpose: a note in your own words (what the user "
    "asked you to keep, a decision, a promise, a preference). Set important to true for what must never be "
    "compressed or forgotten (it is tagged [IMPORTANT]). The note is stored with this conversation."
)
OUTCOME_DESCRIPTION = (
    "Report how one of the user's procedures went when it was tried: outcome 'success' or 'failure'. The "
    "procedure id is the proc:<id> that search_memory or the memory context showed (without 'proc:'). Each "
    "report changes the procedure's confidence (successes / all outcomes)."
)
MAX_NOTE_CHARS = 2_000
"""A note is a few sentences: longer text is what the conversation itself holds."""


class WriteMemoryInput(BaseModel):
    text: str = Field(min_length=1, max_length=MAX_NOTE_CHARS, description="The note, in the user's language.")
    important: bool = Field(default=False, description="Never compress or forget it (tagged [IMPORTANT]).")


class ReportOutcomeInput(BaseModel):
    procedure_id: str = Field(description="The procedure's id, e.g. from proc:<id>.")
    outcome: Literal["success", "failure"] = Field(description="How it went.")


def create_writing_tools(services: Any, user_id: str, turn_id: str | None = None) -> list[BaseTool]:
    """[write_memory, report_procedure_outcome] for ``user_id``; ``turn_id``: the user's turn the reply answers
    (the outcome id of a report made while answering it)."""
    validate_id(user_id, "user_id")

    def write_memory(text: str, important: bool = False) -> tuple[str, dict[str, Any]]:
        note = " ".join(text.split())
        if not note:
            raise ToolException("the note is empty: write what to remember")
        note = tagged(note) if important else note
        return f"noted{' as [IMPORTANT]' if important else ''}: {note}", {"note": note, "important": important}

    def report_procedure_outcome(procedure_id: str, outcome: str) -> tuple[str, dict[str, Any]]:
        from ..knowledge.procedures import record_outcome

        pid = procedure_id.removeprefix("proc:")
        try:
            row = record_outcome(_services_of(services), user_id, pid, outcome == "success", outcome_id=turn_id)
        except LuminaError as exc:  # an unknown or superseded procedure, a malformed id: said to the model
            raise ToolException(str(exc)) from None
        return (f"{row['title'] or row['procedure_id']} v{row['version']}: {row['success_count']} succeeded, "
                f"{row['failure_count']} failed, confidence {row['confidence']:.2f}"), row

    common = dict(response_format="content_and_artifact", handle_tool_error=True,
                  handle_validation_error=_explain_validation)
    return [
        StructuredTool.from_function(write_memory, name="write_memory", description=WRITE_DESCRIPTION,
                                     args_schema=WriteMemoryInput, **common),
        StructuredTool.from_function(report_procedure_outcome, name="report_procedure_outcome",
                                     description=OUTCOME_DESCRIPTION, args_schema=ReportOutcomeInput, **common),
    ]


def written_notes(results) -> list[str]:
    """The notes write_memory accepted among a reply's tool results, in the order written, each once."""
    notes = [r.artifact["note"] for r in results
             if getattr(r, "name", None) == "write_memory" and getattr(r, "status", "success") != "error"
             and isinstance(getattr(r, "artifact", None), dict)]
    return list(dict.fromkeys(notes))
