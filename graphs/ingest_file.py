"""`lumina-memory ingest FILE`: every valid line goes in, every rejected one goes to a rejects file.

A bad row must not stop the import where it stands (turns before it half-imported, the next user's rows never
read), nor a gzip, binary or Latin-1 file end in a traceback. So:

1. The file is checked to be UTF-8 text first (nothing is read into memory before that): otherwise one
   clear error naming the file and the line and byte where it stops being text; nothing is ingested.
2. Every line is validated as the graph would (JSON object, user_id, speaker, text, ts, source_id) before
   anything is written. Valid lines are ingested per user, in file order, each user's last segment flushed.
3. Rejected lines go to ``<FILE>.rejects.jsonl`` (or ``--rejects PATH``), one JSON object per line:
   ``{"line", "user_id", "field", "reason", "raw"}`` — ``raw`` is the line as it was, so a fixed file can
   be ingested again (accepted lines are recognised and skipped). The file is private (0600): it holds
   what users said. A summary is printed; the exit status is 2 (as for any refused input) when any line
   was rejected, 0 when none was.
4. Nothing changes silently: a line over ``max_ingest_chars`` is rejected naming the limit and its setting;
   a line reusing a source id already stored (or used earlier in the file) with different text is
   rejected, the stored text kept (the same text again is skipped, as before); a time without an offset is
   read in LUMINA_TIMEZONE; lines with no time are counted in the summary, "given the import time".
5. F10: a file whose first line is a session transcript's entry (``type: user/assistant``, no user_id:
   nodes.session_transcript) is read for ``--user`` (refused by name without it), its assistant turns spoken
   by ``--as``, and stored one memory per exchange or per segment (``transcript_memory_unit``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lumina_memory.stores.errors import InvalidInput

from .session_replay import replay_session

GZIP_MAGIC = b"\x1f\x8b"
# Files that other tools produce by mistake in place of JSONL, recognised by their first bytes.
_MAGIC = {GZIP_MAGIC: "gzip-compressed (gunzip it first)", b"PK\x03\x04": "a zip archive",
          b"\x89PNG": "a PNG image", b"%PDF": "a PDF document"}


# JSON leaves these raw, and str.splitlines() (many JSONL readers) splits on them: escaped in the rejects file.
_LINE_BREAKS = {c: f"\\u{c:04x}" for c in (0x85, 0x2028, 0x2029)}


@dataclass
class Reject:
    line: int
    user_id: str | None
    field: str
    reason: str
    raw: str


def rejects_path(source: Path, override: str | None = None) -> Path:
    return Path(override) if override else source.with_name(source.name + ".rejects.jsonl")


def check_text_file(path: Path) -> None:
    """InvalidInput("file", ...) naming the file and where, unless the file is UTF-8 text."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InvalidInput("file", f"{path}: cannot be read ({exc.strerror})") from None
    with handle:
        head = handle.read(8)
        for magic, what in _MAGIC.items():
            if head.startswith(magic):
                raise InvalidInput("file", f"{path} is {what}, not UTF-8 JSONL text")
        handle.seek(0)
        offset = 0
        for lineno, line in enumerate(handle, 1):
            nul = line.find(b"\x00")
            if nul >= 0:
                raise InvalidInput("file", f"{path} is binary, not text: a NUL byte on line {lineno} (byte {offset + nul})")
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    "file", f"{path} is not UTF-8 text: line {lineno}, byte {offset + exc.start} "
                    f"(0x{line[exc.start]:02x}); convert it, e.g. `iconv -f latin1 -t utf-8`"
                ) from None
            offset += len(line)


def _check_row(row: Any, settings) -> str:
    """The row's user id, or InvalidInput naming the field, exactly as the graph would refuse it."""
    from lumina_memory.nodes.ingest_turn import transcript_turn
    from lumina_memory.nodes.validate import validate_user_id

    if not isinstance(row, dict):
        raise InvalidInput("line", "must be a JSON object")
    user_id = validate_user_id(row.get("user_id"))
    transcript_turn(row, settings, kinds=())
    return user_id


@dataclass
class Session:
    """F10: the file is a session transcript (type: user/assistant lines), read for ``user_id``."""

    user_id: str
    speaker: str
    skipped: dict[str, int]


def _parsed(path: Path, rejects: list[Reject]) -> list[tuple[int, str, Any]]:
    """(line number, line, JSON value) of each non-blank line; lines that are no JSON go to ``rejects``."""
    out = []
    with path.open(encoding="utf-8", newline="") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                out.append((lineno, line.rstrip("\r\n"), json.loads(line)))
            except json.JSONDecodeError as exc:
                rejects.append(Reject(lineno, None, "line", f"not JSON ({exc.msg})", line.rstrip("\r\n")))
    return out


def _session_rows(path: Path, parsed: list[tuple[int, str, Any]], user_id: str | None, speaker: str):
    """The turns of a session transcript as (line, row) pairs, and what was skipped."""
    from lumina_memory.nodes.session_transcript import session_rows
    from lumina_memory.nodes.validate import validate_user_id

    if user_id is None:
        raise InvalidInput("user", f"{path} is a session transcript (type: user/assistant lines, no user_id): "
                                   "name whose memory it goes to with --user")
    entries = [(lineno, value) for lineno, _, value in parsed if isinstance(value, dict)]
    return session_rows(entries, validate_user_id(user_id), speaker)


def read_rows(path: Path, settings, user_id: str | None = None, speaker: str = "lumina"
              ) -> tuple[list[dict[str, Any]], list[Reject], list[tuple[int, str]], Session | None]:
    """Valid rows in file order, the rejected lines, each valid row's (line number, line), and, for a session
    transcript (its first line is one: nodes.session_transcript), what it was read as. Call check_text_file
    first."""
    from lumina_memory.nodes.session_transcript import is_session_entry

    rows: list[dict[str, Any]] = []
    lines: list[tuple[int, str]] = []
    rejects: list[Reject] = []
    parsed = _parsed(path, rejects)
    session = None
    candidates = parsed
    if parsed and is_session_entry(parsed[0][2]):
        turns, skipped = _session_rows(path, parsed, user_id, speaker)
        raw_of = {lineno: raw for lineno, raw, _ in parsed}
        candidates = [(lineno, raw_of[lineno], row) for lineno, row in turns]
        rejects += [Reject(lineno, None, "line", "must be a JSON object", raw)
                    for lineno, raw, value in parsed if not isinstance(value, dict)]
        session = Session(turns[0][1]["user_id"] if turns else str(user_id), speaker, skipped)
    for lineno, raw, row in candidates:
        try:
            _check_row(row, settings)
        except InvalidInput as exc:
            user = row.get("user_id") if isinstance(row, dict) else None
            rejects.append(Reject(lineno, user if isinstance(user, str) else None, exc.field, exc.problem, raw))
            continue
        rows.append(row)
        lines.append((lineno, raw))
    rejects.sort(key=lambda r: r.line)
    return rows, rejects, lines, session


def reject_reused(services, graph, rows: list[dict[str, Any]], lines: list[tuple[int, str]]) -> tuple[list[dict[str, Any]], list[Reject]]:
    """The rows without those reusing a source id already stored (archived, in the user's open segment, or
    on an earlier line) with different text, and those as rejects: the graph would refuse the whole run."""
    from lumina_memory.nodes.ingest_turn import reused_rows
    from lumina_memory.nodes.input_check import SourceReused

    from .replay import thread_config

    by_user: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_user.setdefault(row["user_id"], []).append(index)
    bad: set[int] = set()
    for user_id, indexes in by_user.items():
        state = graph.get_state(thread_config(user_id)).values if getattr(graph, "checkpointer", None) else None
        found = reused_rows(user_id, [rows[i] for i in indexes], services.settings, services.stores.archive, state)
        bad |= {indexes[k] for k in found}
    rejects = []
    for i in sorted(bad):
        refusal = SourceReused("source_id", rows[i]["source_id"])
        rejects.append(Reject(lines[i][0], rows[i]["user_id"], refusal.field, refusal.problem, lines[i][1]))
    return [row for i, row in enumerate(rows) if i not in bad], rejects


def write_rejects(path: Path, rejects: list[Reject]) -> None:
    """The rejected lines, private to the owner (they hold what users said); replaced atomically."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        for reject in rejects:
            line = json.dumps(asdict(reject), ensure_ascii=False).translate(_LINE_BREAKS)
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (a user_id sent as "\ud800"): escaped, as it came
                line = json.dumps(asdict(reject))
            handle.write(line + "\n")
    os.replace(tmp, path)


def summary_notes(reused: list[Reject], untimed: int) -> list[str]:
    """What the import changed or refused beyond plain rejects, one sentence each."""
    notes = []
    if reused:
        ids = sorted({json.loads(r.raw)["source_id"] for r in reused})
        shown = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
        notes.append(f"{len(reused)} row{'s' if len(reused) > 1 else ''} reuse{'' if len(reused) > 1 else 's'} "
                     f"source_id {shown} with different text: rejected (the stored text is kept)")
    if untimed:
        notes.append(f"{untimed} row{'s' if untimed > 1 else ''} had no time: given the import time")
    return notes


def session_note(session: Session) -> str:
    """What a session transcript was read as: who, and what was skipped."""
    skipped = session.skipped
    return (f"session transcript for {session.user_id} (assistant as {session.speaker}): skipped "
            f"{skipped['commands']} slash command entr{'y' if skipped['commands'] == 1 else 'ies'}, "
            f"{skipped['tool_results']} tool results, {skipped['meta']} meta or side-chain entries, "
            f"{skipped['other']} other entries")


def _index_after_import(services, console) -> None:
    """A bulk import is what makes the embedded vector store's indexes due (graphs.vector_indexes): built now,
    once, instead of every recall scanning the new points until the next maintenance run."""
    from .vector_indexes import build_due_indexes

    with console.status("building vector indexes for the new memories…"):
        report = build_due_indexes(services)
    for built in report["built"]:
        console.print(f"vector index of {built['collection']}: {built['points']:,} points in {built['seconds']} s")


def ingest_file(args, open_graph, ingest_rows, console) -> int:
    """The `ingest` command: ``open_graph()`` → (services, graph, conn); ``ingest_rows(graph, rows, label)``
    → turns sent per user."""
    source = Path(args.file)
    check_text_file(source)
    services, graph, conn = open_graph()
    try:
        rows, rejects, lines, session = read_rows(source, services.settings, getattr(args, "user", None),
                                                  getattr(args, "speaker", None) or "lumina")
        rows, reused = reject_reused(services, graph, rows, lines)
        rejects = sorted(rejects + reused, key=lambda r: r.line)
        untimed = sum(1 for row in rows if row.get("ts") in (None, ""))
        if session is not None:  # F10: one memory per exchange or per segment (transcript_memory_unit)
            with console.status(f"ingesting {source.name} ({services.settings.transcript_memory_unit} memories)…"):
                counts = {session.user_id: replay_session(graph, session.user_id, rows)} if rows else {}
        else:
            counts = ingest_rows(graph, rows, f"ingesting {source.name}") if rows else {}
        if counts:
            _index_after_import(services, console)
    finally:
        services.close()
        conn.close()
    for user_id, n in counts.items():
        console.print(f"{user_id}: {n} turns")
    if session is not None:
        console.print(session_note(session), markup=False)
    for line in summary_notes(reused, untimed):
        console.print(line, markup=False)
    if not rejects:
        console.print(f"{len(rows)} lines ingested, none rejected")
        return 0
    target = rejects_path(source, getattr(args, "rejects", None))
    write_rejects(target, rejects)
    console.print(f"[yellow]{len(rows)} lines ingested, {len(rejects)} rejected[/yellow] "
                  f"(lines {', '.join(str(r.line) for r in rejects[:10])}{' …' if len(rejects) > 10 else ''}); "
                  f"each with its reason in {target}")
    for reject in rejects[:5]:
        console.print(f"  line {reject.line}: invalid {reject.field}: {reject.reason}", markup=False)
    return 2
