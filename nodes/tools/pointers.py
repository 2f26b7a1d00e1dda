"""Pointers: the one place that writes and reads the id strings a model sees beside each memory.

Every item that priming or ``search_memory`` shows carries a pointer that ``read_memory`` opens:

- ``ep:<source_id>`` — one message (a long one chunked at write time is opened whole); a bare source id
  without a known prefix means the same, so ids printed by older tools and the CLI still open;
- ``seg:<segment_id>`` — a segment (a topic unit of the conversation: its summary and its messages);
- ``fact:<item_id>`` — a knowledge item, opened with its history;
- ``proc:<procedure_id>`` — a procedure, opened with its versions;
- ``kb:<name>:<doc_id>:<chunk_no>`` — a knowledge-base passage (nodes.kb);
- ``YYYY-MM-DDTHH:MM`` (UTC, with or without its brackets) — the conversation at that minute: the segment that
  holds a message said then (several, when a topic changed within the minute). Priming heads a segment's lines of
  a day with the time of the first (``[2023-08-03T14:05]``), so one header is both their date and their pointer.

Ids are checked with ``lumina_memory.stores.ids.validate_id`` before anything reads them: a hostile id is refused here.

A model reads pointers in *short* form (``abbreviated``): a uuid (segments, facts, procedures, KB documents) or a message's
default id (``t-`` and 24 hex digits) is shown by its first 8 hex digits, ``seg:4586156e``. Shown whole, one
pointer a line cost a model about as many tokens as the line it names (a uuid is ~25 BPE tokens), while
the budgets count it as one. read_memory opens a short pointer by the one id of the user's that starts so
(nodes.tools.reading). With 10,000 segments, the odds that another one's id starts with a given pointer's 8 hex
digits are ~1 in 430,000; then read_memory names both rather than guess. Structured results (artifacts, ``PrimedItem.source``) keep whole pointers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.ids import validate_id

from lumina_memory.nodes.retrieval.temporal_calendar import zone_of

PointerKind = Literal["episode", "segment", "knowledge", "procedure", "kb", "time"]
PREFIXES: dict[str, PointerKind] = {"ep": "episode", "seg": "segment", "fact": "knowledge", "proc": "procedure",
                                    "kb": "kb"}
_PREFIX_OF: dict[PointerKind, str] = {kind: prefix for prefix, kind in PREFIXES.items()}


class Pointer(BaseModel):
    """A parsed pointer: what kind of memory, and the id its store knows it by."""

    kind: PointerKind
    id: str
    """The source id (episode), segment id, item id, procedure id; for kb the whole ``kb:…`` id."""
    kb: str | None = None
    """kb only: the knowledge base's name."""
    doc_id: str | None = None
    chunk_no: int | None = None

    def __str__(self) -> str:
        return self.id if self.kind in ("kb", "time") else f"{_PREFIX_OF[self.kind]}:{self.id}"

    @property
    def abbreviated(self) -> bool:
        """Whether the id has the shape of a short pointer (it may still be a whole id: that opens first)."""
        if self.kind == "time":
            return False
        if self.kind == "kb":
            return bool(_SHORT_ID.fullmatch(self.doc_id or ""))
        shape = _SHORT_SOURCE if self.kind == "episode" else _SHORT_ID
        return bool(shape.fullmatch(self.id))

    def completed(self, whole_id: str) -> "Pointer":
        """This pointer with its (short) id replaced by ``whole_id`` (for kb: the document's id)."""
        if self.kind == "kb":
            return self.model_copy(update={"id": f"kb:{self.kb}:{whole_id}:{self.chunk_no}", "doc_id": whole_id})
        return self.model_copy(update={"id": whole_id})


SHORT_HEX = 8
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DEFAULT_SOURCE = re.compile(r"t-[0-9a-f]{24}")  # nodes.ingest_turn.default_source_id
_SHORT_ID = re.compile(r"[0-9a-f]{%d}" % SHORT_HEX)
_SHORT_SOURCE = re.compile(r"t-[0-9a-f]{%d}" % SHORT_HEX)


_TIME = re.compile(r"\[?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})\]?")


def time_pointer(ts: float, zone: str = "UTC") -> str:
    """The time pointer of the minute that holds ``ts``, on ``zone``'s clock (the user's ``LUMINA_TIMEZONE``, as
    dates are labelled: nodes.retrieval.temporal)."""
    return datetime.fromtimestamp(math.floor(ts / 60) * 60, tz=zone_of(zone)).strftime("%Y-%m-%dT%H:%M")


def time_span(pointer: Pointer, zone: str = "UTC") -> tuple[float, float]:
    """[start, end) of a time pointer's minute on ``zone``'s clock, in epoch seconds. (A minute summer time
    repeats is its first pass.)"""
    start = datetime.strptime(pointer.id, "%Y-%m-%dT%H:%M").replace(tzinfo=zone_of(zone)).timestamp()
    return start, start + 60


def _short(pointer: str) -> str:
    prefix, _, rest = pointer.partition(":")
    if prefix in ("seg", "fact", "proc") and _UUID.fullmatch(rest):
        return f"{prefix}:{rest[:SHORT_HEX]}"
    if prefix == "ep" and _DEFAULT_SOURCE.fullmatch(rest):
        return f"ep:{rest[:2 + SHORT_HEX]}"
    if prefix == "kb":
        name, _, doc_chunk = rest.partition(":")
        doc_id, _, chunk = doc_chunk.rpartition(":")
        if _UUID.fullmatch(doc_id):
            return f"kb:{name}:{doc_id[:SHORT_HEX]}:{chunk}"
    return pointer


def abbreviated(pointers: Iterable[str]) -> dict[str, str]:
    """Each pointer -> the form a model reads beside its memory: short where the id is long, whole where it is
    short already or where two of ``pointers`` would look alike (shown together, they must stay apart)."""
    wanted = list(dict.fromkeys(pointers))
    short = {p: _short(p) for p in wanted}
    counts: dict[str, int] = {}
    for s in short.values():
        counts[s] = counts.get(s, 0) + 1
    return {p: s if counts[s] == 1 else p for p, s in short.items()}


def format_pointer(item: Mapping[str, Any]) -> str:
    """The pointer of a recall item (nodes.retrieval.recall), a knowledge or procedure hit, or a KB hit.

    An episode item quoting one message points at that message (a chunked long reply is one source id);
    one quoting several adjacent messages, or a segment item, points at its segment."""
    kind = item.get("kind", "episode")
    if kind == "knowledge":
        return f"fact:{item['item_id']}"
    if kind == "procedure":
        return f"proc:{item['procedure_id']}"
    if kind == "kb":
        return str(item["id"])
    sources = list(item.get("source_ids") or [])
    segment = item.get("segment_id")
    if item.get("unit") == "segment" or (len(sources) != 1 and segment and segment != "(open)"):
        return f"seg:{segment}"
    if sources:
        return f"ep:{sources[-1]}"
    return f"seg:{segment}"


def parse_pointer(text: object) -> Pointer:
    """The pointer ``text`` names; InvalidInput("id") when it is no pointer or holds a disallowed id."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("id", "must be a pointer such as ep:<source id>, seg:…, fact:…, proc:… or kb:…")
    text = text.strip()
    if (moment := _TIME.fullmatch(text)) is not None:
        try:  # a well-formed minute that no calendar has (2023-02-30T25:61) is no pointer
            datetime.strptime(moment.group(1), "%Y-%m-%dT%H:%M")
        except ValueError:
            raise InvalidInput("id", f"{text[:60]!r} is no time: a time pointer reads YYYY-MM-DDTHH:MM") from None
        return Pointer(kind="time", id=moment.group(1))
    prefix, _, rest = text.partition(":")
    kind = PREFIXES.get(prefix)
    if kind is None or not rest:  # a bare source id (which may itself hold ':')
        return Pointer(kind="episode", id=validate_id(text, "id"))
    if kind != "kb":
        return Pointer(kind=kind, id=validate_id(rest, "id"))
    name, _, doc_chunk = rest.partition(":")
    doc_id, _, chunk = doc_chunk.rpartition(":")
    if not (name and doc_id and chunk.isdigit()):
        raise InvalidInput("id", f"{text[:60]!r}: a KB pointer reads kb:<name>:<doc_id>:<chunk_no>")
    validate_id(text, "id")
    return Pointer(kind="kb", id=text, kb=name, doc_id=doc_id, chunk_no=int(chunk))
