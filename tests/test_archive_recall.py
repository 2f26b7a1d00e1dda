"""F5's ``enable_archive_recall`` at the recall level, on the embedded defaults: with it on (the notes' default) a
deliberate question reaches an archived memory and flags it for revival; with it off the same question on the same
memory does not reach it and flags nothing, while the memories not archived are reached as before."""

from __future__ import annotations

import dataclasses

import pytest

from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.retrieval.recall import recall

from .test_lifecycle_e2e import CAT_QUESTION, USER, ingest, memories_in, memory, memory_ids, run_until

pytestmark = pytest.mark.slow  # thirty simulated days of the daily batch


def with_archive_recall(services, on: bool):
    """The same stores, read with enable_archive_recall set to ``on``."""
    lifecycle = services.settings.lifecycle.model_copy(update={"enable_archive_recall": on})
    return dataclasses.replace(services, settings=services.settings.model_copy(update={"lifecycle": lifecycle}))


def test_deliberate_recall_searches_the_archive_only_when_archive_recall_is_on(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100)  # thresholds alone: the casual cat memory fades first
    ids = memory_ids(mem.services)
    cat = ids["cat"]
    run_until(mem.services, cat, 4, last=30)
    assert memory(mem.services, cat)["archived"] and not memory(mem.services, cat)["revival_requested"]

    off = with_archive_recall(mem.services, False)
    asked = memories_in(recall(off, USER, CAT_QUESTION, purpose="question", limit=10))
    assert cat not in asked  # neither the memory nor any of its turns
    assert all(not item["archived"] for item in asked.values())
    assert not memory(mem.services, cat)["revival_requested"]  # nothing reached, nothing to revive
    mother = memories_in(recall(off, USER, "母の誕生日はいつ？", purpose="question", limit=10))
    assert ids["mother"] in mother  # a protected memory, never archived, is reached as before

    on = with_archive_recall(mem.services, True)
    asked = memories_in(recall(on, USER, CAT_QUESTION, purpose="question", limit=10))
    assert cat in asked and asked[cat]["archived"] is True and asked[cat]["level"] == 4
    assert memory(mem.services, cat)["revival_requested"] is True


def test_the_notes_settings_file_sets_archive_recall():
    assert LifecycleParams().enable_archive_recall is True  # the notes' default
    params = LifecycleParams.from_notes_config({"archive": {"enable_archive_recall": False}})
    assert params.enable_archive_recall is False


def cold_items(services, user: str, query: str, purpose: str = "question") -> list[dict]:
    return [i for i in recall(services, user, query, purpose=purpose, budget=2_000) if "cold_log" in i.get("tiers", ())]


def test_policy_b_deliberate_recall_quotes_the_cold_log_what_retention_moved_out(memory_factory, tmp_path):
    from lumina_memory.nodes.retention import DAY, cold_turns, enforce_retention

    from .test_retention import OLD, T0, _ingest

    mem = memory_factory(storage_policy="B", storage_policy_b_location=str(tmp_path / "cold"))
    _ingest(mem, "ann")
    _ingest(mem, "bob")
    assert cold_items(mem.services, "ann", "オーロラ") == []  # nothing moved yet: the turns are in the index
    enforce_retention(mem.services, now=T0 + 61 * DAY)  # the default 30 days: the first session leaves

    quoted = cold_items(mem.services, "ann", "北海道でオーロラを見たかった話、覚えてる？")
    assert quoted and OLD[0][1] in quoted[0]["text"] and quoted[0]["from_record"] is True
    # bob said the same words and his turns went to the cold log too: ann's recall quotes only hers.
    own = {t.turn_id for t in cold_turns(mem.services, "ann")}
    assert {t for i in quoted for t in i["turn_ids"]} <= own
    assert own.isdisjoint(t.turn_id for t in cold_turns(mem.services, "bob"))
    assert cold_items(mem.services, "ann", "北海道でオーロラを見たかった話", purpose="talking") == []  # a reply: never

    off = dataclasses.replace(mem.services, settings=mem.settings.model_copy(update={"storage_policy_b_recall_items": 0}))
    assert cold_items(off, "ann", "北海道でオーロラを見たかった話、覚えてる？") == []
    policy_a = dataclasses.replace(mem.services, settings=mem.settings.model_copy(update={"storage_policy": "A"}))
    assert cold_items(policy_a, "ann", "北海道でオーロラを見たかった話、覚えてる？") == []
