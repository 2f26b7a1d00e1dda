"""The lifecycle on the real stores: encoding at archive time, the daily batch with catch-up, idempotent
re-runs, a batch that dies before its commit, protection with its cap, forgetting one memory everywhere."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.manage import forget_memory, list_memories, set_protected
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle, today_of
from lumina_memory.stores.errors import InvalidInput

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC (09:00 in Tokyo)
TOPICS = (
    "昨日ついに転職の面接に受かった！本当に嬉しい！ずっと頑張ってきたから最高の気分",
    "猫のムギが最近よく寝ている。今日は雨で少し退屈だった",
    "来月から朝のジョギングを始めることにした。決めたからにはやる",
    "覚えておいて、母の誕生日は三月十二日でチューリップが好き",
)


def _rows(user: str) -> list[dict]:
    rows = []
    for topic, text in enumerate(TOPICS):
        for i in range(6):
            speaker = "user" if i % 2 == 0 else "lumina"
            body = text if i == 0 else f"{text[:12]}の話の続き、その{i}"
            rows.append({"speaker": speaker, "text": body, "ts": T0 + topic * 3 * 3600 + i * 60, "user_id": user})
    return rows


@pytest.fixture
def filled(memory_factory):
    mem = memory_factory(lifecycle=LifecycleParams(max_protected_memories=2, ratio_min_memories=100))
    replay(mem.graph, "alice", _rows("alice"))
    replay(mem.graph, "bob", _rows("bob")[:6])
    return mem


def _state(services, user: str) -> dict[str, tuple]:
    return {m["memory_id"]: (m["level"], m["memory_days"], m["retention"], m["recall_count"])
            for m in list_memories(services, user)}


def test_each_closed_segment_becomes_a_memory_with_its_emotion(filled):
    memories = list_memories(filled.services, "alice")
    assert len(memories) >= 4
    first = memories[0]
    assert set(first) == {"memory_id", "level", "retention", "intensity", "valence", "arousal", "tags", "category",
                          "decay", "memory_days", "recall_count", "protected", "archived", "revival_requested", "text",
                          "source_turn_ids", "source_ids", "created", "relations", "low_activity", "trigger", "content",
                          "trigger_path"}
    assert first["valence"] == "positive" and first["intensity"] > 50 and first["level"] == 1
    assert first["source_turn_ids"] and first["text"].startswith("user:") or first["text"]
    assert any(m["protected"] for m in memories)  # 「覚えておいて」
    assert all(m["memory_id"] not in {b["memory_id"] for b in list_memories(filled.services, "bob")} for m in memories)


def test_catch_up_runs_each_missed_day_once_and_a_rerun_changes_nothing(filled):
    services = filled.services
    first = run_lifecycle(services, now=T0 + DAY)
    assert first["days"] == 1 and first["user_days"] == 2
    again = run_lifecycle(services, now=T0 + DAY + 3600)
    assert again["days"] == 0
    before = _state(services, "alice")
    ten = run_lifecycle(services, now=T0 + 11 * DAY)
    assert ten["days"] == 10 and ten["user_days"] == 20
    after = _state(services, "alice")
    for memory_id, (level, days, retention, _) in after.items():
        if level < 4:  # an archived memory is frozen: it stopped ageing the day it went
            assert days == pytest.approx(before[memory_id][1] + 10)
        assert before[memory_id][1] <= days <= before[memory_id][1] + 10
        assert retention <= before[memory_id][2]
    assert any(level < 4 for level, *_ in after.values())
    assert run_lifecycle(services, now=T0 + 11 * DAY + 60)["days"] == 0
    assert _state(services, "alice") == after


def test_a_batch_that_dies_before_its_commit_leaves_nothing_and_resumes(filled, monkeypatch):
    services = filled.services
    run_lifecycle(services, now=T0 + DAY)
    before = _state(services, "alice")
    table = services.stores.archive.memories
    real = table.write_day
    calls = []

    def dies_on_the_third_day(users, day, *args, **kwargs):
        calls.append(day)
        if len(calls) == 3:
            with table.db.tx():
                real(users, day, *args, **kwargs)
                raise KeyboardInterrupt("killed mid-commit")
        return real(users, day, *args, **kwargs)

    monkeypatch.setattr(table, "write_day", dies_on_the_third_day)
    with pytest.raises(KeyboardInterrupt):
        run_lifecycle(services, now=T0 + 6 * DAY)
    monkeypatch.setattr(table, "write_day", real)
    assert table.last_days()["alice"] == today_of(services, T0 + 3 * DAY)
    resumed = run_lifecycle(services, now=T0 + 6 * DAY)
    assert resumed["days"] == 3
    for memory_id, (level, days, _r, _n) in _state(services, "alice").items():
        if level < 4:
            assert days == pytest.approx(before[memory_id][1] + 5)


def test_memories_fade_through_the_levels_and_the_vector_payload_follows(filled):
    services = filled.services
    run_lifecycle(services, now=T0 + DAY)  # the users' first batch day: from here on every day counts
    assert run_lifecycle(services, now=T0 + 400 * DAY)["days"] == 399
    memories = list_memories(services, "alice")
    levels = {m["memory_id"]: m["level"] for m in memories}
    assert any(level >= 2 for level in levels.values())
    for m in memories:
        if m["protected"]:
            assert m["level"] == 1
        elif m["level"] in (3, 4):
            assert m["text"] and len(m["text"]) < 200
    hits = services.stores.vectors.get("alice", list(levels))
    assert {h.payload["segment_id"]: h.payload.get("level") for h in hits if h.payload.get("level")} == {
        h.payload["segment_id"]: levels[h.payload["segment_id"]] for h in hits if h.payload.get("level")}
    assert any(h.payload.get("level", 1) > 1 for h in hits)


def test_deliberate_recall_flags_and_the_batch_reinforces(filled):
    services = filled.services
    run_lifecycle(services, now=T0 + DAY)
    table = services.stores.archive.memories
    target = list_memories(services, "alice")[1]
    assert table.mark_recalled("alice", [target["memory_id"]], T0 + DAY, deliberate=True) == 1
    assert table.mark_recalled("bob", [target["memory_id"]], T0 + DAY, deliberate=True) == 0  # not bob's
    before = target["memory_days"]
    run_lifecycle(services, now=T0 + 2 * DAY)
    after = next(m for m in list_memories(services, "alice") if m["memory_id"] == target["memory_id"])
    assert after["recall_count"] == 1
    assert after["memory_days"] < before + 1  # halved, then a day older
    assert after["decay"] == pytest.approx(min(target["decay"] + 0.02, 0.999))


def test_protect_has_a_cap_that_names_the_way_out(filled):
    services = filled.services
    ids = [m["memory_id"] for m in list_memories(services, "alice") if not m["protected"]]
    held = sum(m["protected"] for m in list_memories(services, "alice"))
    for memory_id in ids[: 2 - held]:
        assert set_protected(services, "alice", memory_id, True)["changed"]
    with pytest.raises(InvalidInput) as refused:
        set_protected(services, "alice", ids[2 - held], True)
    assert "limit" in str(refused.value) and "lumina-memory unprotect" in str(refused.value)
    with pytest.raises(InvalidInput):
        set_protected(services, "bob", ids[0], False)  # another user's memory: not found


def test_forget_removes_one_memory_from_every_tier(filled):
    services = filled.services
    target = list_memories(services, "alice")[0]
    removed = forget_memory(services, "alice", target["memory_id"], actor="test")
    assert removed["lifecycle"] == 1 and removed["segment"] == 1 and removed["turns"] == len(target["source_turn_ids"])
    assert removed["long-term"] == 1
    assert target["memory_id"] not in {m["memory_id"] for m in list_memories(services, "alice")}
    assert services.stores.vectors.get("alice", [target["memory_id"]]) == []
    assert services.stores.archive.get_turns("alice", target["source_turn_ids"]) == []
    with pytest.raises(InvalidInput):
        forget_memory(services, "alice", target["memory_id"])


def test_recall_says_levels_priming_skips_the_archive_and_deliberate_recall_asks_for_revival(filled):
    from lumina_memory.nodes.retrieval.recall import recall

    services = filled.services
    run_lifecycle(services, now=T0 + DAY)  # the users' first batch day: from here on every day counts
    assert run_lifecycle(services, now=T0 + 400 * DAY)["days"] == 399
    levels = {m["memory_id"]: m["level"] for m in list_memories(services, "alice")}
    archived = {m for m, level in levels.items() if level == 4}
    assert archived, levels
    question = "猫のムギは最近どうしてる？"
    asked = recall(services, "alice", question, purpose="question", limit=10)
    assert all("level" in i and "archived" in i for i in asked)
    reached = {i["segment_id"] for i in asked if i["archived"]}
    assert reached, asked
    assert all(i["from_record"] for i in asked if i["level"] > 1)
    flagged = {m["memory_id"] for m in list_memories(services, "alice") if m["revival_requested"]}
    assert reached <= flagged
    primed = recall(services, "alice", question, purpose="talking", limit=10)
    assert not any(i["archived"] for i in primed)
    # F7 orders the episodes a character is primed with (facts, issue 18, lead: knowing her cat's name outlives
    # remembering the conversation it was told in, so a fact is not archived with its episode)
    episodes = [i for i in primed if i["kind"] == "episode"]
    ranked = [i["priority"] for i in episodes]
    assert ranked == sorted(ranked, reverse=True) and len(ranked) > 1
    assert not {i.get("segment_id") for i in episodes} & archived


def test_a_quiet_conversation_is_encoded_by_the_maintenance_run(tmp_path):
    from lumina_memory.graphs.cli import _open
    from lumina_memory.graphs.maintenance_graph import run_maintenance
    from lumina_memory.stores.redis_server import stop_server

    from .conftest import make_settings

    settings = make_settings(tmp_path / "data")
    services, graph, conn = _open(settings)
    try:
        rows = _rows("alice")[:8]
        replay(graph, "alice", rows, flush=False)  # the second topic's segment stays open
        held = len(list_memories(services, "alice"))
        archived = services.stores.archive.counts("alice")["turns"]
        last = rows[-1]["ts"]
        early = run_maintenance(services, now=last + 60)
        assert early["idle_segments"] == {"flushed": 0, "turns": 0}
        late = run_maintenance(services, now=last + settings.boundary_idle_seconds + 60)
        assert late["idle_segments"]["flushed"] == 1
        assert services.stores.archive.counts("alice")["turns"] == len(rows) > archived
        assert len(list_memories(services, "alice")) == held + 1
        again = run_maintenance(services, now=last + settings.boundary_idle_seconds + 120)
        assert again["idle_segments"]["flushed"] == 0
    finally:
        services.close()
        conn.close()
        stop_server(settings)


def test_compression_with_a_model_uses_the_notes_prompts_and_falls_back_loudly(filled, caplog):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from lumina_memory.nodes.lifecycle.compress import Compressor

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    def answer(trigger: str, content: str) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": "Compressed", "args": {"trigger": trigger, "content": content},
                                                  "id": "c1"}])

    record = filled.services.stores.archive.segments("alice")[0]
    model = ToolCallingFake(messages=iter([answer("転職の面接について話した", "合格を一緒に喜んだ"),
                                           answer("転職, 面接", "合格, 喜び"), AIMessage(content="ok")]))
    compressor = Compressor(model)
    assert compressor.text(record, ["joy"], 2) == "転職の面接について話した / 合格を一緒に喜んだ"
    assert compressor.text(record, ["joy"], 3) == "転職, 面接 / 合格, 喜び #joy"
    fallback = compressor.text(record, ["joy"], 2)  # prose instead of the JSON
    assert fallback == record.summary and "compression by the model failed" in caplog.text
    assert compressor.paths == {"model": 2, "offline (model failed)": 1}
    assert Compressor(None).text(record, ["joy"], 3).endswith("#joy") and Compressor(None).text(record, [], 1) is None
