"""ingest_turn: validate the incoming turn (chat message, transcript turn, or a batch of transcript
turns) and give each its id.

A turn's time without an offset ("2026-10-01T09:00") is on the user's clock (LUMINA_TIMEZONE), as the
user said it. A text over ``max_ingest_chars`` is refused (MessageTooLong); a source id already stored
with another text is refused (SourceReused), the same text again is a no-op.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Mapping

from langchain_core.messages import BaseMessage, HumanMessage, convert_to_messages

from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput

from .input_check import SourceReused, check_length, check_owner, message_text
from .activity import record
from .retrieval.temporal_calendar import zone_of
from .text.chunking import split_message
from .text.redact import KINDS, redact
from .validate import (
    clean_text, compact_text, parse_ts, redaction_kinds, validate_message, validate_source_id, validate_speaker,
    validate_user_id,
)


def _last_human(messages: list[Any]) -> HumanMessage | None:
    for message in reversed(messages or []):
        if isinstance(message, HumanMessage):
            return message
    return None


def default_source_id(speaker: str, ts: float, text: str) -> str:
    """Without a caller id, a turn's identity is its content and time: replaying the same
    transcript yields the same ids, and so the same records in every tier."""
    digest = hashlib.sha256(f"{speaker}|{ts:.3f}|{text}".encode()).hexdigest()[:24]
    return f"t-{digest}"


def local_ts(value: object, timezone: str, field: str = "ts") -> float:
    """``parse_ts``, with an ISO time that has no offset read on the clock of ``timezone``."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            parsed = None  # parse_ts names the problem
        if parsed is not None and parsed.tzinfo is None:
            return parse_ts(parsed.replace(tzinfo=zone_of(timezone)).isoformat(), field)
    return parse_ts(value, field)


def _limited(text: object, kinds: tuple[str, ...] | None, settings, field: str) -> tuple[str, int | None]:
    """``validate_message``'s text and original length, refused over ``max_ingest_chars`` as compacted and
    before PII is redacted (what ``check_run_input`` measures: it redacts nothing)."""
    text, original, _ = validate_message(text, field, kinds=())
    check_length(text, settings.max_ingest_chars, field)
    if kinds is None or kinds:
        text = redact(text, KINDS if kinds is None else kinds)[0]
    return text, original


def _turn_fields(raw: object, kinds: tuple[str, ...] | None, settings) -> tuple[str, str, float, str | None, int | None]:
    if not isinstance(raw, dict):
        raise InvalidInput("turn", "must be an object with speaker, text and ts")
    speaker = validate_speaker(raw.get("speaker", "user"))
    text, original = _limited(raw.get("text"), kinds, settings, "text")
    ts = local_ts(raw.get("ts"), settings.timezone)
    source = raw.get("source_id")
    return speaker, text, ts, None if source is None else validate_source_id(source), original


def transcript_turn(raw: object, settings, kinds: tuple[str, ...] | None = None) -> tuple[str, str, float, str | None]:
    """(speaker, text, ts, source_id or None) of a transcript turn, validated and normalised exactly as
    the graph stores it (compacted, PII of ``kinds`` redacted: None = every kind; a text over
    ``max_message_chars`` is kept whole here, ingest chunks it; over ``max_ingest_chars`` refused).
    Raises InvalidInput naming the field."""
    return _turn_fields(raw, kinds, settings)[:4]


def _in_row(exc: InvalidInput, index: int) -> InvalidInput:
    """The same refusal (same class) with the batch row's index in its field."""
    renamed = Exception.__new__(type(exc))
    renamed.__dict__.update(vars(exc))
    renamed.field = f"transcript[{index}].{exc.field}"
    renamed.args = (f"invalid {renamed.field}: {exc.problem}",)
    return renamed


def _turn_dicts(user_id: str, speaker: str, text: str, ts: float, source: str, original: int | None, settings) -> list[dict]:
    """The turn, or its parts when the text is over max_message_chars (S3): part k has the source id
    ``<source>:part<k>``, the parent's time, and ``parent``/``part`` fields; recall joins parts back."""
    parts = split_message(text, settings.max_message_chars, settings.long_message_chunk_tokens,
                          settings.long_message_chunk_overlap)
    out = []
    for index, part in enumerate(parts):
        sid = source if len(parts) == 1 else ids.part_source_id(source, index)
        turn = {"turn_id": ids.turn_id(user_id, sid), "source_id": sid, "speaker": speaker, "text": part, "ts": ts}
        if len(parts) > 1:
            turn.update(parent=source, part=index, parts=len(parts))
        if original is not None:
            turn["original_chars"] = original  # degenerate text was compacted: its length as sent
        out.append(turn)
    return out


def stored_turns(user_id: str, speaker: str, text: str, ts: float, source: str, settings) -> list[dict]:
    """The turns a validated text is stored as: itself, or its chunks when over ``max_message_chars``."""
    return _turn_dicts(user_id, speaker, text, ts, source, None, settings)


def _batch_rows(rows: object, settings, kinds: tuple[str, ...] | None) -> list[tuple[str, str, float, str, int | None, bool]]:
    """(speaker, text, ts, source_id, original length, whether the caller named the source id) of each row."""
    if not isinstance(rows, list):
        raise InvalidInput("transcript", "must be a list of turns")
    max_rows = settings.max_batch_turns
    if len(rows) > max_rows:
        raise InvalidInput("transcript", f"has {len(rows):,} turns; send at most {max_rows:,} per run")
    parsed = []
    for index, raw in enumerate(rows):
        try:
            speaker, text, ts, source, original = _turn_fields(raw, kinds, settings)
            named = source is not None
            source = source if named else validate_source_id(default_source_id(speaker, ts, text))
        except InvalidInput as exc:
            raise _in_row(exc, index) from None
        parsed.append((speaker, text, ts, source, original, named))
    return parsed


def transcript_batch(rows: object, settings, kinds: tuple[str, ...] | None = None) -> list[tuple[str, str, float, str]]:
    """Validated (speaker, text, ts, source_id) of a batch; a bad row rejects the whole batch, before
    anything is written, with the row's index in the field name."""
    return [row[:4] for row in _batch_rows(rows, settings, kinds)]


def _known_texts(state: Mapping[str, Any] | None) -> dict[str, str]:
    """turn id -> text of the thread's turns not archived yet (the open segment and the pending flushes)."""
    state = state or {}
    turns = [*(state.get("turns") or []), *(t for p in state.get("pending") or [] for t in p.get("turns", []))]
    return {t["turn_id"]: t["text"] for t in turns}


def reused_sources(user_id: str, rows: list[tuple], settings, archive, known: Mapping[str, str]) -> list[int]:
    """Indexes of ``rows`` (as ``_batch_rows`` gives them) whose named source id is stored — in ``known``, the
    archive, or an earlier row — with a different text. A source is compared as stored: whole, or its chunks
    (S3); a text that now chunks differently (more parts, fewer, or whole) is a different text."""
    planned = []
    for index, (speaker, text, ts, source, original, named) in enumerate(rows):
        if not named:  # a default id is a hash of the text: another text has another id
            continue
        new = {t["turn_id"]: t["text"] for t in _turn_dicts(user_id, speaker, text, ts, source, original, settings)}
        probe = set(new) | {ids.turn_id(user_id, s) for s in (source, ids.part_source_id(source, 0), ids.part_source_id(source, len(new)))}
        planned.append((index, new, probe))
    if not planned:
        return []
    stored = dict(known)
    asked = list({turn_id for _, _, probe in planned for turn_id in probe if turn_id not in stored})
    if asked:
        stored.update((t.turn_id, t.text) for t in archive.get_turns(user_id, asked))
    reused = []
    for index, new, probe in planned:
        present = {turn_id: stored[turn_id] for turn_id in probe if turn_id in stored}
        if present and present != new:
            reused.append(index)
        else:
            stored.update(new)  # a later row of the same run is compared with this one
    return reused


def reused_rows(user_id: str, rows: list[dict], settings, archive, state: Mapping[str, Any] | None) -> list[int]:
    """Indexes of transcript ``rows`` (valid ones) reusing a stored source id with different text; the state
    is the thread's (its open segment). For an importer that rejects those rows and takes the rest."""
    kinds = redaction_kinds(settings)  # compared as stored
    parsed = [_batch_rows([row], settings, kinds)[0] for row in rows]
    return reused_sources(user_id, parsed, settings, archive, _known_texts(state))


def check_reuse(data: object, user_id: str, settings, archive, state: Mapping[str, Any] | None) -> None:
    """SourceReused (naming the row) when a run's turn or batch row reuses a stored source id with other text."""
    if not isinstance(data, Mapping):
        return
    kinds = redaction_kinds(settings)  # compared as stored
    if data.get("transcript") is not None:
        rows, batch = _batch_rows(data["transcript"], settings, kinds), True
    elif isinstance(data.get("turn"), dict) and data["turn"].get("source_id") is not None:
        speaker, text, ts, source, original = _turn_fields(data["turn"], kinds, settings)
        rows, batch = [(speaker, text, ts, source, original, True)], False
    else:
        return
    reused = reused_sources(user_id, rows, settings, archive, _known_texts(state))
    if reused:
        index = reused[0]
        raise SourceReused(f"transcript[{index}].source_id" if batch else "source_id", rows[index][3])


def _ingest_batch(state: dict, user_id: str, settings, archive) -> dict:
    rows = _batch_rows(state.get("transcript"), settings, redaction_kinds(settings))
    reused = reused_sources(user_id, rows, settings, archive, _known_texts(state))
    if reused:  # graphs.input_guard refuses it earlier, before any write
        raise SourceReused(f"transcript[{reused[0]}].source_id", rows[reused[0]][3])
    seen = {t["turn_id"] for t in state.get("turns", [])} | {
        t["turn_id"] for p in state.get("pending", []) for t in p.get("turns", [])
    }
    fresh: dict[str, dict] = {}
    for speaker, text, ts, source, original, _named in rows:
        for turn in _turn_dicts(user_id, speaker, text, ts, source, original, settings):
            if turn["turn_id"] not in seen and turn["turn_id"] not in fresh:  # the first of repeats within a batch wins
                fresh[turn["turn_id"]] = turn
    if fresh and hasattr(archive, "missing_turns"):  # one query for the batch
        missing = set(archive.missing_turns(user_id, list(fresh)))
    else:
        missing = {t for t in fresh if not archive.has_turn(user_id, t)}
    arrivals = [turn for turn_id, turn in fresh.items() if turn_id in missing]
    update: dict = {"transcript": None, "turn": None, "incoming": None, "arrivals": arrivals}
    if not arrivals:
        update["boundary"] = {"close": False, "reason": "duplicate", "turns": len(rows)}
    return update


def ingest_turn(state: dict, ctx, services) -> dict:
    settings = services.settings
    user_id = validate_user_id(ctx.user_id)
    check_owner(state.get("owner"), user_id)  # graphs.input_guard refuses it earlier, before any write
    update = _ingest(state, user_id, settings, services)
    arrived = update.get("arrivals") or ([update["incoming"]] if update.get("incoming") else [])
    if arrived:  # A10: what came in (ids, counts, times; never the text)
        record(services, user_id, "turns", count=len(arrived), first=arrived[0]["turn_id"], last=arrived[-1]["turn_id"],
               ts=[arrived[0]["ts"], arrived[-1]["ts"]],
               chunked=sum(1 for t in arrived if "parent" in t), compacted=sum(1 for t in arrived if "original_chars" in t))
    return {**update, "owner": user_id}


def _ingest(state: dict, user_id: str, settings, services) -> dict:
    if state.get("transcript") is not None:
        if state.get("turn") is not None:
            raise InvalidInput("transcript", "send either turn or transcript in one run, not both")
        return _ingest_batch(state, user_id, settings, services.stores.archive)
    raw = state.get("turn")
    if state.get("flush") and not raw:
        return {"incoming": None, "turn": None}
    original = None
    replaced: list = []  # the chat message with its stored text, when that differs (PII redacted, compacted)
    if raw:
        speaker, text, ts, source, original = _turn_fields(raw, redaction_kinds(settings), settings)
        if source is not None and reused_sources(user_id, [(speaker, text, ts, source, original, True)], settings,
                                                 services.stores.archive, _known_texts(state)):
            raise SourceReused("source_id", source)  # graphs.input_guard refuses it earlier, before any write
    else:
        human = _last_human(state.get("messages", []))
        if human is None:
            return {"incoming": None, "turn": None}
        speaker = "user"
        # LangChain's standard content blocks ([{"type": "text", "text": ...}]) give their text parts.
        text, original = _limited(message_text(human.content), redaction_kinds(settings), settings, "messages")
        if text != human.content and human.id:
            replaced = [HumanMessage(content=text, id=human.id, name=human.name)]  # add_messages replaces by id
        ts = parse_ts(None)
        # The message id (set by add_messages) keeps a re-run from ingesting the same message twice.
        source = f"msg-{human.id}" if human.id else None
    if source is None:
        source = default_source_id(speaker, ts, text)
    source = validate_source_id(source)
    turns = _turn_dicts(user_id, speaker, text, ts, source, original, settings)
    turn_id = turns[0]["turn_id"]
    already = {t["turn_id"] for t in state.get("turns", [])} | {
        t["turn_id"] for p in state.get("pending", []) for t in p.get("turns", [])
    }
    if turn_id in already or services.stores.archive.has_turn(user_id, turn_id):
        return {"incoming": None, "turn": None, "boundary": {"close": False, "reason": "duplicate", "turn_id": turn_id}}
    update: dict = {"messages": replaced} if replaced else {}
    if len(turns) > 1:  # a long message: its parts arrive together, as a transcript's turns do
        return {**update, "incoming": None, "turn": None, "arrivals": turns}
    return {**update, "incoming": turns[0], "turn": None}


def _messages(raw: object) -> list[BaseMessage]:
    if raw is None:
        return []
    try:
        return convert_to_messages(raw if isinstance(raw, list) else [raw])
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise InvalidInput("messages", f"not chat messages ({str(exc)[:120]})") from None


def check_run_input(data: object, user_id: object, settings) -> None:
    """Raise InvalidInput (naming the field) for any input ``ingest_turn`` would refuse by its form; return
    quietly for input that is not a dict (a resume Command, None): the graph deals with those itself.
    (A reused source id needs the stores: ``ingest_turn.check_reuse``.)"""
    validate_user_id(user_id)
    if not isinstance(data, Mapping):
        return
    if data.get("transcript") is not None:
        if data.get("turn") is not None:
            raise InvalidInput("transcript", "send either turn or transcript in one run, not both")
        transcript_batch(data["transcript"], settings, kinds=())  # kinds=(): check only, redact nothing
    elif data.get("turn"):
        transcript_turn(data["turn"], settings, kinds=())
    # Every message of the input is kept in the thread's state, not only the one ingested: check them all.
    for index, message in enumerate(_messages(data.get("messages"))):
        # A user's text over max_message_chars is chunked in ingest_turn (S3); over max_ingest_chars refused.
        text = message_text(message.content)
        if isinstance(message, HumanMessage):
            check_length(compact_text(clean_text(text, "messages"))[0], settings.max_ingest_chars, "messages")
        elif text != "":  # an AI message with only tool calls has no text
            clean_text(text, f"messages[{index}]")
