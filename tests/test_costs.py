"""Issue 49: each write, flush, recall, priming and reply is recorded with its stages, model calls and tokens, on the
path it ran (nodes.costs), and the records are kept in the archive (stores.costs_sql)."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from lumina_memory.nodes.costs_graph import GRAPH_OPERATIONS
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.recall_stages import STAGES
from lumina_memory.stores.errors import InvalidInput

TS = 1_790_000_000
WRITE_NODES = ["ingest_turn", "batch_fallback", "detect_boundary"]
FLUSH_NODES = ["flush_to_redis", "archive_to_duckdb", "upsert_long_term", "link_associations"]


class UsageModel(BaseChatModel):
    """A chat model whose every answer reports its tokens (``usage_metadata``), and which counts its calls."""

    answer: str = "モカは3歳の茶トラの猫です。"
    input_tokens: int = 11
    output_tokens: int = 7
    calls: list = []
    fail: bool = False

    @property
    def _llm_type(self) -> str:
        return "usage-fake"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": "usage-fake-1"}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls.append(threading.get_ident())
        if self.fail:
            raise RuntimeError("the model broke mid-reply")
        usage = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                 "total_tokens": self.input_tokens + self.output_tokens}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.answer, usage_metadata=usage))])


def records(mem) -> list[dict[str, Any]]:
    return mem.services.stores.archive.op_costs().since(0)


def write_turns(mem, user: str, texts: list[str], thread: str = "t", flush: bool = True) -> None:
    config = {"configurable": {"thread_id": thread}}
    ctx = {"user_id": user, "respond": False}
    for i, text in enumerate(texts):
        mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": TS + i}}, config, context=ctx)
    if flush:
        mem.graph.invoke({"flush": True}, config, context=ctx)


def test_a_write_and_a_flush_record_every_stage_the_graph_ran_in_order(memory):
    write_turns(memory, "ann", ["うちの猫のモカは3歳なんだ", "茶トラでかわいいよ"])
    found = records(memory)
    writes = [r for r in found if r["op"] == "write"]
    flushes = [r for r in found if r["op"] == "flush"]
    assert len(writes) == 3 and len(flushes) == 1  # two turns and the flush's run; one segment flushed
    assert all(list(r["stages"]) == WRITE_NODES for r in writes)
    stages = list(flushes[0]["stages"])
    assert [name for name in stages if "." not in name] == FLUSH_NODES
    # parts of a node, named after it, kept before it (they end first)
    for node_part in ("flush_to_redis.summary", "archive_to_duckdb.encode", "archive_to_duckdb.learn"):
        assert stages.index(node_part) < stages.index(node_part.split(".")[0])
    # offline: no model is called, and the record says which path ran
    assert {(r["path"], r["calls"], r["input_tokens"], r["output_tokens"], r["error"]) for r in found} == {
        ("offline", 0, 0, 0, "")}
    assert all(r["ms"] >= max(r["stages"].values()) for r in found)
    assert GRAPH_OPERATIONS.open_count() == 0  # nothing stays open between runs


def test_a_recall_records_its_stages_in_the_order_they_ran(memory):
    write_turns(memory, "bea", ["週末は鎌倉で海を見た", "しらす丼がおいしかった"])
    before = len(records(memory))
    items = recall(memory.services, "bea", "鎌倉で何を食べた？")
    assert items
    (record,) = records(memory)[before:]
    assert record["op"] == "recall" and record["error"] == "" and record["path"] == "offline"
    assert list(record["stages"]) == [stage.__name__ for stage in STAGES]


def test_priming_and_a_reply_are_recorded_with_the_recall_they_ran(memory):
    write_turns(memory, "cat", ["モカは茶トラの猫", "3歳になった"])
    before = len(records(memory))
    memory.graph.invoke({"turn": {"speaker": "user", "text": "ルミナ、モカって何歳だっけ？", "ts": TS + 100}},
                        {"configurable": {"thread_id": "t"}}, context={"user_id": "cat"})
    ops = [r["op"] for r in records(memory)[before:]]
    assert ops == ["write", "recall", "prime", "reply"]
    prime, reply = records(memory)[before:][2:]
    assert {"profile", "recent", "procedures", "kb", "episodes"} <= set(prime["stages"])
    assert list(reply["stages"]) == ["respond"] and reply["path"] == "offline" and reply["calls"] == 0


def test_model_calls_and_tokens_go_to_the_operation_that_made_them(memory):
    model = UsageModel(calls=[])
    memory.services.chat_model = model
    write_turns(memory, "dan", ["うちの猫のモカは3歳なんだ", "茶トラでかわいいよ"], flush=False)
    assert model.calls == [] and {r["calls"] for r in records(memory)} == {0}
    memory.graph.invoke({"flush": True}, {"configurable": {"thread_id": "t"}}, context={"user_id": "dan", "respond": False})
    flush_calls = len(model.calls)
    assert flush_calls >= 1  # the summary at least
    (flush,) = [r for r in records(memory) if r["op"] == "flush"]
    assert (flush["path"], flush["calls"]) == ("llm", flush_calls)
    assert (flush["input_tokens"], flush["output_tokens"]) == (flush_calls * model.input_tokens,
                                                              flush_calls * model.output_tokens)
    assert flush["models"] == {"usage-fake-1": {"calls": flush_calls, "input_tokens": flush["input_tokens"],
                                                "output_tokens": flush["output_tokens"]}}
    # each call is also the stage's (or part's) that made it: the summary's in flush_to_redis.summary
    assert flush["stage_calls"]["flush_to_redis.summary"]["calls"] == 1
    assert sum(used["calls"] for used in flush["stage_calls"].values()) == flush_calls
    assert sum(used["output_tokens"] for used in flush["stage_calls"].values()) == flush["output_tokens"]
    before = len(records(memory))
    memory.graph.invoke({"turn": {"speaker": "user", "text": "ルミナ、モカって何歳だっけ？", "ts": TS + 100}},
                        {"configurable": {"thread_id": "t"}}, context={"user_id": "dan"})
    reply_calls = len(model.calls) - flush_calls
    by_op = {r["op"]: r for r in records(memory)[before:]}
    assert reply_calls >= 1 and by_op["reply"]["calls"] == reply_calls
    assert list(by_op["reply"]["stage_calls"]) == ["respond"]
    assert by_op["reply"]["output_tokens"] == reply_calls * model.output_tokens
    assert by_op["write"]["calls"] == by_op["recall"]["calls"] == by_op["prime"]["calls"] == 0


def test_a_failing_stage_is_recorded_with_its_error_name(memory):
    with pytest.raises(InvalidInput):
        recall(memory.services, "eve", "x" * (memory.settings.max_query_chars + 1))
    (failed,) = [r for r in records(memory) if r["op"] == "recall"]
    assert failed["error"] == "check_request: InvalidInput" and list(failed["stages"]) == ["check_request"]
    memory.services.chat_model = UsageModel(calls=[], fail=True)
    with pytest.raises(RuntimeError):
        memory.graph.invoke({"turn": {"speaker": "user", "text": "ルミナ、元気？", "ts": TS}},
                            {"configurable": {"thread_id": "e"}}, context={"user_id": "eve"})
    (reply,) = [r for r in records(memory) if r["op"] == "reply"]
    assert reply["error"] == "respond: RuntimeError" and reply["calls"] == 1 and reply["output_tokens"] == 0
    assert GRAPH_OPERATIONS.open_count() == 0


def test_each_operation_logs_one_costs_line(memory, caplog):
    with caplog.at_level(logging.INFO, logger="lumina.costs"):
        recall(memory.services, "fay", "猫の名前は？")
    lines = [r.getMessage() for r in caplog.records if r.name == "lumina.costs"]
    assert len(lines) == 1 and lines[0].startswith("op=recall path=offline ") and " calls=0 " in lines[0]
    assert "stages=check_request:" in lines[0]


def test_records_name_no_user_and_hold_no_text(memory):
    write_turns(memory, "gil@example.com", ["秘密の合言葉はひまわり"])
    recall(memory.services, "gil@example.com", "合言葉は？")
    kept = json.dumps(records(memory), ensure_ascii=False)
    assert "gil" not in kept and "ひまわり" not in kept and "合言葉" not in kept
    places = [getattr(p, "name", "") for p in memory.services.stores.archive.user_data_places()]
    assert not any("op_costs" in name for name in places)  # nothing of a user's for erasure or backups to reach


@pytest.mark.slow  # opens a second memory
def test_recording_off_keeps_no_record_and_logs_nothing(memory_factory, caplog):
    mem = memory_factory(costs_record=False)
    with caplog.at_level(logging.INFO, logger="lumina.costs"):
        write_turns(mem, "hal", ["今日は雨"])
        recall(mem.services, "hal", "天気は？")
    assert records(mem) == [] and not [r for r in caplog.records if r.name == "lumina.costs"]


def test_the_costs_line_becomes_json_fields(memory):
    import io

    from lumina_memory.graphs.logging_setup import configure_logging

    out = io.StringIO()
    configure_logging("json", "INFO", stream=out)
    with pytest.raises(InvalidInput):
        recall(memory.services, "ida", "x" * (memory.settings.max_query_chars + 1))
    (line,) = [json.loads(raw) for raw in out.getvalue().splitlines() if '"lumina.costs"' in raw]
    assert (line["op"], line["path"], line["calls"], line["error"]) == ("recall", "offline", 0, "check_request:InvalidInput")
    assert isinstance(line["ms"], float) and line["stages"].startswith("check_request:")


def test_a_call_counts_for_the_innermost_operation_only(memory):
    from lumina_memory.nodes.costs import operation

    model = UsageModel(calls=[])
    with operation("maintain", memory.services):
        model.invoke("outer")
        with operation("recall", memory.services):
            model.invoke("inner")
        model.invoke("outer again")
    outer, inner = records(memory)  # in the order they started
    assert (inner["op"], inner["calls"], inner["output_tokens"]) == ("recall", 1, model.output_tokens)
    assert (outer["op"], outer["calls"], outer["output_tokens"]) == ("maintain", 2, 2 * model.output_tokens)
    assert len(model.calls) == 3


@pytest.mark.slow  # every maintenance step, backups included
def test_a_maintenance_run_is_one_operation_with_each_step_a_stage(memory):
    from lumina_memory.graphs.maintenance_graph import STEPS, run_maintenance

    write_turns(memory, "kit", ["今日は雨", "傘を忘れた"])
    before = len(records(memory))
    run_maintenance(memory.services)
    runs = [r for r in records(memory)[before:] if r["op"] == "maintain"]
    assert len(runs) == 1 and list(runs[0]["stages"]) == [step.__name__ for step in STEPS]
    assert runs[0]["error"] == "" and runs[0]["calls"] == 0


def test_a_part_outside_an_operation_does_nothing(memory):
    from lumina_memory.nodes.costs import part

    with part("summary"):
        pass
    assert records(memory) == []


@pytest.mark.slow  # opens a second memory
def test_a_cost_table_that_fails_loses_the_record_not_the_recall(memory_factory, caplog):
    mem = memory_factory(costs_batch_rows=1)
    write_turns(mem, "lee", ["週末は鎌倉で海を見た", "しらす丼がおいしかった"])
    table = mem.services.stores.archive.op_costs()
    with table.db.tx() as con:
        con.execute("DROP TABLE op_costs")
    with caplog.at_level(logging.WARNING, logger="lumina.costs"):
        items = recall(mem.services, "lee", "鎌倉で何を食べた？")
    assert items
    assert any("cost record of op=recall not kept" in r.getMessage() for r in caplog.records)
