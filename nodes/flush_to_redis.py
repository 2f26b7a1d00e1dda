"""flush_to_redis: summarise a closed segment and keep it in mid-term memory for 24 h (L3)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from stores.models import SegmentRecord

from .pending import advance
from .text.emotion import analyse
from .text.importance import importance, novelty, relatedness
from .text.keywords import extract_keywords
from .text.summarize import summarise
from .text.tokenize import nouns


def build_record(item: dict, user_id: str, services) -> SegmentRecord:
    settings = services.settings
    turns = item["turns"]
    texts = [t["text"] for t in turns]
    speakers = [t["speaker"] for t in turns]
    vectors = services.embedder.embed(texts)
    centroid = vectors.mean(axis=0)
    centroid = centroid / (float(np.linalg.norm(centroid)) or 1.0)
    summary, method = summarise(settings, speakers, texts, vectors, services.chat_model)
    keywords = extract_keywords(texts, settings.keywords_max)
    emotions = [analyse(t) for t in texts]
    charged = [e.valence for e in emotions if e.valence]
    valence = float(np.mean(charged)) if charged else 0.0
    prior = services.stores.vectors.search(user_id, centroid.tolist(), settings.novelty_neighbours)
    scores = [h.score for h in prior if h.payload.get("segment_id") != item["segment_id"]]
    mentions = max(Counter(w for t in texts for w in nouns(t)).values(), default=0)
    score = importance(
        valence,
        novelty(scores, settings.novelty_similarity, settings.novelty_neighbours),
        relatedness(scores),
        mentions,
        settings.importance_weights,
    )
    return SegmentRecord(
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


def flush_to_redis(state: dict, ctx, services) -> dict:
    def write(item: dict) -> dict:
        record = SegmentRecord.model_validate(item["record"]) if item.get("record") else build_record(
            item, ctx.user_id, services
        )
        services.stores.midterm.put_segment(record, services.settings.midterm_ttl_seconds)
        return {"record": record.model_dump()}

    return advance(state, "redis", write)
