"""Replies: who answers, what they recall, and which path (offline or LLM) produced them."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.text.summarize import summarise


def _chat(mem, text, user="dana", **ctx):
    return mem.graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": f"chat:{user}"}},
                            context={"user_id": user, **ctx})


def test_offline_reply_names_the_character_and_uses_memory(memory, demo_rows):
    replay(memory.graph, "dana", demo_rows[:17])  # the cat and movie topics, closed
    out = _chat(memory, "ノクス、前に話した映画のこと覚えてる？")
    assert out["responder"] == "nox"
    assert memory.graph.get_state({"configurable": {"thread_id": "chat:dana"}}).values["reply_path"] == "offline"
    assert out["recalled"] and any("long-term" in i["tiers"] or "mid-term" in i["tiers"] for i in out["recalled"])
    assert any(i["source_ids"] for i in out["recalled"])
    assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].name == "nox"
    assert out["reply"] == out["messages"][-1].content and "覚えてる" in out["reply"]


def test_the_quietest_character_answers_when_none_is_named(memory):
    first = _chat(memory, "今日はすごく疲れた", user="erin")
    second = _chat(memory, "明日も早いんだ", user="erin")
    third = _chat(memory, "でも週末は楽しみ", user="erin")
    assert [first["responder"], second["responder"], third["responder"]] == ["lumina", "clarisse", "nox"]
    state = memory.graph.get_state({"configurable": {"thread_id": "chat:erin"}}).values
    assert state["character_turns"] == {"lumina": 1, "clarisse": 1, "nox": 1}
    assert [t["speaker"] for t in state["turns"]] == ["user", "lumina", "user", "clarisse", "user", "nox"]


def test_rerunning_without_a_new_message_does_not_ingest_it_twice(memory):
    _chat(memory, "猫を飼い始めたよ", user="fay")
    config = {"configurable": {"thread_id": "chat:fay"}}
    memory.graph.invoke({"flush": True}, config, context={"user_id": "fay"})
    assert memory.services.stores.archive.counts("fay")["turns"] == 2  # the message and the reply
    memory.graph.invoke({"flush": True}, config, context={"user_id": "fay"})
    assert memory.services.stores.archive.counts("fay")["turns"] == 2


def test_llm_paths_use_the_chat_model_and_say_so(memory_factory):
    mem = memory_factory()
    model = FakeListChatModel(responses=["モカは3歳の茶トラの猫です。", "ルミナだよ。モカは3歳だったね！"])
    mem.services.chat_model = model
    config = {"configurable": {"thread_id": "llm"}}
    ctx = {"user_id": "gus", "respond": False}
    for i, text in enumerate(["うちの猫のモカは3歳なんだ", "茶トラでかわいいよ"]):
        mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": 1_790_000_000 + i}}, config, context=ctx)
    mem.graph.invoke({"flush": True}, config, context=ctx)
    segment = mem.services.stores.archive.segments("gus")[0]
    assert segment.summary == "モカは3歳の茶トラの猫です。" and segment.summary_method == "llm"
    out = mem.graph.invoke({"turn": {"speaker": "user", "text": "ルミナ、モカって何歳だっけ？", "ts": 1_790_000_100}},
                           config, context={"user_id": "gus"})
    assert out["reply"] == "ルミナだよ。モカは3歳だったね！" and out["responder"] == "lumina"
    assert mem.graph.get_state(config).values["reply_path"] == "llm"


def test_a_failing_llm_falls_back_loudly(memory, caplog):
    import numpy as np

    class Broken(FakeListChatModel):
        def invoke(self, *args, **kwargs):
            raise ConnectionError("no route to model API")

    vectors = np.eye(2, 4, dtype=np.float32)
    summary, method = summarise(memory.settings, ["user", "nox"], ["こんにちは", "よう"], vectors,
                                Broken(responses=["x"]))
    assert method == "extractive-after-llm-error" and "こんにちは" in summary
    assert "LLM summary failed" in caplog.text


def test_short_term_state_stays_bounded(memory):
    config = {"configurable": {"thread_id": "chat:kim"}}
    for i in range(9):  # 9 messages + 9 replies: the 12-turn cap closes segments along the way
        memory.graph.invoke({"messages": [HumanMessage(f"{i}番目の話題について話そう")]}, config,
                            context={"user_id": "kim"})
    state = memory.graph.get_state(config).values
    assert len(state["turns"]) <= memory.settings.short_term_max_turns
    assert len(state["messages"]) <= memory.settings.short_term_max_turns
    assert memory.services.stores.archive.counts("kim")["segments"] >= 1
    archived = memory.services.stores.archive.counts("kim")["turns"]
    assert archived + len(state["turns"]) == 18  # nothing dropped on the way out of state


def test_small_talk_stays_out_of_long_term(memory):
    config = {"configurable": {"thread_id": "smalltalk"}}
    ctx = {"user_id": "lee", "respond": False}
    for i, (speaker, text) in enumerate([("user", "おはよう！"), ("lumina", "おはよう"), ("user", "うん")]):
        memory.graph.invoke({"turn": {"speaker": speaker, "text": text, "ts": 1_790_000_000 + i}}, config, context=ctx)
    memory.graph.invoke({"flush": True}, config, context=ctx)
    stores = memory.services.stores
    assert stores.archive.counts("lee") == {"turns": 3, "segments": 1}  # kept in the archive ...
    assert stores.vectors.count("lee") == 0  # ... but not a long-term memory
