"""ingest_turn: validate the incoming turn (chat message, transcript turn, or a batch of transcript
turns) and give each its id."""

from __future__ import annotations

import hashlib
from typing import Any

from langchain_core.messages import HumanMessage

from stores import ids
from stores.errors import InvalidInput

from .input_check import check_owner, message_text
from .activity import record
from .text.chunking import split_message
from .validate import parse_ts, redaction_kinds, validate_message, validate_source_id, validate_speaker, validate_user_id


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


def _turn_fields(raw: object, kinds: tuple[str, ...] | None) -> tuple[str, str, float, str | None, int | None]:
    if not isinstance(raw, dict):
        raise InvalidInput("turn", "must be an object with speaker, text and ts")
    speaker = validate_speaker(raw.get("speaker", "user"))
    text, original, _ = validate_message(raw.get("text"), kinds=kinds)
    ts = parse_ts(raw.get("ts"))
    return speaker, text, ts, raw.get("source_id"), original


def transcript_turn(raw: object, max_chars: int, kinds: tuple[str, ...] | None = None) -> tuple[str, str, float, str | None]:
    """(speaker, text, ts, source_id or None) of a transcript turn, validated and normalised exactly as
    the graph stores it (compacted, PII of ``kinds`` redacted: None = every kind; a text over
    ``max_chars`` is kept whole here, ingest chunks it). Raises InvalidInput naming the field."""
    return _turn_fields(raw, kinds)[:4]


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


def _batch_rows(rows: object, max_rows: int, kinds: tuple[str, ...] | None) -> list[tuple[str, str, float, str, int | None]]:
    if not isinstance(rows, list):
        raise InvalidInput("transcript", "must be a list of turns")
    if len(rows) > max_rows:
        raise InvalidInput("transcript", f"has {len(rows):,} turns; send at most {max_rows:,} per run")
    parsed = []
    for index, raw in enumerate(rows):
        try:
            speaker, text, ts, source, original = _turn_fields(raw, kinds)
            source = validate_source_id(source if source is not None else default_source_id(speaker, ts, text))
        except InvalidInput as exc:
            raise InvalidInput(f"transcript[{index}].{exc.field}", exc.problem) from None
        parsed.append((speaker, text, ts, source, original))
    return parsed


def transcript_batch(rows: object, max_chars: int, max_rows: int, kinds: tuple[str, ...] | None = None) -> list[tuple[str, str, float, str]]:
    """Validated (speaker, text, ts, source_id) of a batch; a bad row rejects the whole batch, before
    anything is written, with the row's index in the field name."""
    return [row[:4] for row in _batch_rows(rows, max_rows, kinds)]


def _ingest_batch(state: dict, user_id: str, settings, archive) -> dict:
    rows = _batch_rows(state.get("transcript"), settings.max_batch_turns, redaction_kinds(settings))
    seen = {t["turn_id"] for t in state.get("turns", [])} | {
        t["turn_id"] for p in state.get("pending", []) for t in p.get("turns", [])
    }
    fresh: dict[str, dict] = {}
    for speaker, text, ts, source, original in rows:
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
        speaker, text, ts, source, original = _turn_fields(raw, redaction_kinds(settings))
    else:
        human = _last_human(state.get("messages", []))
        if human is None:
            return {"incoming": None, "turn": None}
        speaker = "user"
        # LangChain's standard content blocks ([{"type": "text", "text": ...}]) give their text parts.
        text, original, _ = validate_message(message_text(human.content), "messages", redaction_kinds(settings))
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
