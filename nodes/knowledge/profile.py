"""The person (L7): one profile of the user, seen by every character, each with its own relationship.

Built from what the archive holds, so it is exactly as current as the last archived segment (the profile is
"updated at each segment flush" by construction, and erasure, backups and redaction need nothing of their own):

- ``topics``: the segments' keywords, weighted by how many turns mention them and by the segment's sentiment
  (× (1 + ``SENTIMENT_WEIGHT`` × valence), valence in −1…1), scaled so the best is 1; best first.
- ``characters``: per character, the turns it spoke, how often the user named it, the days they talked, the
  emotional moments they shared (memories of intensity ≥ ``EMOTIONAL_INTENSITY`` in which it spoke), its topics
  (keywords in its own turns and in the user's turns that name it), and a relationship depth 0–1 (``_depth``).
- ``facts``: the current knowledge items about the user (nodes.knowledge), newest first — those under review
  left out: priming serves these as what holds now.
- ``under_review``: the current items under review, each with ``why`` (a fact it rests on changed, F6 in
  nodes.knowledge.dependents; or the user said something changed that no rule read, nodes.knowledge.unread).
- ``preference_vector``: the mean embedding of the segments carrying the top-10 topics (L7), unit length.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from lumina_memory.nodes.character_select import named_characters
from lumina_memory.stores.ids import validate_id
from lumina_memory.stores.settings import CHARACTERS

from .unread import REVIEW, needs_review

SENTIMENT_WEIGHT = 0.5
EMOTIONAL_INTENSITY = 60.0
TOP_TOPICS = 10


def _depth(turns: int, days: int, emotional: int) -> float:
    """Relationship depth: how much they talked (log scale, 200 turns ≈ full), on how many days (30 ≈ full)
    and how many emotional moments they shared (10 ≈ full), weighted 0.4 / 0.3 / 0.3."""
    return round(0.4 * min(1.0, math.log1p(turns) / math.log1p(200)) + 0.3 * min(1.0, days / 30)
                 + 0.3 * min(1.0, emotional / 10), 4)


def build_profile(services, user_id: str) -> dict[str, Any]:
    user_id = validate_id(user_id, "user_id")
    archive = services.stores.archive
    zone = ZoneInfo(getattr(services.settings, "timezone", "UTC"))
    segments = archive.segments(user_id)
    turns = archive.all_turns(user_id)
    by_segment: dict[str, list] = defaultdict(list)
    for t in turns:
        by_segment[t.segment_id].append(t)
    intensity: dict[str, float] = {}
    table = getattr(archive, "memories", None)
    if table is not None:
        intensity = {r["memory_id"]: float(r["intensity"]) for r in table.rows(user_id)}

    topics: Counter = Counter()
    topic_segments: dict[str, list] = defaultdict(list)
    per_character_topics: dict[str, Counter] = {c: Counter() for c in CHARACTERS}
    emotional: Counter = Counter()
    for seg in segments:
        seg_turns = by_segment.get(seg.segment_id, [])
        texts = [t.text.lower() for t in seg_turns] or [seg.text.lower()]
        # whose turn each is, for a character's own topics: its turns and the user's turns that name it
        owners = [{t.speaker} if t.speaker in per_character_topics else set(named_characters(t.text)) for t in seg_turns]
        factor = max(0.0, 1.0 + SENTIMENT_WEIGHT * float(seg.valence))
        for keyword in seg.keywords:
            hits = [keyword.lower() in text for text in texts]
            weight = (sum(hits) or 1) * factor
            topics[keyword] += weight
            topic_segments[keyword].append(seg)
            for hit, who in zip(hits, owners):
                for c in who if hit else ():
                    per_character_topics[c][keyword] += factor
        if intensity.get(seg.segment_id, 0.0) >= EMOTIONAL_INTENSITY:
            emotional.update(c for c in set(seg.characters) if c in per_character_topics)

    spoke: Counter = Counter(t.speaker for t in turns if t.speaker in CHARACTERS)
    named: Counter = Counter(c for t in turns if t.speaker == "user" for c in named_characters(t.text))
    days: dict[str, set] = defaultdict(set)
    for t in turns:
        if t.speaker in CHARACTERS:
            days[t.speaker].add(datetime.fromtimestamp(t.ts, UTC).astimezone(zone).date())

    best = max(topics.values(), default=1.0) or 1.0
    ranked = topics.most_common()
    characters = {}
    for c in CHARACTERS:
        characters[c] = {
            "turns": spoke[c], "mentions": named[c], "days": len(days[c]), "emotional_moments": emotional[c],
            "relationship_depth": _depth(spoke[c], len(days[c]), emotional[c]),
            "topics": [k for k, _ in per_character_topics[c].most_common(5)],
        }
    facts, doubtful = [], []
    knowledge = getattr(archive, "knowledge", None)
    if knowledge is not None:
        for r in reversed(knowledge.items(user_id, subject="user")):
            if r["polarity"] != "positive":
                continue
            fact = {"item_id": r["item_id"], "attribute": r["attribute"], "value": r["value"], "text": r["text"],
                    "valid_from": r["valid_from"]}
            # A fact under review (a fact it rests on changed, or an update no rule read) is not served as current.
            if needs_review(r):
                doubtful.append({**fact, "why": r["note"].removeprefix(REVIEW)})
            else:
                facts.append(fact)
    vectors = [np.asarray(s.embedding, np.float32) for k, _ in ranked[:TOP_TOPICS] for s in topic_segments[k] if s.embedding]
    preference = None
    if vectors:
        mean = np.mean(vectors, axis=0)
        norm = float(np.linalg.norm(mean))
        preference = [round(float(v), 6) for v in (mean / norm if norm else mean)]
    updated = max((s.end_ts for s in segments), default=None)
    return {
        "user_id": user_id,
        "topics": {k: round(w / best, 4) for k, w in ranked},
        "characters": characters,
        "facts": facts,
        "under_review": doubtful,
        "preference_vector": preference,
        "updated_at": updated,
    }


def cached_profile(services, user_id: str) -> dict[str, Any]:
    """``build_profile``, kept until a write touches the user (priming shows it before every reply; building it
    reads the user's whole archive). Read-only: the nested values are shared with the next caller."""
    user_id = validate_id(user_id, "user_id")
    archive = services.stores.archive
    if not hasattr(archive, "kept"):
        return build_profile(services, user_id)
    return archive.kept(user_id, "profile", lambda: build_profile(services, user_id))
