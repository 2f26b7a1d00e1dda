"""Changed input is never dropped in silence: a source id reused with other text is refused by name (the stored
text stays, everywhere), a time without an offset is read on the user's clock (LUMINA_TIMEZONE), and an import
says how many rows had no time and were given the import time."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.input_check import SourceReused
from lumina_memory.nodes.retrieval.messages import read_message
from lumina_memory.stores.errors import InvalidInput

TS = 1_790_000_000
CTX = {"user_id": "ann", "respond": False}


def _archived(mem, user_id: str, source_id: str) -> list[str]:
    return [t.text for t in mem.services.stores.archive.all_turns(user_id) if t.source_id == source_id]


def test_a_reused_source_id_with_other_text_is_refused_and_the_stored_text_kept(memory):
    config = {"configurable": {"thread_id": "reuse"}}
    memory.graph.invoke({"turn": {"speaker": "user", "text": "猫のモカは三歳です", "ts": TS, "source_id": "s1"}}, config, context=CTX)
    memory.graph.invoke({"flush": True}, config, context=CTX)
    before = tier_stats(memory.services, "ann")
    with pytest.raises(SourceReused) as err:  # archived
        memory.graph.invoke({"turn": {"speaker": "user", "text": "猫のモカは五歳です", "ts": TS, "source_id": "s1"}}, config, context=CTX)
    assert isinstance(err.value, InvalidInput) and err.value.field == "source_id"
    assert "'s1'" in str(err.value) and "different text" in str(err.value)
    # not in the open segment either (the thread's checkpoint holds the turns not yet archived)
    memory.graph.invoke({"turn": {"speaker": "user", "text": "明日は雨らしい", "ts": TS + 60, "source_id": "s2"}}, config, context=CTX)
    with pytest.raises(SourceReused):
        memory.graph.invoke({"turn": {"speaker": "user", "text": "明日は晴れらしい", "ts": TS + 60, "source_id": "s2"}}, config, context=CTX)
    # a batch naming the row; no row of it is taken
    with pytest.raises(SourceReused) as err:
        memory.graph.invoke({"transcript": [{"speaker": "user", "text": "新しい話", "ts": TS + 120, "source_id": "s3"},
                                            {"speaker": "user", "text": "猫のモカは七歳です", "ts": TS, "source_id": "s1"}]},
                            config, context=CTX)
    assert err.value.field == "transcript[1].source_id"
    # the same text again is what it always was: a no-op
    memory.graph.invoke({"turn": {"speaker": "user", "text": "猫のモカは三歳です", "ts": TS, "source_id": "s1"}}, config, context=CTX)
    memory.graph.invoke({"transcript": [{"speaker": "user", "text": "明日は雨らしい", "ts": TS + 60, "source_id": "s2"}]},
                        config, context=CTX)
    memory.graph.invoke({"flush": True}, config, context=CTX)
    assert _archived(memory, "ann", "s1") == ["猫のモカは三歳です"] and _archived(memory, "ann", "s2") == ["明日は雨らしい"]
    assert not _archived(memory, "ann", "s3")
    assert tier_stats(memory.services, "ann")["archive"]["turns"] == before["archive"]["turns"] + 1
    assert "五歳" not in str(memory.graph.get_state(config).values) and "晴れ" not in str(memory.graph.get_state(config).values)


def test_a_chunked_message_under_a_reused_source_id_is_refused_too(memory_factory):
    mem = memory_factory(max_message_chars=500, long_message_chunk_tokens=200, long_message_chunk_overlap=20)
    long = "".join(f"{i}日目は駅前のパン屋で新作のメロンパンを買った。" for i in range(60))
    replay(mem.graph, "ann", [{"speaker": "user", "text": long, "ts": TS, "source_id": "long"}])
    for other in (long[:300], long + "おしまい。", long.replace("メロンパン", "クロワッサン")):
        with pytest.raises(SourceReused):
            mem.graph.invoke({"turn": {"speaker": "user", "text": other, "ts": TS, "source_id": "long"}},
                             {"configurable": {"thread_id": "user:ann"}}, context=CTX)
    replay(mem.graph, "ann", [{"speaker": "user", "text": long, "ts": TS, "source_id": "long"}])  # same: a no-op
    assert read_message(mem.services.stores.archive, "ann", "long", overlap=20) == long


def test_a_time_without_an_offset_is_read_on_the_users_clock(memory_factory):
    for zone, hours in (("Asia/Tokyo", 9), ("UTC", 0), ("America/New_York", -4)):
        mem = memory_factory(timezone=zone)
        config = {"configurable": {"thread_id": "tz"}}
        mem.graph.invoke({"turn": {"speaker": "user", "text": "朝ごはんはパン", "ts": "2026-10-01T09:00:00"}}, config, context=CTX)
        mem.graph.invoke({"transcript": [{"speaker": "user", "text": "昼はうどん", "ts": "2026-10-01 12:30"},
                                         {"speaker": "user", "text": "夜はカレー", "ts": "2026-10-01T19:00:00+09:00"}]},
                         config, context=CTX)
        mem.graph.invoke({"flush": True}, config, context=CTX)
        stamps = [t.ts for t in mem.services.stores.archive.all_turns("ann")]
        utc = lambda *a: datetime(*a, tzinfo=timezone.utc).timestamp()  # noqa: E731
        assert stamps == sorted([utc(2026, 10, 1, 9 - hours), utc(2026, 10, 1, 12 - hours, 30), utc(2026, 10, 1, 10)]), zone


@pytest.fixture
def cli(cli_factory):
    """``main`` called in this process: what the import reports is the subject, not the process boundary."""
    return cli_factory(check=False, in_process=True, LUMINA_MAX_INGEST_CHARS="2000", LUMINA_TIMEZONE="Asia/Tokyo")


def test_an_import_reports_reused_ids_missing_times_and_rows_over_the_limit(cli, tmp_path):
    rows = [
        {"user_id": "bea", "speaker": "user", "text": "猫のモカは三歳です", "ts": TS, "source_id": "m1"},
        {"user_id": "bea", "speaker": "user", "text": "猫のモカは五歳です", "ts": TS, "source_id": "m1"},  # reused in the file
        {"user_id": "bea", "speaker": "lumina", "text": "モカは元気？", "source_id": "m2"},  # no time
        {"user_id": "bea", "speaker": "user", "text": "".join(f"{i}日目は駅前でパンを買った。" for i in range(200)), "ts": TS + 9, "source_id": "m3"},  # over 2,000
        {"user_id": "bea", "speaker": "user", "text": "元気だよ", "ts": "2026-10-01T09:00:00", "source_id": "m4"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    proc = cli("ingest", str(source))
    out = proc.stdout.replace("\n", " ")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr + proc.stdout, proc.stdout + proc.stderr
    assert "3 lines ingested, 2 rejected" in out
    assert "1 row reuses source_id m1 with different text: rejected" in out
    assert "1 row had no time: given the import time" in out
    rejects = [json.loads(x) for x in (tmp_path / "in.jsonl.rejects.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], r["field"]) for r in rejects] == [(2, "source_id"), (4, "text")]
    assert "LUMINA_MAX_INGEST_CHARS" in rejects[1]["reason"] and "2,000" in rejects[1]["reason"]

    # against what is archived: other text under m1 is refused, the same rows again change nothing
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in
                              [rows[0], {**rows[4], "text": "元気じゃない"}, rows[4]]), encoding="utf-8")
    proc = cli("ingest", str(source))
    out = proc.stdout.replace("\n", " ")
    assert proc.returncode == 2 and "1 row reuses source_id m4 with different text: rejected" in out, out
    assert "3 turns" in cli("stats", "--user", "bea").stdout


def test_replay_ingests_the_rows_before_a_reused_source_id_then_refuses_it(memory):
    replay(memory.graph, "ann", [{"speaker": "user", "text": "猫のモカは三歳です", "ts": TS, "source_id": "s1"}])
    rows = [{"speaker": "user", "text": "今日は晴れ", "ts": TS + 60, "source_id": "s2"},
            {"speaker": "user", "text": "猫のモカは五歳です", "ts": TS, "source_id": "s1"},
            {"speaker": "user", "text": "明日は雨", "ts": TS + 120, "source_id": "s3"}]
    with pytest.raises(SourceReused) as err:
        replay(memory.graph, "ann", rows)
    assert err.value.field == "source_id"  # named as the row alone, as any rejected row of a replay
    replay(memory.graph, "ann", [])  # flush what went in
    assert _archived(memory, "ann", "s2") == ["今日は晴れ"] and _archived(memory, "ann", "s1") == ["猫のモカは三歳です"]
    assert not _archived(memory, "ann", "s3")
