"""F10 from Python: a session transcript (Claude Code JSONL, ``type: user/assistant`` lines) into one user's
memory through the graph, as `lumina-memory ingest FILE --user U` does.

    from lumina_memory.graphs.ingest_session import ingest_session
    counts = ingest_session(graph, "~/.claude/projects/…/00893aaf.jsonl", "alice")

Every line is read and checked before anything is written: a line the graph would refuse raises InvalidInput
naming the line, and nothing of the file goes in. Turns already stored (the same transcript at the next
session end) are skipped by their source ids. Each exchange (a user message and its reply) becomes a memory of
its own, or the turns are segmented as a conversation is: ``transcript_memory_unit`` (measured by
``python -m bench.transcript_unit``).
"""

from __future__ import annotations

from pathlib import Path

from lumina_memory.stores.errors import InvalidInput

from .ingest_file import check_text_file, read_rows
from .session_replay import replay_session


def ingest_session(graph, path: str | Path, user_id: str, speaker: str = "lumina") -> dict[str, int]:
    """Ingest the session transcript at ``path`` as ``user_id``'s conversation, its assistant turns spoken by
    ``speaker``. Returns ``turns`` (ingested) and the skipped entries (``commands``, ``meta``,
    ``tool_results``)."""
    from lumina_memory.nodes.characters import get as get_character

    get_character(speaker)
    source = Path(path).expanduser()
    check_text_file(source)
    services = graph.lumina_services()
    rows, rejects, _lines, session = read_rows(source, services.settings, user_id, speaker)
    if session is None:
        raise InvalidInput("file", f"{source} is no session transcript (its first line has no type: user/assistant "
                                   "entry); ingest it with `lumina-memory ingest`")
    if rejects:
        first = rejects[0]
        raise InvalidInput(first.field, f"{source} line {first.line}: {first.reason} "
                                        f"({len(rejects)} line{'s' if len(rejects) > 1 else ''} refused; nothing ingested)")
    turns = replay_session(graph, session.user_id, rows)
    return {"turns": turns, **{k: v for k, v in session.skipped.items() if k != "other"}}
