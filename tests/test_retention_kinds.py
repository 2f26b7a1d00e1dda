"""Retention per data kind through the maintenance graph (S7's notes: conversations 30 days, audit forever; L3's
archive retention with L9's policies), on the embedded stores with the clock passed in: what leaves the archive
goes to the cold log (B) or is deleted (A), and nothing derived loses what it stands on."""

from __future__ import annotations

import dataclasses

import pytest

from lumina_memory.graphs.erase import audit_log
from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.nodes.retention import DAY, cold_turns, enforce_retention
from lumina_memory.nodes.store_upkeep import archive_integrity
from lumina_memory.stores.settings import LuminaSettings

from .test_retention import NEW, OLD, T0, _ingest, _texts

pytestmark = pytest.mark.slow  # whole maintenance runs


def test_the_notes_default_keeps_conversations_thirty_days():
    assert LuminaSettings().retention_raw_turns_days == 30


def graph_segments(mem, user: str) -> set[str]:
    return {str(r["id"]) for r in mem.services.stores.graph.dump()["Segment"] if r["user_id"] == user}


def test_segment_retention_removes_the_segments_graph_nodes_too(memory_factory):
    mem = memory_factory(retention_segments_days=30)
    _ingest(mem, "ann")
    _ingest(mem, "bob")
    old, new = sorted(mem.services.stores.archive.segments("ann"), key=lambda s: s.end_ts)
    assert graph_segments(mem, "ann") == {old.segment_id, new.segment_id}
    memories = mem.services.stores.archive.memories
    assert {r["memory_id"] for r in memories.rows("ann")} == {old.segment_id, new.segment_id}
    enforce_retention(mem.services, now=T0 + 61 * DAY)
    assert graph_segments(mem, "ann") == {new.segment_id}  # no orphan left for store_upkeep to find
    assert len(graph_segments(mem, "bob")) == 1
    # The memory (its lifecycle row, its summary or keywords) leaves with its segment: no text outlives it.
    assert {r["memory_id"] for r in memories.rows("ann")} == {new.segment_id}
    assert archive_integrity(mem.services)["memories_without_segment"] == 0


@pytest.mark.parametrize("policy", ["A", "B"])
def test_the_maintenance_graph_applies_the_archive_retention_by_policy(memory_factory, tmp_path, policy):
    extra = {"storage_policy_b_location": str(tmp_path / "cold")} if policy == "B" else {}
    mem = memory_factory(storage_policy=policy, upkeep_interval_seconds=0, **extra)  # the default 30 days
    _ingest(mem, "ann")
    stores = mem.services.stores
    # The same day's maintenance without the retention first: the lifecycle and knowledge have run on everything.
    unretained = dataclasses.replace(mem.services, settings=mem.settings.model_copy(
        update={"retention_raw_turns_days": None}))
    assert run_maintenance(unretained, now=T0 + 61 * DAY)["retention"]["raw_turns"]["turns"] == 0
    memories_before = {r["memory_id"] for r in stores.archive.memories.rows("ann")}
    segments_before = {s.segment_id for s in stores.archive.segments("ann")}
    knowledge_before = {i["item_id"] for i in stores.archive.knowledge.items("ann", history=True)}
    assert memories_before and knowledge_before

    report = run_maintenance(mem.services, now=T0 + 61 * DAY)
    assert report["retention"]["raw_turns"] == {**report["retention"]["raw_turns"], "policy": policy, "days": 30,
                                                "turns": 3}
    assert _texts(mem, "ann") == [t for _s, t in NEW]
    # Nothing else loses what it stands on: every segment (its summary), memory and graph node stays.
    assert {s.segment_id for s in stores.archive.segments("ann")} == segments_before
    assert {r["memory_id"] for r in stores.archive.memories.rows("ann")} == memories_before
    assert graph_segments(mem, "ann") == segments_before
    assert {i["item_id"] for i in stores.archive.knowledge.items("ann", history=True)} == knowledge_before
    assert report["store_upkeep"]["graph"]["orphan_segments"] == 0
    moved = [t.text for t in cold_turns(mem.services, "ann")]
    assert moved == ([t for _s, t in OLD] if policy == "B" else [])  # B: the full log, A: only the summaries


def test_retention_never_prunes_the_audit_log(memory_factory):
    mem = memory_factory(retention_raw_turns_days=1, storage_policy="A", retention_segments_days=1,
                         retention_knowledge_days=1, retention_logs_days=1)
    _ingest(mem, "ann")
    log = audit_log(mem.services)
    log.append("test_mark", "tester", "ann", "kept forever")
    before = log.rows()
    enforce_retention(mem.services, now=T0 + 3_650 * DAY)
    after = audit_log(mem.services).rows()
    assert after[: len(before)] == before and any(r["event"] == "test_mark" for r in after)
    assert audit_log(mem.services).verify()["ok"]


def procedure(user: str, name: str, said_at: float, description: str = "段取り") -> dict:
    """One current version of a procedure (S5: a task's decomposition that worked), as the table stores it."""
    return {"procedure_id": f"p-{name}", "user_id": user, "lineage_id": f"l-{name}", "version": 1, "title": name,
            "task_key": name, "description": description, "steps": ["調べる", "まとめる"], "keywords": [name],
            "language": "ja", "embedding": [0.0] * 4, "success_count": 5, "failure_count": 0, "confidence": 1.0,
            "status": "current", "superseded_by": None, "supersedes": None, "episode_ids": [], "source_turn_ids": [],
            "source_ids": [], "outcome_ids": [], "said_at": said_at, "last_outcome_at": None, "method": "offline",
            "note": "", "created_at": said_at, "updated_at": said_at}


def test_procedures_unused_past_their_retention_leave(memory_factory):
    mem = memory_factory(retention_procedures_days=90)
    assert LuminaSettings().retention_procedures_days is None  # by default procedures' own forgetting decides
    _ingest(mem, "ann")
    _ingest(mem, "bob")
    table = mem.services.stores.archive.procedures
    now = T0 + 200 * DAY
    table.upsert([procedure("ann", "old", now - 91 * DAY), procedure("ann", "recent", now - 89 * DAY),
                  procedure("ann", "kept", now - 300 * DAY, "[IMPORTANT] 月次報告の段取り"),
                  procedure("bob", "old-bob", now - 91 * DAY)])
    report = enforce_retention(mem.services, now=now)
    assert report["procedures"] == {"days": 90, "procedures": 2, "users": 2}
    assert {p["title"] for p in table.procedures("ann", history=True)} == {"recent", "kept"}
    assert table.procedures("bob", history=True) == []
    assert enforce_retention(mem.services, now=now)["procedures"]["procedures"] == 0


def strategy(user: str, name: str, updated_at: float, kind: str = "decomposition") -> dict:
    """One S5 row: a task's decomposition (or a failure pattern) as nodes.strategies stores it."""
    return {"strategy_id": f"s-{user}-{name}", "user_id": user, "kind": kind, "task": name, "category": "work",
            "subtasks": ["調べる", "まとめる"], "strategy": "sequential", "pattern": "", "indicators": [],
            "mitigation": "", "severity": 1, "success_count": 3, "failure_count": 0, "embedding": [0.0] * 4,
            "created_at": updated_at - DAY, "updated_at": updated_at}


def test_decomposition_patterns_are_kept_ninety_days_since_last_learnt_or_counted(memory_factory):
    from lumina_memory.nodes.strategies import strategies

    mem = memory_factory()
    assert mem.settings.retention_strategies_days == 90  # the notes' decomposition patterns
    table, now = strategies(mem.services), T0 + 200 * DAY
    for row in (strategy("ann", "old", now - 91 * DAY), strategy("ann", "recent", now - 89 * DAY),
                strategy("ann", "old-failure", now - 120 * DAY, kind="failure"), strategy("bob", "old", now - 91 * DAY)):
        table.put(row)
    report = enforce_retention(mem.services, now=now)
    assert report["strategies"] == {"days": 90, "strategies": 3, "users": 2}
    assert [r["task"] for r in table.of_user("ann")] == ["recent"] and table.of_user("bob") == []
    assert enforce_retention(mem.services, now=now)["strategies"]["strategies"] == 0
