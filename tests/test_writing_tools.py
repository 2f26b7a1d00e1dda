"""The agent's writes, on real stores: write_memory (a note that joins the conversation, [IMPORTANT] when asked)
and report_procedure_outcome (counted at once, once; the session end does not count it again)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.procedures import list_procedures
from lumina_memory.nodes.text.important_tag import has_important_tag, tagged
from lumina_memory.nodes.tools.writing import create_writing_tools

from .test_memory_tools import ScriptedToolModel, _mika_rows, _tool_call, call

PANCAKES = "How do I make pancakes?"


def _scripted(*calls):
    """Make each (tool, args) call in turn, one per round, then answer with the last tool result."""

    def script(messages):
        done = [m for m in messages if isinstance(m, ToolMessage)]
        if len(done) < len(calls):
            name, args = calls[len(done)]
            return _tool_call(name, args, len(done) + 1)
        return AIMessage(content=f"はい。{done[-1].content}" if done else "はい。")

    return script


def _say(memory, user, text, ts, thread="chat"):
    config = {"configurable": {"thread_id": f"{thread}:{user}"}}
    return memory.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": ts}}, config,
                               context={"user_id": user}), config


def test_the_tag(memory_factory):
    assert has_important_tag("[IMPORTANT] 鍵は植木鉢の下") and has_important_tag("メモ［ｉｍｐｏｒｔａｎｔ］")
    assert not has_important_tag("this is important") and tagged(tagged("x")) == "[IMPORTANT] x"


@pytest.mark.slow
def test_write_memory_adds_a_note_that_is_stored_and_recalled(memory_factory):
    memory = memory_factory()
    model = ScriptedToolModel(script=_scripted(("write_memory", {"text": "合鍵は玄関の植木鉢の下", "important": True})))
    memory.services.chat_model = model
    out, config = _say(memory, "kai", "ルミナ、合鍵は玄関の植木鉢の下に置いたから覚えておいて", 1_790_000_000)
    assert "write_memory" in model.bound and "report_procedure_outcome" in model.bound
    turns = memory.graph.get_state(config).values["turns"]
    notes = [t for t in turns if t["source_id"].endswith("-note0")]
    assert [(n["speaker"], n["text"]) for n in notes] == [("lumina", "[IMPORTANT] 合鍵は玄関の植木鉢の下")]
    memory.graph.invoke({"flush": True}, config, context={"user_id": "kai"})
    stored = memory.services.stores.archive.get_turns("kai", [notes[0]["turn_id"]])
    assert [t.text for t in stored] == ["[IMPORTANT] 合鍵は玄関の植木鉢の下"]
    from lumina_memory.nodes.retrieval.recall import recall

    assert any("植木鉢" in i["text"] for i in recall(memory.services, "kai", "合鍵はどこ？"))


@pytest.mark.slow
def test_write_memory_refuses_an_empty_note_as_a_tool_error(memory_factory):
    memory = memory_factory()
    write, _report = create_writing_tools(memory.services, "kai")
    for bad in ({"text": "   "}, {"text": ""}, {"text": "x" * 2_001}):
        result = call(write, bad)
        assert result.status == "error", bad


@pytest.mark.slow
def test_a_reported_outcome_counts_once_and_the_session_end_does_not_count_it_again(memory_factory):
    memory = memory_factory()
    replay(memory.graph, "mika", [r for r in _mika_rows() if r["source_id"].startswith("p:")])
    (pancakes,) = list_procedures(memory.services, "mika")
    pid = pancakes["procedure_id"]
    model = ScriptedToolModel(script=_scripted(("report_procedure_outcome", {"procedure_id": f"proc:{pid}",
                                                                            "outcome": "success"})))
    memory.services.chat_model = model
    # the user says it worked (a report the session end reads too) and the agent reports it with its tool
    out, config = _say(memory, "mika", "Clarisse, I made the pancakes and it worked great!", 1_790_000_000)
    assert "1 succeeded" in out["reply"]
    assert list_procedures(memory.services, "mika")[0]["success_count"] == 1
    # the same report again (a retried run) counts once
    asked = memory.graph.get_state(config).values["turns"][-2]
    assert asked["speaker"] == "user"
    _write, report = create_writing_tools(memory.services, "mika", asked["turn_id"])
    assert call(report, {"procedure_id": pid, "outcome": "success"}).status == "success"
    assert list_procedures(memory.services, "mika")[0]["success_count"] == 1
    memory.graph.invoke({"flush": True}, config, context={"user_id": "mika"})  # the session ends
    after = list_procedures(memory.services, "mika")[0]
    assert (after["success_count"], after["failure_count"]) == (1, 0)


@pytest.mark.slow
def test_an_unknown_procedure_is_a_tool_error(memory_factory):
    memory = memory_factory()
    _write, report = create_writing_tools(memory.services, "kai", "t-1")
    result = call(report, {"procedure_id": "nope", "outcome": "failure"})
    assert result.status == "error" and "not found" in result.content


@pytest.mark.slow
def test_a_user_turn_tagged_important_makes_a_protected_memory(memory_factory):
    from lumina_memory.nodes.lifecycle.manage import list_memories

    memory = memory_factory()
    replay(memory.graph, "rin", [
        {"speaker": "user", "text": "[IMPORTANT] 金庫の番号は本棚の左の箱に書いてある", "ts": "2026-09-01T10:00:00+09:00"},
        {"speaker": "lumina", "text": "わかった、本棚の左の箱だね", "ts": "2026-09-01T10:01:00+09:00"},
    ])
    replay(memory.graph, "sen", [
        {"speaker": "user", "text": "金庫の番号は本棚の左の箱に書いてある", "ts": "2026-09-01T10:00:00+09:00"},
        {"speaker": "lumina", "text": "わかった、本棚の左の箱だね", "ts": "2026-09-01T10:01:00+09:00"},
    ])
    assert [m["protected"] for m in list_memories(memory.services, "rin")] == [True]
    assert [m["protected"] for m in list_memories(memory.services, "sen")] == [False]


def test_a_characters_important_note_protects_its_memory_and_its_plain_words_do_not(memory_factory):
    """The agent's write_memory(important=true) lands as the character's turn holding the tag: that memory is
    protected. A character saying 「覚えておいて」 is not the user asking, so it protects nothing."""
    from lumina_memory.nodes.lifecycle.manage import list_memories

    memory = memory_factory()
    replay(memory.graph, "kai", [
        {"speaker": "user", "text": "来週の月曜に歯医者の予約を入れたよ", "ts": "2026-09-02T10:00:00+09:00"},
        {"speaker": "nox", "text": "[IMPORTANT] 月曜は歯医者の予約", "ts": "2026-09-02T10:01:00+09:00"},
    ])
    replay(memory.graph, "ren", [
        {"speaker": "user", "text": "来週の月曜に歯医者の予約を入れたよ", "ts": "2026-09-02T10:00:00+09:00"},
        {"speaker": "nox", "text": "月曜は歯医者だね、覚えておいて", "ts": "2026-09-02T10:01:00+09:00"},
    ])
    assert [m["protected"] for m in list_memories(memory.services, "kai")] == [True]
    assert [m["protected"] for m in list_memories(memory.services, "ren")] == [False]

