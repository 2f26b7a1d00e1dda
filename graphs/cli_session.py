"""`lumina-memory session-end --user U`: the notes' trigger for F10, a coding agent's SessionEnd hook.

The hook gets ``{"session_id", "transcript_path", "cwd", "hook_event_name": "SessionEnd", "reason"}`` on stdin;
this command reads it and ingests the transcript at ``transcript_path`` as `lumina-memory ingest FILE --user U`
would (nodes.session_transcript). Hook it up in the agent's settings::

    {"hooks": {"SessionEnd": [{"matcher": "", "hooks": [
        {"type": "command", "command": "lumina-memory session-end --user alice"}]}]}}

Each session end ingests the whole transcript again; the turns already stored are skipped by their entry ids.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lumina_memory.nodes.characters import CHARACTERS
from lumina_memory.stores.errors import InvalidInput

from . import cli_args


def hook_transcript(stdin_text: str) -> Path:
    """The transcript path the hook's JSON names; InvalidInput naming what is wrong otherwise."""
    try:
        hook = json.loads(stdin_text)
    except json.JSONDecodeError as exc:
        raise InvalidInput("stdin", f"is not the hook's JSON ({exc.msg}); expected "
                                    '{"transcript_path": ..., "hook_event_name": "SessionEnd"}') from None
    path = hook.get("transcript_path") if isinstance(hook, dict) else None
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput("transcript_path", "the hook's JSON names no transcript_path")
    return Path(path).expanduser()  # ingest_file checks it is a readable UTF-8 file, naming it otherwise


def cmd_session_end(args) -> int:
    from .cli import _ingest_rows, _open, console
    from .ingest_file import ingest_file

    args.file = str(hook_transcript(sys.stdin.read()))
    args.rejects = None
    return ingest_file(args, _open, _ingest_rows, console)


def register(sub: argparse._SubParsersAction) -> None:
    end = sub.add_parser("session-end", help="ingest the session transcript a SessionEnd hook names on stdin (F10)")
    end.add_argument("--user", type=cli_args.user_id, required=True, help=cli_args.USER_HELP)
    end.add_argument("--as", dest="speaker", choices=CHARACTERS, default="lumina",
                     help="who speaks the assistant's turns: %(choices)s (default: %(default)s)")
    end.set_defaults(func=cmd_session_end)
