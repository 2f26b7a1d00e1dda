"""The demo conversation flows through every tier for real and comes back as recalled context."""

from __future__ import annotations

from collections import defaultdict

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.nodes.ingest_turn import default_source_id
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.validate import parse_ts
from lumina_memory.stores import ids


def _segments_by_topic(mem, demo_rows):
    topic_of = {ids.turn_id("demo-user", _source(r)): r["topic"] for r in demo_rows}
    segments = mem.services.stores.archive.segments("demo-user")
    return segments, topic_of


def _source(row):
    return default_source_id(row["speaker"], parse_ts(row["ts"]), row["text"])


def test_every_tier_holds_the_demo(demo_memory, demo_rows):
    stats = tier_stats(demo_memory.services, "demo-user")
    segments = demo_memory.services.stores.archive.segments("demo-user")
    assert stats["archive"]["turns"] == len(demo_rows)
    assert stats["archive"]["segments"] == len(segments) >= 10
    assert stats["mid-term"]["segments"] == len(segments)
    assert 0 < stats["long-term"]["points"] <= len(segments)
    nodes, edges = stats["graph"]["nodes"], stats["graph"]["edges"]
    assert nodes["User"] == 1 and nodes["Character"] == 3 and nodes["Segment"] == len(segments)
    assert nodes["Concept"] > 10
    assert edges["HAD"] == len(segments) and edges["MENTIONS"] > len(segments) and edges["PARTICIPATED"] >= len(segments)


def test_midterm_records_carry_the_ttl(demo_memory):
    midterm = demo_memory.services.stores.midterm
    for record in midterm.recent_segments("demo-user", 50):
        ttl = midterm.ttl("demo-user", record.segment_id)
        assert 0 < ttl <= demo_memory.settings.midterm_ttl_seconds
        assert record.summary and record.keywords and len(record.embedding) == 512


def test_archive_keeps_source_turns_of_every_segment(demo_memory, demo_rows):
    archive = demo_memory.services.stores.archive
    seen = []
    for segment in archive.segments("demo-user"):
        turns = archive.get_turns("demo-user", segment.turn_ids)
        assert [t.turn_id for t in turns] == segment.turn_ids
        assert all(t.segment_id == segment.segment_id for t in turns)
        seen += segment.turn_ids
    assert len(seen) == len(set(seen)) == len(demo_rows)  # every turn in exactly one segment


def test_boundaries_fall_where_the_topic_shifts(demo_memory, demo_rows):
    segments, topic_of = _segments_by_topic(demo_memory, demo_rows)
    topics_per_segment = [{topic_of[t] for t in s.turn_ids} for s in segments]
    # Each segment stays within one topic (no segment straddles a shift) ...
    assert all(len(t) == 1 for t in topics_per_segment), topics_per_segment
    # ... and topic runs are not shredded: the transcript has 12 topic runs.
    runs = sum(1 for i, r in enumerate(demo_rows) if i == 0 or r["topic"] != demo_rows[i - 1]["topic"])
    assert runs <= len(segments) <= runs + 3
    reasons = {s.close_reason for s in segments}
    assert {"idle", "shift_phrase", "explicit"} <= reasons


def test_recall_brings_back_the_right_segment_with_source_turns(demo_memory, demo_rows):
    segments, topic_of = _segments_by_topic(demo_memory, demo_rows)
    cases = {
        "猫の名前と年齢って何だっけ？": "pet-cat",
        "ノクスがおすすめしてくれた映画、なんだったっけ？": "movies",
        "クラリスに教わったチーズケーキ、何度で何分焼くんだっけ？": "cooking",
    }
    for question, topic in cases.items():
        items = recall(demo_memory.services, "demo-user", question, purpose="question", limit=3)
        assert items, question
        found = [{topic_of[t] for t in item["turn_ids"]} for item in items]
        assert any(topic in f for f in found), (question, found)
        top = items[0]
        assert top["tiers"] and set(top["tiers"]) <= {"mid-term", "long-term", "archive", "graph"}
        turns = demo_memory.services.stores.archive.get_turns("demo-user", top["turn_ids"])
        assert turns and [t.source_id for t in turns] == top["source_ids"]
