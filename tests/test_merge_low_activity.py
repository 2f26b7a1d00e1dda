"""A9 on the real stores: near-duplicate facts of low activity are merged by the maintenance graph's
lifecycle_merge step, the survivor taking the other's sources and the other kept as history (status merged,
superseded_by the survivor); active facts, different facts, and another user's facts are left alone."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.nodes.lifecycle.merge_low_activity import low_activity_ids, merge_low_activity_knowledge
from lumina_memory.stores.knowledge_duckdb import KNOWLEDGE

pytestmark = pytest.mark.slow
MAY = 1_777_593_600.0  # 2026-05-01 00:00 UTC


def fact(user: str, item_id: str, text: str, value: str, *, confidence: float = 0.9, said_at: float = MAY,
         subject: str = "user", attribute: str = "likes") -> dict:
    return {"item_id": item_id, "user_id": user, "subject": subject, "attribute": attribute, "value": value,
            "value_key": f"{value}-{item_id}", "polarity": "positive", "detail": "", "context": "",
            "category": "preference", "event_date": None, "when_text": "", "text": text,
            "source_turn_ids": [f"t-{item_id}"], "source_ids": [f"src:{item_id}"], "episode_ids": [f"seg-{item_id}"],
            "said_at": said_at, "valid_from": said_at, "valid_to": None, "superseded_by": None, "status": "current",
            "note": "", "confidence": confidence, "method": "offline", "pattern": "", "updated_at": said_at}


def _mark_low(table, user: str, item_ids: list[str]) -> None:
    with table.db.tx() as con:
        con.execute(f"UPDATE {KNOWLEDGE} SET low_activity_since = ? WHERE user_id = ? AND item_id IN "
                    "(SELECT unnest(?::VARCHAR[]))", [MAY + 90 * 86_400, user, item_ids])


def _by_id(table, user: str) -> dict[str, dict]:
    return {r["item_id"]: r for r in table.items(user, history=True)}


def test_low_activity_near_duplicates_are_merged_keeping_history_and_sources(memory):
    table = memory.services.stores.archive.knowledge
    table.upsert([
        fact("nana", "cat-1", "私は猫が好き", "猫", confidence=0.7),
        fact("nana", "cat-2", "猫が大好きなんだ", "猫", confidence=0.9, said_at=MAY + 86_400),
        fact("nana", "coffee-1", "私はコーヒーが好き", "コーヒー"),
        fact("nana", "coffee-2", "毎朝コーヒーを飲むのが好き", "コーヒー"),  # a duplicate, but in use
        fact("nana", "jazz-1", "私はジャズが好き", "ジャズ"),
        fact("nana", "sister-1", "姉は大阪に住んでいる", "大阪", attribute="sister_lives_in"),
        fact("kei", "cat-9", "私は猫が好き", "猫"),
        fact("kei", "cat-10", "猫が大好きなんだ", "猫"),
    ])
    _mark_low(table, "nana", ["cat-1", "cat-2", "coffee-1", "jazz-1", "sister-1"])
    _mark_low(table, "kei", ["cat-9"])  # kei's other cat fact is active: nothing of kei's to merge
    assert low_activity_ids(table, "nana") == {"cat-1", "cat-2", "coffee-1", "jazz-1", "sister-1"}

    report = run_maintenance(memory.services, now=MAY + 100 * 86_400)
    assert report["lifecycle_merge"] == {"users": 2, "candidates": 6, "merged": 1}
    rows = _by_id(table, "nana")
    survivor, absorbed = rows["cat-2"], rows["cat-1"]  # the more confident one survives
    assert survivor["status"] == "current" and survivor["superseded_by"] is None
    assert set(survivor["source_turn_ids"]) == {"t-cat-1", "t-cat-2"}
    assert set(survivor["source_ids"]) == {"src:cat-1", "src:cat-2"}
    assert set(survivor["episode_ids"]) == {"seg-cat-1", "seg-cat-2"}
    assert absorbed["status"] == "merged" and absorbed["superseded_by"] == "cat-2"  # kept, as history
    assert absorbed["text"] == "私は猫が好き" and "A9" in absorbed["note"]
    for item_id in ("coffee-1", "coffee-2", "jazz-1", "sister-1"):
        assert rows[item_id]["status"] == "current" and rows[item_id]["superseded_by"] is None
    assert all(r["status"] == "current" for r in _by_id(table, "kei").values())

    again = merge_low_activity_knowledge(memory.services, "nana", now=MAY + 101 * 86_400)
    assert again["merged"] == []  # a merged fact is merged once
