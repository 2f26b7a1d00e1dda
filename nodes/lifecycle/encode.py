"""Encoding (F1, F2, F6, F8, A5): a closed segment becomes a memory with its emotion, category, decay, protection,
its trigger and content (nodes.lifecycle.trigger_content) and its continues/references relations
(nodes.lifecycle.encode_relations); the open items its user turns mention and those they resolve are recorded
(nodes.issues).

Runs inside the archive transaction that stores the segment (nodes.archive_to_duckdb), so a memory and its
relations exist exactly when its segment is archived. Intensity and category are decided here and never
change; the batch moves everything else.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Callable

import numpy as np

from lumina_memory.nodes.text.emotion_f2 import EmotionReading, memory_emotion, read_emotion
from lumina_memory.nodes.text.important_tag import has_important_tag
from lumina_memory.nodes.text.protect import protect_request

from .clock import initial_memory_days
from .columns import CATEGORIES, NOT_ARCHIVED
from .encode_relations import link_new_memories
from .formulas import decay_coefficient
from .trigger_content import OFFLINE, Sides, extractive_sides

log = logging.getLogger("lumina.lifecycle")


def turn_reader(services) -> Callable[[str], EmotionReading]:
    """The per-turn emotion reader: the chat model's when one is configured, else the lexicon (S8: the
    reading's ``path`` and a log line say which ran). Built once per Services."""
    reader = services.built.get("emotion_reader")
    if reader is None:
        from lumina_memory.nodes.text.emotion_model import emotion_reader

        reader = emotion_reader(services.settings, services.chat_model if services.paths.get("summary") == "llm" else None)
        log.info("emotion reader path=%s", "lexicon" if reader is read_emotion else "model")
        services.built["emotion_reader"] = reader
    return reader


def texts_reader(services):
    """The model's trigger/content reader when one is configured for the LLM paths, else None (offline,
    extractive). Built once per Services."""
    if "memory_texts" not in services.built:
        from lumina_memory.nodes.text.emotion_model import MemoryTextsReader, emotion_chat_model

        model = services.chat_model if services.paths.get("summary") == "llm" else None
        if model is None and services.paths.get("summary") == "llm":
            model = emotion_chat_model(services.settings)
        services.built["memory_texts"] = None if model is None else MemoryTextsReader(model)
        log.info("memory trigger/content path=%s", OFFLINE if model is None else "model")
    return services.built["memory_texts"]


def memory_sides(services, turns: list[dict]) -> Sides:
    """F2: the memory's trigger (the user's words) and content (the characters' answer); the model's when one
    is configured, the extractive ones otherwise or when it fails (logged; ``path`` names the fallback)."""
    said = [(t.get("speaker") or "", t.get("text") or "") for t in turns]
    params = services.settings.lifecycle
    reader = texts_reader(services)
    if reader is not None:
        try:
            out = reader.read([(s, t) for s, t in said if t])
            return Sides(out.trigger.strip(), out.content.strip(), "model")
        except Exception as exc:  # noqa: BLE001 - any provider or schema failure: the offline texts, loudly
            reason = f"{type(exc).__name__}: {exc}"[:200]
            log.warning("trigger/content by the model failed (%s); extractive ones used", reason)
            offline = extractive_sides(services.embedder, said, params.trigger_turns, params.content_turns)
            return offline._replace(path=f"{OFFLINE} (model failed: {reason})")
    return extractive_sides(services.embedder, said, params.trigger_turns, params.content_turns)


def memory_rows(services, user_id: str, segments: list[tuple[Any, list[dict]]], protected_now: int) -> list[dict]:
    """Rows for stores.memories_duckdb.MemoryTable.put_new: (SegmentRecord, its turns) per closed segment.
    ``protected_now``: how many protected memories the user holds (F8 cap: past it, a request is logged and
    the memory stays unprotected; `lumina-memory protect` then names the limit)."""
    params = services.settings.lifecycle
    read = turn_reader(services)
    rows: list[dict] = []
    for record, turns in segments:
        readings = [read(t["text"]) for t in turns if t.get("text")]
        emotion = memory_emotion(readings) if readings else read_emotion("")
        # A user asks in words (F8); a character only by the notes' tag, which its write_memory tool sets.
        asked = any(protect_request(t["text"]) for t in turns if t.get("speaker") == "user" and t.get("text")) or any(
            has_important_tag(t.get("text") or "") for t in turns)
        protected = asked and protected_now < params.max_protected_memories
        if asked and not protected:
            log.warning("protect request not applied: the user already has %d protected memories (limit %d, "
                        "LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORIES); `lumina-memory unprotect` frees one",
                        protected_now, params.max_protected_memories)
        protected_now += int(protected)
        category = CATEGORIES.index(emotion.category)
        decay = float(decay_coefficient(np.array([category], np.int8), np.array([emotion.intensity]), params)[0])
        created = datetime.fromtimestamp(float(record.end_ts), UTC)
        sides = memory_sides(services, turns)
        rows.append({
            "memory_id": record.segment_id, "user_id": user_id, "created": float(record.end_ts),
            "category": emotion.category, "intensity": float(emotion.intensity), "valence": emotion.valence,
            "valence_score": float(emotion.valence_score), "arousal": float(emotion.arousal), "tags": list(emotion.tags),
            "decay": decay, "memory_days": initial_memory_days(created, params.schedule_hour, params.timezone),
            "retention": float(emotion.intensity), "level": 1, "protected": protected, "recalled": False,
            "recall_count": 0, "unbatched": True, "idle_days": 0.0, "archived_on": NOT_ARCHIVED, "archive_reason": 0,
            "revival_requested": False, "emotion_path": emotion.path,
            "trigger": sides.trigger, "content": sides.content, "trigger_path": sides.path,
        })
    return rows


def encode_segments(services, user_id: str, segments: list[tuple[Any, list[dict]]]) -> dict[str, int]:
    """(SegmentRecord, its turns) per closed segment, already written to the archive in the caller's
    transaction: their memory rows, then the relations of those that were new (a re-archived segment keeps
    its lifecycle, relations included). Returns how many memories and relations were added."""
    memories = services.stores.archive.memories
    held = memories.protected_count(user_id)
    new = set(memories.insert_new(memory_rows(services, user_id, segments, held)))
    fresh = [(r, t) for r, t in segments if r.segment_id in new]
    linked = link_new_memories(services, user_id, fresh)
    from lumina_memory.nodes.issues import track_issues  # A5: open items and their resolution (activity log)

    issues = track_issues(services, user_id, fresh) if fresh else {"opened": 0, "resolved": 0}
    return {"memories": len(new), "relations": linked, "issues_opened": issues["opened"],
            "issues_resolved": issues["resolved"]}
