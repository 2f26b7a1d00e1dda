"""Consolidation (P4): similar episodes on different days become one semantic memory with their sources."""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.consolidate import consolidate_user

CAT = ["猫のモカが今日もちゅ〜るをねだってきた", "モカは本当に甘えん坊だね", "うん、ちゅ〜るを見せると走ってくる"]
JOB = ["来週の会議の資料がまだ終わってない", "締め切りはいつ？", "金曜日。上司に確認しないと"]


def _day(user: str, day: str, lines: list[str], tag: str) -> list[dict]:
    return [{"user_id": user, "speaker": "user" if i % 2 == 0 else "lumina", "text": text, "source_id": f"{tag}:{i}",
             "ts": f"{day}T20:0{i}:00+09:00"} for i, text in enumerate(lines)]


def test_a_topic_that_comes_back_on_other_days_is_consolidated_once(memory_factory):
    mem = memory_factory()
    services = mem.services
    rows = _day("yui", "2026-10-01", CAT, "a") + _day("yui", "2026-10-08", JOB, "b") + _day("yui", "2026-10-15", CAT, "c")
    for chunk in (rows[:3], rows[3:6], rows[6:]):
        replay(mem.graph, "yui", chunk)  # each day's conversation closes with a flush
    segments = {s.segment_id: s for s in services.stores.archive.segments("yui")}
    assert len(segments) == 3
    report = consolidate_user(services, "yui")
    assert report["groups"] == 1 and report["written"] == 1
    [semantic] = services.stores.archive.semantic.items("yui")
    texts = {segments[e].text for e in semantic["episode_ids"]}
    assert len(semantic["episode_ids"]) == 2 and all("モカ" in t for t in texts)  # the two cat days, not the job
    assert semantic["days"] == 2 and ("モカ" in semantic["text"] or "ちゅ〜る" in semantic["text"])
    # a re-run changes nothing; the episodes are all still there
    assert consolidate_user(services, "yui")["written"] == 0
    assert len(services.stores.archive.segments("yui")) == 3
    # a third cat day joins the same memory (same id, one more source)
    replay(mem.graph, "yui", _day("yui", "2026-10-22", CAT, "d"))
    assert consolidate_user(services, "yui")["written"] == 1
    [grown] = services.stores.archive.semantic.items("yui")
    assert grown["semantic_id"] == semantic["semantic_id"] and len(grown["episode_ids"]) == 3 and grown["days"] == 3
    # another user's identical story is theirs alone
    replay(mem.graph, "ren", _day("ren", "2026-10-01", CAT, "a") + _day("ren", "2026-10-02", CAT, "b"))
    consolidate_user(services, "ren")
    assert all(set(r["episode_ids"]) <= set(segments) | {s.segment_id for s in services.stores.archive.segments("yui")}
               for r in services.stores.archive.semantic.items("yui"))
    assert len(services.stores.archive.semantic.items("ren")) == 1
    # an episode forgotten leaves its memory; a memory left with one episode goes
    from lumina_memory.nodes.lifecycle.manage import forget_memory

    [ren_memory] = services.stores.archive.semantic.items("ren")
    assert forget_memory(services, "ren", ren_memory["episode_ids"][0])["semantic"] == 1
    assert services.stores.archive.semantic.items("ren") == []


def test_the_same_topic_on_one_day_is_not_a_semantic_memory(memory_factory):
    mem = memory_factory()
    replay(mem.graph, "kai", _day("kai", "2026-10-01", CAT, "a"))
    replay(mem.graph, "kai", [dict(r, ts=r["ts"].replace("T20", "T22")) for r in _day("kai", "2026-10-01", CAT, "b")])
    assert consolidate_user(mem.services, "kai")["groups"] == 0
    assert mem.services.stores.archive.semantic.items("kai") == []


def test_the_maintenance_graph_consolidates_daily_and_reviews_weekly(memory_factory):
    from lumina_memory.graphs.maintenance_graph import graph, run_maintenance

    assert {"knowledge_daily", "knowledge_weekly"} <= set(graph.get_graph().nodes)
    mem = memory_factory()
    replay(mem.graph, "yui", _day("yui", "2026-10-01", CAT, "a"))
    replay(mem.graph, "yui", _day("yui", "2026-10-09", CAT, "b"))
    monday = 1_792_450_000.0  # 2026-10-20 07:46 in Asia/Tokyo (week 43)
    first = run_maintenance(mem.services, now=monday)
    assert first["knowledge_daily"]["users"] == 1 and first["knowledge_daily"]["written"] == 1
    assert first["knowledge_weekly"]["due"] is True and first["knowledge_weekly"]["users"] == 1
    again = run_maintenance(mem.services, now=monday + 3_600)
    assert again["knowledge_daily"]["written"] == 0  # nothing new: nothing written
    assert again["knowledge_weekly"]["due"] is False  # once per week
    assert run_maintenance(mem.services, now=monday + 7 * 86_400)["knowledge_weekly"]["due"] is True
    assert len(mem.services.stores.archive.semantic.items("yui")) == 1
