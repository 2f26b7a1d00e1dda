"""flush_to_redis: summarise a closed segment and keep it in mid-term memory for 24 h (L3).

Redis down does not stop the flush: the record is built, the mid-term write is deferred (the archive's
outbox keeps it, nodes.recovery re-puts it with its remaining TTL when Redis is back). Qdrant down: the
segment is scored without long-term neighbours (logged). Before a flush, work deferred by an earlier
outage is retried first, so derived writes land in their order."""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np

from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.models import SegmentRecord

from . import promotion, recovery
from .costs import part
from .pending import advance
from .text.emotion import analyse
from .text.importance import importance, novelty, relatedness
from .text.keywords import extract_keywords
from .text.summarize import summarise
from .text.tokenize import nouns
from .text.value import low_value_reason

log = logging.getLogger("lumina.recovery")


def segment_vectors(item: dict, services) -> tuple[np.ndarray, np.ndarray]:
    """The segment's turn vectors and their normalised centroid (the segment's embedding)."""
    vectors = services.embedder.embed([t["text"] for t in item["turns"]])
    centroid = vectors.mean(axis=0)
    return vectors, centroid / (float(np.linalg.norm(centroid)) or 1.0)


def build_record(
    item: dict, user_id: str, services, batch_before: list[SegmentRecord] = (), prior: list | None = None,
    embedded: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[SegmentRecord, tuple[str, float] | None]:
    """The segment's mid-term record, and (segment_id, similarity) of the nearest long-term memory.
    ``batch_before``: segments closed earlier in the same run that go long-term but are not there
    yet — novelty and nearness count them too. ``prior`` and ``embedded``: the long-term search for
    the segment's centroid and its ``segment_vectors``, when the caller has them already (a run
    searches for all its segments in one call)."""
    settings = services.settings
    turns = item["turns"]
    texts = [t["text"] for t in turns]
    speakers = [t["speaker"] for t in turns]
    vectors, centroid = embedded if embedded is not None else segment_vectors(item, services)
    with part("summary"):  # issue 49: timed as flush_to_redis.summary
        summary, method = summarise(settings, speakers, texts, vectors, services.chat_model)
    keywords = extract_keywords(texts, settings.keywords_max)
    with part("emotion"):
        emotions = [analyse(t) for t in texts]
    charged = [e.valence for e in emotions if e.valence]
    valence = float(np.mean(charged)) if charged else 0.0
    if prior is None:
        prior = services.stores.vectors.search(user_id, centroid.tolist(), settings.novelty_neighbours,
                                               fields=("segment_id",))  # ids and scores are all this needs
    scores = [h.score for h in prior if h.payload.get("segment_id") != item["segment_id"]]
    nearest = (prior[0].payload.get("segment_id", ""), prior[0].score) if prior else None
    if batch_before:
        earlier = np.asarray([r.embedding for r in batch_before], dtype=np.float32) @ centroid.astype(np.float32)
        scores = sorted([*scores, *(float(x) for x in earlier)], reverse=True)[: settings.novelty_neighbours]
        best = int(np.argmax(earlier))
        if nearest is None or float(earlier[best]) > nearest[1]:
            nearest = (batch_before[best].segment_id, float(earlier[best]))
    mentions = max(Counter(w for t in texts for w in nouns(t)).values(), default=0)
    score = importance(
        valence,
        novelty(scores, settings.novelty_similarity, settings.novelty_neighbours),
        relatedness(scores),
        mentions,
        settings.importance_weights,
    )
    record = SegmentRecord(
        segment_id=item["segment_id"],
        user_id=user_id,
        turn_ids=[t["turn_id"] for t in turns],
        source_ids=[t["source_id"] for t in turns],
        characters=sorted({s for s in speakers if s != "user"}),
        start_ts=turns[0]["ts"],
        end_ts=turns[-1]["ts"],
        summary=summary,
        keywords=keywords,
        embedding=[float(x) for x in centroid],
        importance=score,
        valence=round(valence, 4),
        domain=item.get("domain", ""),
        close_reason=item.get("close_reason", ""),
        text="\n".join(f"{s}: {t}" for s, t in zip(speakers, texts)),
        summary_method=method,
    )
    return record, nearest


def flush_to_redis(state: dict, ctx, services) -> dict:
    settings = services.settings
    recovery.retry_deferred(services)

    def write_all(items: list[dict]) -> list[dict]:
        changes: list[dict] = []
        records: list[SegmentRecord] = []
        promoted: list[SegmentRecord] = []  # this run's segments bound for long-term, in order
        history: list[float] | None = None
        # The long-term neighbours of every new segment, in one search: what is there before this run
        # (its earlier segments are counted by build_record from `promoted`).
        fresh = [item for item in items if not item.get("record")]
        embedded = [segment_vectors(item, services) for item in fresh]
        try:
            found = services.stores.vectors.search_many(
                ctx.user_id, [centroid.tolist() for _, centroid in embedded], [settings.novelty_neighbours] * len(fresh),
                fields=("segment_id",),
            ) if fresh else []
        except StoreUnavailable as exc:
            log.warning("tier=long-term unavailable: %d segment(s) scored without long-term neighbours: %s", len(fresh), exc)
            recovery.note_degraded(services, "qdrant", exc)
            found = [[] for _ in fresh]
        ready = {id(item): (e, hits) for item, e, hits in zip(fresh, embedded, found)}
        for item in items:
            if item.get("record"):  # a resumed run: scored and decided before the crash
                record = SegmentRecord.model_validate(item["record"])
                change = {"record": item["record"]}
            else:
                own, prior = ready[id(item)]
                record, nearest = build_record(item, ctx.user_id, services, promoted, prior, own)
                low_value = low_value_reason([t["text"] for t in item["turns"]], settings.low_value_min_terms)
                if history is None:
                    history = promotion.recent_importances(services.stores.archive, ctx.user_id)
                history = [record.importance, *history][: promotion.HISTORY]
                decided = promotion.verdict(record, low_value, history, nearest, settings)
                if decided == "promoted":
                    promoted.append(record)
                change = {"record": record.model_dump(), "promotion": decided}
            records.append(record)
            changes.append(change)
        # One transaction for the batch's segments (nothing above reads mid-term back).
        try:
            services.stores.midterm.put_segments(records, settings.midterm_ttl_seconds)
        except StoreUnavailable as exc:
            log.warning("tier=mid-term unavailable, %d segment(s) wait in the outbox: %s", len(records), exc)
            recovery.note_degraded(services, "redis", exc)
            changes = [{**change, "deferred": [*item.get("deferred", []), "redis"]} for item, change in zip(items, changes)]
        return changes

    return advance(state, "redis", write_all=write_all)
