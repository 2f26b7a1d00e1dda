"""ingest_turn: validate the incoming turn (chat message, transcript turn, or a batch of transcript
turns) and give each its id."""

from __future__ import annotations

import hashlib
from typing import Any

from langchain_core.messages import HumanMessage

from stores import ids
from stores.errors import InvalidInput

from .validate import parse_ts, validate_source_id, validate_speaker, validate_text, validate_user_id


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


def transcript_turn(raw: object, max_chars: int) -> tuple[str, str, float, str | None]:
    """(speaker, text, ts, source_id or None) of a transcript turn, validated and normalised exactly as
    the graph stores it. Raises InvalidInput naming the field."""
    if not isinstance(raw, dict):
        raise InvalidInput("turn", "must be an object with speaker, text and ts")
    speaker = validate_speaker(raw.get("speaker", "user"))
    text = validate_text(raw.get("text"), max_chars)
    ts = parse_ts(raw.get("ts"))
    return speaker, text, ts, raw.get("source_id")


def transcript_batch(rows: object, max_chars: int, max_rows: int) -> list[tuple[str, str, float, str]]:
    """Validated (speaker, text, ts, source_id) of a batch; a bad row rejects the whole batch, before
    anything is written, with the row's index in the field name."""
    if not isinstance(rows, list):
        raise InvalidInput("transcript", "must be a list of turns")
    if len(rows) > max_rows:
        raise InvalidInput("transcript", f"has {len(rows):,} turns; send at most {max_rows:,} per run")
    parsed = []
    for index, raw in enumerate(rows):
        try:
            speaker, text, ts, source = transcript_turn(raw, max_chars)
            source = validate_source_id(source if source is not None else default_source_id(speaker, ts, text))
        except InvalidInput as exc:
            raise InvalidInput(f"transcript[{index}].{exc.field}", exc.problem) from None
        parsed.append((speaker, text, ts, source))
    return parsed


def _ingest_batch(state: dict, user_id: str, settings, archive) -> dict:
    rows = transcript_batch(state.get("transcript"), settings.max_message_chars, settings.max_batch_turns)
    seen = {t["turn_id"] for t in state.get("turns", [])} | {
        t["turn_id"] for p in state.get("pending", []) for t in p.get("turns", [])
    }
    fresh: dict[str, dict] = {}
    for speaker, text, ts, source in rows:
        turn_id = ids.turn_id(user_id, source)
        if turn_id not in seen and turn_id not in fresh:  # the first of repeats within a batch wins
            fresh[turn_id] = {"turn_id": turn_id, "source_id": source, "speaker": speaker, "text": text, "ts": ts}
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
    if state.get("transcript") is not None:
        if state.get("turn") is not None:
            raise InvalidInput("transcript", "send either turn or transcript in one run, not both")
        return _ingest_batch(state, user_id, settings, services.stores.archive)
    raw = state.get("turn")
    if state.get("flush") and not raw:
        return {"incoming": None, "turn": None}
    if raw:
        speaker, text, ts, source = transcript_turn(raw, settings.max_message_chars)
    else:
        human = _last_human(state.get("messages", []))
        if human is None:
            return {"incoming": None, "turn": None}
        speaker = "user"
        content = human.content if isinstance(human.content, str) else str(human.content)
        text = validate_text(content, settings.max_message_chars, field="messages")
        ts = parse_ts(None)
        # The message id (set by add_messages) keeps a re-run from ingesting the same message twice.
        source = f"msg-{human.id}" if human.id else None
    if source is None:
        source = default_source_id(speaker, ts, text)
    source = validate_source_id(source)
    turn_id = ids.turn_id(user_id, source)
    already = {t["turn_id"] for t in state.get("turns", [])} | {
        t["turn_id"] for p in state.get("pending", []) for t in p.get("turns", [])
    }
    if turn_id in already or services.stores.archive.has_turn(user_id, turn_id):
        return {"incoming": None, "turn": None, "boundary": {"close": False, "reason": "duplicate", "turn_id": turn_id}}
    incoming = {"turn_id": turn_id, "source_id": source, "speaker": speaker, "text": text, "ts": ts}
    return {"incoming": incoming, "turn": None}
