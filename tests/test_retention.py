"""Retention per data kind and the storage policy (S7, L9), on real stores with the clock passed in."""

from __future__ import annotations

import time

import pytest

from lumina_memory.nodes.activity import recent_activity
from lumina_memory.nodes.retention import DAY, cold_turns, enforce_retention
from lumina_memory.stores.cold_turns import ColdTurns

T0 = 1_700_000_000.0
OLD = [("user", "去年の夏、北海道でオーロラを見たかったんだ"), ("lumina", "オーロラ、いつか一緒に見たいね"),
       ("user", "寒いのは苦手だけど星空は好き")]
NEW = [("user", "最近はパン作りにはまってる"), ("clarisse", "素敵ですね、どんなパンを焼くのですか"),
       ("user", "メロンパンとクロワッサン")]


def _ingest(mem, user: str) -> None:
    config = {"configurable": {"thread_id": f"ret-{user}"}}
    ctx = {"user_id": user, "respond": False}
    for start, rows in ((T0, OLD), (T0 + 60 * DAY, NEW)):
        for i, (speaker, text) in enumerate(rows):
            mem.graph.invoke({"turn": {"speaker": speaker, "text": text, "ts": start + i}}, config, context=ctx)
        mem.graph.invoke({"flush": True}, config, context=ctx)


def _texts(mem, user):
    return [t.text for t in mem.services.stores.archive.all_turns(user)]


@pytest.mark.parametrize("policy", ["A", "B"])
def test_policy_a_and_b_keep_only_summaries_in_search_after_the_raw_turn_retention(memory_factory, tmp_path, policy):
    extra = {"storage_policy_b_location": str(tmp_path / "cold")} if policy == "B" else {}
    mem = memory_factory(retention_raw_turns_days=30, storage_policy=policy, **extra)
    _ingest(mem, "ann")
    _ingest(mem, "bob")
    stores = mem.services.stores
    old_segment = min(stores.archive.segments("ann"), key=lambda s: s.end_ts)
    assert stores.turns.count("ann") == 6 and "オーロラ" in old_segment.text
    assert recall_texts(mem, "ann", "オーロラ") != []

    report = enforce_retention(mem.services, now=T0 + 61 * DAY)

    assert report["raw_turns"]["turns"] == 6 and report["raw_turns"]["users"] == 2
    assert _texts(mem, "ann") == [t for _s, t in NEW] and _texts(mem, "bob") == [t for _s, t in NEW]
    assert stores.turns.count("ann") == 3  # the old turns' points went too
    kept = stores.archive.get_segment("ann", old_segment.segment_id)
    assert kept is not None and kept.text == "" and kept.summary == old_segment.summary  # summary stays
    for hit in stores.vectors.get("ann", [old_segment.segment_id]):
        assert hit.payload["text"] == "" and hit.payload["summary"] == old_segment.summary
    assert "オーロラ" not in " ".join(recall_texts(mem, "ann", "オーロラ"))  # no raw turn left to quote
    events = recent_activity(mem.services, "ann", 50, events=("maintenance",))
    assert events[-1]["step"] == "retention.raw_turns" and events[-1]["turns"] == 3
    if policy == "B":  # deliberate recall still reads them, through DuckDB over the Parquet files
        found = cold_turns(mem.services, "ann", contains="オーロラ")
        assert [t.text for t in found] == [OLD[0][1], OLD[1][1]] and {t.user_id for t in found} == {"ann"}
        assert len(cold_turns(mem.services, "ann")) == 3 and len(cold_turns(mem.services, "bob")) == 3
        files = list((tmp_path / "cold").rglob("*.parquet"))
        assert len(files) == 2 and not any("ann" in str(f) or "bob" in str(f) for f in files)
        place = ColdTurns.for_settings(mem.settings)
        assert place.count("ann") == 3 and place.erase("ann") == 3 and place.count("bob") == 3
    else:
        assert not (mem.settings.resolved_data_dir() / "logs").exists()
    # a second run finds nothing more to do
    assert enforce_retention(mem.services, now=T0 + 61 * DAY)["raw_turns"]["turns"] == 0


def recall_texts(mem, user, query):
    from lumina_memory.nodes.retrieval.recall import recall

    return [i["text"] for i in recall(mem.services, user, query, budget=2_000)]


def test_the_default_keeps_raw_turns(memory_factory):
    mem = memory_factory(retention_raw_turns_days=30)  # storage_policy 'keep'
    _ingest(mem, "ann")
    report = enforce_retention(mem.services, now=T0 + 400 * DAY)
    assert report["raw_turns"]["turns"] == 0 and "keep" in report["raw_turns"]["note"]
    assert len(_texts(mem, "ann")) == 6


def test_segment_retention_and_log_retention(memory_factory):
    mem = memory_factory(retention_segments_days=30, retention_logs_days=7)
    _ingest(mem, "ann")
    stores = mem.services.stores
    segments = sorted(stores.archive.segments("ann"), key=lambda s: s.end_ts)
    assert len(segments) == 2
    report = enforce_retention(mem.services, now=T0 + 61 * DAY)
    assert report["segments"]["segments"] == 1
    assert [s.segment_id for s in stores.archive.segments("ann")] == [segments[1].segment_id]
    assert stores.vectors.get("ann", [segments[0].segment_id]) == []
    assert len(_texts(mem, "ann")) == 6  # raw turns follow their own rule (none set: kept)
    # logs: events are on the wall clock; eight days later this run's events are past a 7-day retention
    assert recent_activity(mem.services, "ann", 100)
    report = enforce_retention(mem.services, now=time.time() + 8 * DAY)
    assert report["logs"]["events"] > 0
    assert [e["event"] for e in recent_activity(mem.services, "ann", 100)] == []
