"""Reading a portable export back: every line parsed and checked against the schema (schema.json) before anything
is written, so a broken file is refused whole with an error naming its line (InvalidInput("line N", ...))."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from lumina_memory.stores.errors import InvalidInput

from .kinds import FORMAT, VERSION


@dataclass
class ExportFile:
    """A checked export: its header and its records, each with the line it was read from (1-based)."""

    header: dict[str, Any]
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    @property
    def user_id(self) -> str:
        return self.header["user_id"]


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The committed JSON Schema of the format (nodes/portable/schema.json)."""
    return json.loads(files(__package__).joinpath("schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=2)
def _validator(part: str) -> Draft202012Validator:
    return Draft202012Validator({**schema(), "$ref": f"#/$defs/{part}"})


def _check(part: str, value: Any, line: int) -> None:
    error = best_match(_validator(part).iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise InvalidInput(f"line {line}", f"{where + ': ' if where else ''}{error.message[:300]}")


def _parse(text: str, line: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {line}", f"not JSON ({exc.msg} at column {exc.colno})") from None


def _storable(value: Any, line: int, where: str = "") -> None:
    """Every text of a record is one both engines keep: valid Unicode (JSON may spell a lone surrogate) and no
    NUL (PostgreSQL's text refuses it)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _storable(item, line, f"{where}/{key}" if where else str(key))
    elif isinstance(value, list):
        for item in value:
            _storable(item, line, where)
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInput(f"line {line}", f"{where}: not valid Unicode (lone surrogate at {exc.start})") from None
        if "\x00" in value:
            raise InvalidInput(f"line {line}", f"{where}: contains a NUL character (U+0000)")


def read_export(lines: Iterable[str]) -> ExportFile:
    """The export in ``lines`` (text lines of the file), checked whole; InvalidInput naming the first bad line."""
    out: ExportFile | None = None
    for n, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        value = _parse(text, n)
        if out is None:
            if not isinstance(value, dict) or value.get("format") != FORMAT:
                raise InvalidInput(f"line {n}", f"not a Lumina Memory export: the first line must be the header "
                                                f'{{"format": "{FORMAT}", "version": {VERSION}, ...}} (another '
                                                f"tool's memories: import --from langgraph-store, mem0 or langmem)")
            if value.get("version") != VERSION:
                raise InvalidInput(f"line {n}", f"export version {value.get('version')!r} is not supported: this "
                                                f"installation reads version {VERSION}")
            _check("header", value, n)
            out = ExportFile(value)
            continue
        if isinstance(value, dict) and "user_id" in value:
            raise InvalidInput(f"line {n}", "user_id: a record names no user (the header's user_id is the file's)")
        _check("record", value, n)
        _storable(value, n)
        out.records.append((n, value))
    if out is None:
        raise InvalidInput("file", "empty: no export header")
    found = Counter(r["kind"] for _, r in out.records)
    stated = {k: v for k, v in out.header["counts"].items() if v}
    if dict(found) != stated:
        raise InvalidInput("file", f"the header counts {stated} records, the file holds {dict(found)} "
                                   f"(cut short, or edited?)")
    return out
