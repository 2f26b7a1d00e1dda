"""Argument types of `lumina-memory`: every value is checked while the command line is parsed.

A refused command must change nothing: no data directory created, no embedded server started, no
traceback. Opening the services does all of that, so each value a command takes (ids, names, texts,
numbers, paths, times) is validated here by argparse, with the same validators the stores use, and a
refusal is one line on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Parser(argparse.ArgumentParser):
    """argparse's parser whose refusal is one readable line (``prog: error: …``), exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _refusal(exc: Exception) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(" ".join(str(exc).split()))


def checked(check: Callable[[str], Any], name: str) -> Callable[[str], Any]:
    """An argparse type that runs ``check`` (which raises InvalidInput/ValueError) and names the refusal."""

    def parse(value: str) -> Any:
        try:
            return check(value)
        except ValueError as exc:  # InvalidInput is a ValueError
            raise _refusal(exc) from None

    parse.__name__ = name
    return parse


def _id(field: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        from lumina_memory.stores.ids import validate_id

        return validate_id(value, field)

    return checked(check, field)


user_id = _id("user_id")
USER_HELP = "the user's id: 1-128 letters, digits or _ . : @ - (no '..')"  # what validate_id accepts
memory_id = _id("memory_id")
procedure_id = _id("procedure_id")
source_id = _id("source_id")
actor = _id("actor")  # recorded in the audit log: an id, never free text
agent_id = _id("agent_id")  # agents' memory (issue 48): checked as user ids are
run_id = _id("run_id")
module = _id("module")  # a cognitive module's name (settings.agents.module_weights; others read as 'default')
snapshot_id = _id("snapshot")  # names a folder of the backup location: no '..', no separators


def _kb_name(value: str) -> str:
    from lumina_memory.stores.records import validate_kb_name

    validate_kb_name(value)
    return value  # the commands fold case themselves (and print the name as given)


kb_name = checked(_kb_name, "kb name")
kb_names = checked(lambda value: value if value == "*" else _kb_name(value), "kb name")


def _kb_id(value: str) -> str:
    from lumina_memory.nodes.kb.search import parse_kb_id

    parse_kb_id(value)
    return value


kb_id = checked(_kb_id, "kb id")


def _text(field: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        from lumina_memory.nodes.validate import clean_text

        return clean_text(value, field)

    return checked(check, field)


question = _text("question")
query = _text("query")

_TOKEN = re.compile(r"[0-9]{1,12}\.[0-9a-f]{1,64}")


def _token(value: str) -> str:
    if not _TOKEN.fullmatch(value):
        raise ValueError("invalid token: is not an erase confirmation token (digits.hex); "
                         "run `erase --user ID` first")
    return value


token = checked(_token, "token")


def int_between(low: int, high: int) -> Callable[[str], int]:
    def check(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{value[:40]!r} is not a whole number") from None
        if not low <= number <= high:
            raise ValueError(f"{number} is out of range; use {low} to {high}")
        return number

    return checked(check, "number")


def _iso_time(value: str) -> str:
    from datetime import datetime

    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value[:40]!r} is not an ISO-8601 time (e.g. 2026-03-01T03:00+09:00)") from None
    return value


iso_time = checked(_iso_time, "time")


def _input_file(value: str) -> str:
    from .ingest_file import check_text_file

    check_text_file(Path(value))
    return value


input_file = checked(_input_file, "file")  # an existing, readable UTF-8 text file (ingest)


def _readable_file(value: str) -> str:
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"{value[:200]!r} is not a file" + ("" if path.exists() else " (it does not exist)"))
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise ValueError(f"{value[:200]!r} cannot be read: {exc.strerror}") from None
    return value


readable_file = checked(_readable_file, "file")  # kb add: any document type, read later by its reader


def _new_file(value: str) -> str:
    path = Path(value)
    if not value.strip():
        raise ValueError("is empty; give a file to write")
    if path.is_dir():
        raise ValueError(f"{value[:200]!r} is a directory, not a file to write")
    if not path.expanduser().resolve().parent.is_dir():
        raise ValueError(f"{value[:200]!r}: its folder does not exist")
    return value


new_file = checked(_new_file, "file")  # a file the command writes (ingest --rejects)


def _location(value: str, *, must_exist: bool) -> str:
    if not value.strip():
        raise ValueError("must be a folder or s3://bucket/prefix")
    if value.startswith("s3://"):
        if not value[len("s3://"):].partition("/")[0]:
            raise ValueError(f"{value[:200]!r}: expected s3://bucket/prefix")
        return value
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{value[:200]!r} is a file, not a folder")
    if must_exist and not path.is_dir():
        raise ValueError(f"{value[:200]!r} does not exist")
    return value


location = checked(lambda value: _location(value, must_exist=False), "location")  # a backup target
existing_location = checked(lambda value: _location(value, must_exist=True), "location")  # a backup source


def purposes() -> list[str]:
    """Recall's purposes (nodes.retrieval.presets): the weights each gives relevance, recency, importance."""
    from lumina_memory.nodes.retrieval.presets import PRESETS

    return list(PRESETS)
