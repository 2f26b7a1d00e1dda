"""F2's trigger and content of a memory on the real stores: encoding writes the user's words as the trigger and the
characters' as the content (offline, extractive; a fake chat model's answer when one is configured, the offline
ones with the failure named when it fails); the daily batch rewrites both when it compresses a memory to level 2
and 3; `memories --json` and recall show them; a memories table made before the columns gains them on open, on
DuckDB and PostgreSQL."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.nodes.lifecycle.compress import Compressor
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.recall_view import apply_lifecycle
from lumina_memory.nodes.lifecycle.run import run_lifecycle
from lumina_memory.nodes.lifecycle.trigger_content import offline_sides, segment_lines
from lumina_memory.nodes.text.emotion_model import MemoryTextsReader
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow
DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 09:00 in Tokyo
TRIP = [("user", "来週の金曜に京都へ行くんだ。嵐山で友だちのハルカと会う"),
        ("lumina", "いいね！嵐山なら竹林の小径がきれいだよ"),
        ("clarisse", "金曜は混むから朝八時には着いておくといいわ"),
        ("user", "新幹線は七時二分の便を予約したよ"),
        ("nox", "……ハルカさんによろしく。お土産は八ツ橋がいいと思う"),
        ("lumina", "帰ったら写真を見せてね、楽しみにしてる")]
USER_WORDS = [t for s, t in TRIP if s == "user"]
CHARACTER_WORDS = [t for s, t in TRIP if s != "user"]


class ToolCallingFake(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def texts_answer(trigger: str, content: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "MemoryTexts", "args": {"trigger": trigger, "content": content},
                                              "id": "m1"}])


def _ingest(mem, user: str = "haru", start: float = T0) -> None:
    rows = [{"speaker": s, "text": t, "ts": start + i * 60} for i, (s, t) in enumerate(TRIP)]
    replay(mem.graph, user, rows)
    mem.graph.invoke({"flush": True}, thread_config(user), context={"user_id": user, "respond": False})


def test_a_memory_gets_the_users_words_as_trigger_and_the_characters_as_content(memory_factory):
    mem = memory_factory()
    _ingest(mem)
    (memory,) = list_memories(mem.services, "haru")
    assert memory["trigger_path"] == "extractive"
    for said in USER_WORDS:  # both user turns (trigger_turns 2), names, numbers and places as said
        assert said in memory["trigger"]
    assert not any(c in memory["trigger"] for c in CHARACTER_WORDS)
    kept = [c for c in CHARACTER_WORDS if c in memory["content"]]
    assert len(kept) == 3 and not any(u in memory["content"] for u in USER_WORDS)  # content_turns 3 of the 4

    items = [{"segment_id": memory["memory_id"], "text": "…", "score": 1.0}]
    (shown,) = apply_lifecycle(mem.services, "haru", items, "question", now=T0 + 3600)
    assert shown["trigger"] == memory["trigger"] and shown["content"] == memory["content"]


def test_compression_to_levels_2_and_3_rewrites_trigger_and_content(memory_factory):
    mem = memory_factory()
    _ingest(mem)
    (fresh,) = list_memories(mem.services, "haru")
    record = mem.services.stores.archive.segments("haru")[0]
    params = mem.services.settings.lifecycle
    # The batch's ratio caps (level 1 at most 15 % of the user's memories) compress a lone memory at once.
    run_lifecycle(mem.services, now=T0 + DAY)
    (faded,) = list_memories(mem.services, "haru")
    assert faded["level"] >= 2
    expected = offline_sides(mem.services.embedder, segment_lines(record.text), faded["level"], params)
    assert (faded["trigger"], faded["content"]) == (expected.trigger, expected.content)
    assert faded["trigger"] != fresh["trigger"] and faded["content"] != fresh["content"]
    level2 = offline_sides(mem.services.embedder, segment_lines(record.text), 2, params)
    assert sum(u in level2.trigger for u in USER_WORDS) == 1  # one user turn
    assert sum(c in level2.content for c in CHARACTER_WORDS) == 2  # two of the characters'
    level3 = Compressor(None, mem.services.embedder, params).compress(record, ["joy"], 3)
    trigger_words, content_words = level3.trigger.split(", "), level3.content.split(", ")
    assert 1 <= len(trigger_words) <= 3 and 1 <= len(content_words) <= 3
    assert all(any(w in u for u in USER_WORDS) for w in trigger_words)
    assert all(any(w in c for c in CHARACTER_WORDS) for w in content_words)


def test_a_fake_chat_models_trigger_and_content_are_stored_and_a_failure_falls_back_named(memory_factory, caplog):
    mem = memory_factory()
    model = ToolCallingFake(messages=iter([texts_answer("京都旅行の予定を話してくれた", "嵐山の見どころを勧めた"),
                                           AIMessage(content="うまく答えられません")]))
    mem.services.built["memory_texts"] = MemoryTextsReader(model)  # the reader encoding builds when a model is set
    _ingest(mem, "haru")
    _ingest(mem, "mina", T0 + 600)
    by_user = {u: list_memories(mem.services, u)[0] for u in ("haru", "mina")}
    assert (by_user["haru"]["trigger"], by_user["haru"]["content"], by_user["haru"]["trigger_path"]) == (
        "京都旅行の予定を話してくれた", "嵐山の見どころを勧めた", "model")
    fallback = by_user["mina"]
    assert fallback["trigger_path"].startswith("extractive (model failed: ValueError")
    assert USER_WORDS[0] in fallback["trigger"] and any(c in fallback["content"] for c in CHARACTER_WORDS)
    assert "trigger/content by the model failed" in caplog.text


def test_the_compressors_model_answer_becomes_trigger_and_content(memory_factory):
    mem = memory_factory()
    _ingest(mem)
    record = mem.services.stores.archive.segments("haru")[0]

    def answer(trigger: str, content: str) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": "Compressed", "args": {"trigger": trigger,
                                                                                   "content": content}, "id": "c1"}])

    model = ToolCallingFake(messages=iter([answer("京都行きを話した", "嵐山を勧めた"), answer("京都, 嵐山", "竹林, 八ツ橋")]))
    compressor = Compressor(model, mem.services.embedder, mem.services.settings.lifecycle)
    assert compressor.compress(record, [], 2)[1:] == ("京都行きを話した", "嵐山を勧めた")
    assert compressor.compress(record, ["joy"], 3) == ("京都, 嵐山 / 竹林, 八ツ橋 #joy", "京都, 嵐山", "竹林, 八ツ橋")


def test_the_memories_table_shows_trigger_and_content(memory_factory):
    from lumina_memory.graphs.cli_memories import shown_text

    mem = memory_factory()
    _ingest(mem)
    (memory,) = list_memories(mem.services, "haru")
    assert shown_text(memory) == f"{memory['trigger']} / {memory['content']}"[:80]
    assert shown_text({**memory, "trigger": "", "content": ""}) == memory["text"][:80]


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_memories_table_made_before_the_columns_gains_them_on_open(engine, tmp_path, request):
    from lumina_memory.stores.duckdb_connection import GuardedConnection
    from lumina_memory.stores.memories_duckdb import MemoryTable
    from lumina_memory.stores.memories_schema import MEMORIES, NEW_COLUMNS, SCHEMA
    from lumina_memory.stores.pg_connection import PostgresConnection

    def steps(db) -> list[int]:
        with db.read() as con:
            return [r[0] for r in con.execute("SELECT step FROM lumina_migrations WHERE component = 'memories' "
                                              "ORDER BY step").fetchall()]

    def connect():
        if engine == "duckdb":
            return GuardedConnection(str(tmp_path / "a.duckdb"), str(tmp_path), "archive", ())
        return PostgresConnection(request.getfixturevalue("pg_uri"), "archive")

    old = {"memory_id": "m:old", "user_id": "haru", "created": T0, "category": "casual", "intensity": 30.0,
           "valence": "neutral", "valence_score": 0.0, "arousal": 20.0, "tags": [], "decay": 0.8, "memory_days": 0.0,
           "retention": 30.0, "level": 1, "protected": False, "recalled": False, "recall_count": 0, "unbatched": True,
           "idle_days": 0.0, "archived_on": -1, "archive_reason": 0, "revival_requested": False,
           "emotion_path": "lexicon"}
    db = connect()
    try:
        db.migrate("memories", [SCHEMA])  # the table as it was made before trigger and content
        with db.tx(touches=("haru",)) as con:
            con.execute(f"INSERT INTO {MEMORIES} ({', '.join(NEW_COLUMNS)}) VALUES "
                        f"({', '.join('?::VARCHAR[]' if c == 'tags' else '?' for c in NEW_COLUMNS)})",
                        [old[c] for c in NEW_COLUMNS])
            columns = {r[0] for r in con.execute(f"SELECT * FROM {MEMORIES} LIMIT 0").description}
        assert "trigger" not in columns and steps(db) == [1]
    finally:
        db.close()
    db = connect()  # open again, as a newer version would
    try:
        table = MemoryTable(db)
        assert steps(db) == [1, 2]
        assert table.insert_new([{**old, "memory_id": "m:new", "trigger": "京都へ行く", "content": "嵐山を勧めた",
                                  "trigger_path": "extractive"}]) == ["m:new"]
        with db.read() as con:  # (the table's rows() joins the archive's segments, not made here)
            rows = {r[0]: r[1:] for r in con.execute(
                f"SELECT memory_id, trigger, content, trigger_path FROM {MEMORIES}").fetchall()}
        assert rows == {"m:old": (None, None, None),  # kept, nothing invented
                        "m:new": ("京都へ行く", "嵐山を勧めた", "extractive")}
    finally:
        db.close()
