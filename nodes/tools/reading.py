"""Opening a pointer (``read_memory``): the whole memory behind a search hit, for one user only.

Every read goes through the user's own rows (turn ids are uuid5 of the user, tables filter by ``user_id``),
so another user's id — or a made-up one — opens nothing: the answer is "not found", never "forbidden" (S7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.records import SHARED

from ..retrieval.messages import read_message
from ..retrieval.temporal import date_label
from ..text.chunking import join_parts, parse_part
from .pointers import Pointer, time_span

SEGMENT_MESSAGE_CHARS = 1_200
"""A segment lists its messages; one longer than this is cut, with its own pointer to read it whole."""


class Opened(BaseModel):
    """What ``read_memory`` returns: the memory as text the model reads, and its fields for the caller."""

    id: str
    kind: str
    date: str | None = None
    text: str
    details: dict[str, Any] = Field(default_factory=dict)


def _day(ts: float | None, zone: str) -> str | None:
    return None if ts is None else date_label(ts, zone)


def _first_turn(archive, user_id: str, source_id: str):
    """The message's turn, or its first part's when it was chunked (S3)."""
    for sid in (source_id, ids.part_source_id(source_id, 0)):
        found = archive.get_turns(user_id, [ids.turn_id(user_id, sid)])
        if found:
            return found[0]
    return None


def open_episode(services, user_id: str, pointer: Pointer) -> Opened | None:
    archive = services.stores.archive
    overlap = services.settings.long_message_chunk_overlap
    text = read_message(archive, user_id, pointer.id, overlap)
    first = _first_turn(archive, user_id, pointer.id) if text is not None else None
    if text is None or first is None:
        return None
    chunked = parse_part(first.source_id) is not None
    zone = services.settings.timezone
    header = f"{pointer} — {first.speaker}, {date_label(first.ts, zone)}" + (" (a long message, reassembled)" if chunked else "")
    return Opened(id=str(pointer), kind="episode", date=date_label(first.ts, zone), text=f"{header}\n{text}",
                  details={"source_id": pointer.id, "speaker": first.speaker, "ts": first.ts,
                           "segment_id": first.segment_id, "message": text, "chunked": chunked})


def open_segment(services, user_id: str, pointer: Pointer, whole_between: tuple[float, float] | None = None
                 ) -> Opened | None:
    """The segment's summary and messages, each cut at SEGMENT_MESSAGE_CHARS but those said within
    ``whole_between`` (a time pointer's minute: what its header quoted)."""
    stores = services.stores
    record = stores.archive.get_segment(user_id, pointer.id) or stores.midterm.get_segment(user_id, pointer.id)
    if record is None:
        return None
    overlap = services.settings.long_message_chunk_overlap
    # Messages in conversation order; the parts of a chunked one are joined back under its one id.
    messages: list[dict[str, Any]] = []
    for turn in stores.archive.get_turns(user_id, record.turn_ids):
        parent = (parse_part(turn.source_id) or (turn.source_id,))[0]
        if messages and messages[-1]["source_id"] == parent and parse_part(turn.source_id):
            messages[-1]["parts"].append((turn.source_id, turn.text, True))
        else:
            messages.append({"source_id": parent, "speaker": turn.speaker, "ts": turn.ts,
                             "parts": [(turn.source_id, turn.text, True)]})
    zone = services.settings.timezone
    lines = [f"{pointer} — {date_label(record.start_ts, zone)} to {date_label(record.end_ts, zone)}, "
             f"{len(messages)} messages", f"summary: {record.summary}"]
    for m in messages:
        parts = m.pop("parts")
        # A long message can straddle two segments (its parts count towards the turn cap): read it whole.
        whole = read_message(stores.archive, user_id, m["source_id"], overlap) if parse_part(parts[0][0]) else None
        m["text"] = whole if whole is not None else join_parts(parts, overlap)
        body = m["text"]
        said_then = whole_between is not None and whole_between[0] <= m["ts"] < whole_between[1]
        if len(body) > SEGMENT_MESSAGE_CHARS and not said_then:
            body = f"{body[:SEGMENT_MESSAGE_CHARS]} … (read_memory('ep:{m['source_id']}') for the whole message)"
        lines.append(f"[ep:{m['source_id']}] {m['speaker']}: {body}")
    return Opened(id=str(pointer), kind="segment", date=date_label(record.end_ts, zone), text="\n".join(lines),
                  details={"segment_id": record.segment_id, "summary": record.summary, "messages": messages,
                           "keywords": list(record.keywords)})


def _fact_line(row: Mapping[str, Any], zone: str) -> str:
    value = row["value"] if row["polarity"] == "positive" else f"not {row['value']}"
    subject = "" if row["subject"] == "user" else f"{row['subject']} "
    held = f"{_day(row['valid_from'], zone) or '?'} → {_day(row['valid_to'], zone) or 'now'}"
    forgotten = f", forgotten {_day(row['forgotten_at'], zone)}" if row.get("forgotten_at") else ""
    sources = " ".join(f"ep:{s}" for s in row["source_ids"] or [])
    # Why it is merged, coexisting, superseded or under review (a fact it rests on changed: F6).
    note = f"; {row['note']}" if row.get("note") else ""
    return (f"[fact:{row['item_id']}] {subject}{row['attribute']}: {value} — {row['status']} {held}{forgotten}; "
            f"said \"{row['text']}\" ({sources or 'no source'}){note}")


def _history(rows: list[dict[str, Any]], item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The item's versions: the same subject and attribute, and every item linked to those by
    ``superseded_by`` (a fact replaced under another attribute, 「コーヒー好き」 → 「紅茶にした」), oldest first."""
    chain = {item["item_id"]}
    chain |= {r["item_id"] for r in rows if r["attribute"] == item["attribute"]}
    grew = True
    while grew:
        linked = {r["item_id"] for r in rows if r["superseded_by"] in chain}
        linked |= {r["superseded_by"] for r in rows if r["item_id"] in chain and r["superseded_by"]}
        grew = not linked <= chain
        chain |= linked
    return [r for r in rows if r["item_id"] in chain]


def open_fact(services, user_id: str, pointer: Pointer) -> Opened | None:
    table = getattr(services.stores.archive, "knowledge", None)
    found = table.items(user_id, item_ids=[pointer.id]) if table is not None else []
    if not found:
        return None
    item = found[0]
    history = _history(table.items(user_id, history=True, subject=item["subject"]), item)
    zone = services.settings.timezone
    lines = [_fact_line(item, zone)]
    if len(history) > 1:
        lines.append("history (oldest first):")
        lines += [f"- {_fact_line(r, zone)}" for r in history]
    public = ("item_id", "subject", "attribute", "value", "polarity", "text", "status", "valid_from", "valid_to",
              "superseded_by", "confidence", "source_ids", "forgotten_at", "note", "derived_from", "contradicts")
    return Opened(id=str(pointer), kind="knowledge", date=_day(item["said_at"], zone), text="\n".join(lines),
                  details={"item": {k: item[k] for k in public}, "history": [{k: r[k] for k in public} for r in history]})


def _procedure_text(row: Mapping[str, Any], zone: str) -> str:
    steps = "\n".join(f"  {n}. {s}" for n, s in enumerate(row["steps"], 1))
    return (f"[proc:{row['procedure_id']}] {row['title']} v{row['version']} ({row['status']}), confidence "
            f"{row['confidence']:.2f}, {row['success_count']} succeeded / {row['failure_count']} failed, "
            f"taught {_day(row['said_at'], zone)}\n{steps}")


def open_procedure(services, user_id: str, pointer: Pointer) -> Opened | None:
    table = getattr(services.stores.archive, "procedures", None)
    found = table.procedures(user_id, procedure_ids=[pointer.id]) if table is not None else []
    if not found:
        return None
    row = found[0]
    versions = [r for r in table.procedures(user_id, history=True) if r["lineage_id"] == row["lineage_id"]]
    zone = services.settings.timezone
    lines = [_procedure_text(row, zone)]
    others = [r for r in versions if r["procedure_id"] != row["procedure_id"]]
    if others:
        lines.append("other versions:")
        lines += [_procedure_text(r, zone) for r in others]
    public = ("procedure_id", "title", "version", "status", "steps", "confidence", "success_count", "failure_count",
              "superseded_by", "source_ids")
    return Opened(id=str(pointer), kind="procedure", date=_day(row["said_at"], zone), text="\n".join(lines),
                  details={"procedure": {k: row[k] for k in public},
                           "versions": [{k: r[k] for k in public} for r in versions]})


def open_kb(services, user_id: str, pointer: Pointer) -> Opened | None:
    try:
        from ..kb.search import read_kb
    except ImportError:  # an installation without knowledge bases
        return None
    text = read_kb(services, pointer.id, user_id=user_id)
    if text is None:
        return None
    return Opened(id=pointer.id, kind="kb", text=f"{pointer.id} — knowledge base {pointer.kb}\n{text}",
                  details={"kb": pointer.kb, "doc_id": pointer.doc_id, "chunk_no": pointer.chunk_no, "passage": text})


TIME_SEGMENTS = 3
"""A time pointer opens at most this many segments (a minute in which the topic changed holds two)."""


def open_time(services, user_id: str, pointer: Pointer) -> Opened | None:
    """The conversation at the pointer's minute: the segment holding a message said then, or each of the few that
    do (a topic that changed within the minute), oldest first; the messages of that minute whole (a long one,
    whose excerpt priming headed with this time, reassembled)."""
    start, end = time_span(pointer, services.settings.timezone)
    found = services.stores.archive.segments_at(user_id, start, end, limit=TIME_SEGMENTS + 1)
    opened = [o for s in found[:TIME_SEGMENTS]
              if (o := open_segment(services, user_id, Pointer(kind="segment", id=s), (start, end))) is not None]
    if not opened:
        return None
    if len(opened) == 1:
        return opened[0].model_copy(update={"id": str(pointer)})
    more = f"; more than {TIME_SEGMENTS}, read the others by their seg: ids" if len(found) > TIME_SEGMENTS else ""
    text = f"{pointer} — {len(opened)} conversations at that minute{more}\n\n" + "\n\n".join(o.text for o in opened)
    return Opened(id=str(pointer), kind="segment", date=opened[0].date, text=text,
                  details={"segments": [o.details for o in opened]})


OPENERS = {"episode": open_episode, "segment": open_segment, "knowledge": open_fact, "procedure": open_procedure,
           "kb": open_kb, "time": open_time}


def open_pointer(services, user_id: str, pointer: Pointer) -> Opened | None:
    """The memory ``pointer`` names in ``user_id``'s memory, or None when this user has none by that id.
    A short pointer (nodes.tools.pointers) opens the memory whose id it starts, after an id that is exactly it;
    InvalidInput when it starts several (naming them: the model can open the one it meant)."""
    user_id = ids.validate_id(user_id, "user_id")
    opened = OPENERS[pointer.kind](services, user_id, pointer)
    if opened is not None or not pointer.abbreviated:
        return opened
    whole = [pointer.completed(i) for i in _ids_starting(services, user_id, pointer)]
    if len(whole) > 1:
        names = ", ".join(str(p) for p in whole)
        raise InvalidInput("id", f"{pointer} starts the ids of several memories ({names}); read one by its whole id")
    return OPENERS[pointer.kind](services, user_id, whole[0]) if whole else None


def _ids_starting(services, user_id: str, pointer: Pointer) -> list[str]:
    """The user's whole ids a short pointer may name (for kb: the documents' ids), a few at most: enough to tell
    one from several, and to name them."""
    if pointer.kind != "kb":
        found = services.stores.archive.ids_starting(user_id, pointer.kind, pointer.id, limit=5)
        return [i for i in found if i != pointer.id]
    try:
        from ..kb.open import kb_of
    except ImportError:  # an installation without knowledge bases
        return []
    found = kb_of(services).catalog.doc_ids_starting(pointer.kb, [SHARED, user_id], pointer.doc_id, limit=5)
    return [i for i in found if i != pointer.doc_id]
