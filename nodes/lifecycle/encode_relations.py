"""F6 relations made when a memory is encoded: ``continues`` and ``references`` (the batch adds same_topic).

Runs inside the archive transaction that writes the segments and their memory rows (nodes.lifecycle.encode,
called by nodes.archive_to_duckdb), after those rows are in: the relations commit with the memory or not at
all, and only memories that transaction made new are linked, so a replayed or resumed write adds nothing.
The store also refuses a pair that already has the kind either way round (the batch may have re-pointed it).

``continues`` — the new memory carries on the user's previous one. The segment records hold no LangGraph
thread id, so "the same conversation" is read from what they do hold: the previous memory is the user's
newest one that ended at or before the new segment began; they share a character (or one of them has none:
only the user spoke); the new one began at most ``continues_max_gap_seconds`` after the previous ended. Then
the boundary between them (the previous segment's ``close_reason``) decides:
  - ``turn_cap``: the segment was cut only for length → continues;
  - a topic shift (``shift_phrase``, ``domain_change``, ``low_similarity``) → never: the boundary detector
    judged that very boundary a change of topic (if the two are still alike, the batch's same_topic says so);
  - a pause (``idle``, ``explicit`` = a flush, or unknown) → continues when the two segments' embeddings
    have cosine ≥ ``continues_min_similarity``.
Score: that cosine.

``references`` — a user turn of the new memory refers back (nodes.text.reference_cues: 「この前話した…」,
"as I said"). Its best match among the user's ``relation_lookback_memories`` newest earlier, non-archived
memories: match = max over the cue turns of cosine(turn, memory's segment embedding) + ``references_keyword_weight``
× the share of the cue turns' nouns among the memory's keywords; linked only at ≥ ``references_min_match``.
At most one per new memory. Score: the match. Only the user's own memories are ever read (the store query
is by user), so a relation never crosses users.

Direction: applied here with the batch's own rule (``relations.points_right``: higher → lower retention,
newer → older when within ``score_proximity_threshold``), with the new memory's retention = its intensity and
the earlier one's as of the last batch; step 6 re-points later as retentions move. The kind is kept either
way, as the batch does.

Graph tier: the same transaction owes the user's relations to the graph (lifecycle outbox action
``relations``); the next maintenance run applies it (nodes.lifecycle.phases: its ``owed`` phase, first in the
lifecycle, or its ``relations`` phase, mirror the archive's relations with ``graph.set_relations``). Until
then the graph holds the segment nodes without these edges.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple, Sequence

import numpy as np

from lumina_memory.nodes.text.reference_cues import refers_back
from lumina_memory.nodes.text.tokenize import nouns
from lumina_memory.stores.records import RecentMemory
from lumina_memory.stores.models import SegmentRecord

from .clock import batch_day
from .columns import ARCHIVED, MemoryColumns
from .params import LifecycleParams
from .relations import points_right

LENGTH_CUTS = frozenset({"turn_cap"})
TOPIC_SHIFTS = frozenset({"shift_phrase", "domain_change", "low_similarity"})


class Found(NamedTuple):
    """A relation found for a new memory, before its direction is decided."""

    new: str
    earlier: str
    kind: str
    score: float


class Cue(NamedTuple):
    """The user turns of a new memory that refer back: their vectors and nouns."""

    vectors: np.ndarray  # (turns, dim), unit rows
    terms: frozenset[str]


def same_conversation(earlier: Sequence[str], new: Sequence[str]) -> bool:
    """Two segments can be one conversation: a character in common, or one where only the user spoke."""
    return not earlier or not new or bool(set(earlier) & set(new))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape or not a.size:
        return 0.0
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms else 0.0


def continuation(previous: RecentMemory, record: SegmentRecord, params: LifecycleParams) -> float | None:
    """The cosine of the two segments when ``record`` continues ``previous`` (module docstring), else None."""
    gap = record.start_ts - previous["created"]
    if not 0 <= gap <= params.continues_max_gap_seconds or previous["level"] == ARCHIVED:
        return None
    if not same_conversation(previous["characters"], record.characters) or previous["close_reason"] in TOPIC_SHIFTS:
        return None
    cosine = _cosine(previous["embedding"], np.asarray(record.embedding, dtype=np.float32))
    if previous["close_reason"] in LENGTH_CUTS or cosine >= params.continues_min_similarity:
        return cosine
    return None


def reference_match(cue: Cue, candidates: Sequence[RecentMemory], params: LifecycleParams) -> tuple[str, float] | None:
    """(memory_id, match) of the best candidate at or above ``references_min_match``; ties: the newer."""
    dim = cue.vectors.shape[1]
    usable = [c for c in candidates if c["embedding"].shape == (dim,)]
    if not usable:
        return None
    matrix = np.stack([c["embedding"] for c in usable])
    cosine = (cue.vectors @ matrix.T).max(axis=0)
    share = np.array([len(cue.terms & set(c["keywords"])) / len(cue.terms) if cue.terms else 0.0 for c in usable])
    match = cosine + params.references_keyword_weight * share
    best = int(np.argmax(match))  # candidates come newest first
    if match[best] < params.references_min_match:
        return None
    return usable[best]["memory_id"], float(match[best])


def find_relations(
    records: Sequence[SegmentRecord], cues: dict[str, Cue], recent: Sequence[RecentMemory], params: LifecycleParams,
) -> list[Found]:
    """Continues and references of each new record against the user's ``recent`` memories (newest first;
    the new records' own rows among them)."""
    found: list[Found] = []
    for record in records:
        earlier = [m for m in recent if m["created"] <= record.start_ts and m["memory_id"] != record.segment_id]
        if earlier:
            score = continuation(earlier[0], record, params)
            if score is not None:
                found.append(Found(record.segment_id, earlier[0]["memory_id"], "continues", score))
        cue = cues.get(record.segment_id)
        if cue is not None:
            active = [m for m in earlier if m["level"] != ARCHIVED][: params.relation_lookback_memories]
            best = reference_match(cue, active, params)
            if best is not None:
                found.append(Found(record.segment_id, best[0], "references", best[1]))
    return found


def orient(
    found: Sequence[Found], recent: Sequence[RecentMemory], params: LifecycleParams,
) -> list[tuple[str, str, str, float]]:
    """(src, dst, kind, score) with the batch's direction rule applied to each found pair."""
    if not found:
        return []
    row = {m["memory_id"]: m for m in recent}
    ids = list(dict.fromkeys(i for f in found for i in (f.new, f.earlier)))
    index = {memory_id: i for i, memory_id in enumerate(ids)}
    retention = np.array([row[i]["retention"] for i in ids])
    created = np.array([row[i]["created"] for i in ids])
    columns = MemoryColumns.new(intensity=retention, retention=retention, created=created,
                                decay=np.full(len(ids), params.base_decay_coefficient))  # decay: unused here
    new = np.array([index[f.new] for f in found], dtype=np.int64)
    earlier = np.array([index[f.earlier] for f in found], dtype=np.int64)
    forward = points_right(new, earlier, columns, params)
    return [(f.new, f.earlier, f.kind, f.score) if ok else (f.earlier, f.new, f.kind, f.score)
            for f, ok in zip(found, forward)]


def cues_of(services, segments: Sequence[tuple[SegmentRecord, list[dict]]]) -> dict[str, Cue]:
    """The user turns that refer back, per new memory, embedded (the embedder's cache has them already:
    boundary detection embedded every turn)."""
    texts = {record.segment_id: [t["text"] for t in turns if t.get("speaker") == "user" and t.get("text")
                                 and refers_back(t["text"])] for record, turns in segments}
    texts = {k: v for k, v in texts.items() if v}
    if not texts:
        return {}
    unique = list(dict.fromkeys(t for v in texts.values() for t in v))
    vector_of = dict(zip(unique, np.asarray(services.embedder.embed(unique), dtype=np.float32)))
    return {k: Cue(np.stack([vector_of[t] for t in v]), frozenset(w for t in v for w in nouns(t)))
            for k, v in texts.items()}


def link_new_memories(services, user_id: str, segments: Sequence[tuple[SegmentRecord, list[dict]]]) -> int:
    """Add the continues/references relations of the user's just-encoded memories (inside the archive
    transaction that wrote them); returns how many were added."""
    params: LifecycleParams = services.settings.lifecycle
    if not params.enable_encoding_links or not segments:
        return 0
    table = services.stores.archive.memories
    cues = cues_of(services, segments)
    records = [record for record, _turns in segments]
    # The new rows themselves, the one before the earliest, and the lookback when a turn refers back.
    limit = len(records) + 1 + (params.relation_lookback_memories if cues else 0)
    recent = table.recent_with_segments(user_id, max(r.end_ts for r in records), limit,
                                        include=[r.segment_id for r in records])
    relations = orient(find_relations(records, cues, recent, params), recent, params)
    if not relations:
        return 0
    last = datetime.fromtimestamp(max(r.end_ts for r in records), UTC)
    return table.add_relations(user_id, relations, batch_day(last, params.schedule_hour, params.timezone))
