"""A2: search_memory / read_memory as LangChain tools, on real engines.

One data directory holds two users whose ids overlap on purpose (both have a message "d0:0"): mika (a drink
that changed from coffee to tea, a pancake recipe, a long diary entry chunked at write time) and eve. The
tools are checked as a model sees them (schemas, the text with its pointers, errors it can read), every
pointer kind is opened, and no id, however hostile, opens the other user's memory. A ReAct agent from
langgraph.prebuilt and the respond node both drive the tools with a scripted tool-calling chat model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from lumina_memory.graphs.context import RunContext
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.tools.memory_tools import create_memory_tools
from lumina_memory.nodes.tools.pointers import abbreviated, format_pointer, parse_pointer
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.journal import Journal

from .conftest import Memory

# Long messages are chunked at 2,000 characters, in parts of 300 tokens (as tests/test_long_input.py does).
SMALL = dict(max_message_chars=2_000, long_message_chunk_tokens=300, long_message_chunk_overlap=30)
DRINKS = ("コーヒーが大好き！毎朝飲んでるよ", "最近コーヒーやめて紅茶にしたの")
DAYS = ("2026-05-02", "2026-09-10")


def _diary() -> str:
    days = ["月曜は図書館で星の本を読んだ。", "火曜はクラリスと紅茶の淹れ方を練習した。", "水曜はノクスとゲームで夜更かしした。",
            "木曜は雨で、窓辺でモカが昼寝していた。", "金曜は駅前のパン屋で新作のメロンパンを買った。"]
    text = "".join(f"{week}週目の{d}" for week in range(1, 40) for d in days)
    middle = len(text) // 2
    return text[:middle] + "その週、僕はオーロラ観測ツアーに申し込んだ。" + text[middle:]


def _drink_rows(user: str, texts=DRINKS) -> list[dict]:
    rows = []
    for n, (day, text) in enumerate(zip(DAYS, texts)):
        for i, (speaker, line) in enumerate((("user", text), ("lumina", "そうなんだ"), ("user", "うん、そうなの"))):
            rows.append({"speaker": speaker, "source_id": f"d{n}:{i}", "text": line, "ts": f"{day}T10:0{i}:00+09:00"})
    return rows


def _mika_rows() -> list[dict]:
    pancakes = [
        ("user", "How do I make pancakes?"),
        ("clarisse", "First, whisk 200g of flour with 2 eggs and 300ml of milk. Then heat a pan with a little butter."),
        ("user", "okay, and then?"),
        ("clarisse", "Pour a ladle of batter and cook for 2 minutes on each side. Finally, serve with maple syrup."),
    ]
    rows = _drink_rows("mika")
    rows += [{"speaker": s, "source_id": f"p:{i}", "text": t, "ts": f"2026-08-01T18:0{i}:00+00:00"}
             for i, (s, t) in enumerate(pancakes)]
    rows += [{"speaker": "user", "source_id": "diary-1", "text": _diary(), "ts": "2026-07-01T21:00:00+09:00"},
             {"speaker": "lumina", "source_id": "diary-2", "text": "すごい一週間だったね！", "ts": "2026-07-01T21:01:00+09:00"}]
    return sorted(rows, key=lambda r: r["ts"])


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    memory = Memory(tmp_path_factory.mktemp("tools"), **SMALL)
    replay(memory.graph, "mika", _mika_rows())
    replay(memory.graph, "eve", _drink_rows("eve", ("緑茶しか飲まないの", "最近はほうじ茶ばかり飲んでる")))
    yield memory
    memory.close()


def call(tool, args: dict, config: dict | None = None) -> ToolMessage:
    """The tool called as a model's tool call is (ToolNode and the respond loop call it so)."""
    return tool.invoke({"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"}, config)


def ids_in(text: str) -> list[str]:
    return re.findall(r"^\d+\. \[(\S+)\]", text, flags=re.M)


# ------------------------------------------------------------------------------------------- schemas


def test_the_tools_as_a_model_sees_them(mem):
    search, read = create_memory_tools(mem.services, "mika")
    assert (search.name, read.name) == ("search_memory", "read_memory")
    schema = search.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"query", "kind", "since", "until"} and schema["required"] == ["query"]
    kinds = schema["properties"]["kind"]["anyOf"][0]["enum"]
    assert kinds == ["episode", "knowledge", "procedure", "kb"]
    assert set(read.tool_call_schema.model_json_schema()["properties"]) == {"id"}  # the user is never an argument
    assert search.response_format == read.response_format == "content_and_artifact"
    assert "read_memory" in search.description
    with pytest.raises(InvalidInput):
        create_memory_tools(mem.services, "../mika")


# ------------------------------------------------------------------------------------------- search


def test_search_shows_each_hit_with_its_pointer_kind_date_level_and_score(mem):
    search, _ = create_memory_tools(mem.services, "mika")
    result = call(search, {"query": "今好きな飲み物は？"})
    assert result.status == "success"
    hits = result.artifact
    # shown short (tests/test_short_pointers.py), whole in the artifact
    assert hits and ids_in(result.content) == list(abbreviated(h["id"] for h in hits).values())
    assert {h["kind"] for h in hits} >= {"knowledge", "episode"}
    for h in hits:
        assert h["date"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", h["date"]) and h["tiers"]
        shown = abbreviated([h["id"]])[h["id"]]
        assert f"[{shown}] {h['kind']} · {h['date']}" in result.content and f"score {h['score']:.2f}" in result.content
        assert h["level"] == 1 and "level 1" in result.content
        assert parse_pointer(h["id"])  # every pointer shown opens
    # the current drink leads; its text is what the model reads
    assert hits[0]["kind"] == "knowledge" and "紅茶" in hits[0]["text"]


@pytest.mark.parametrize("kind,query,must", [
    ("episode", "コーヒー 紅茶", "紅茶"),
    ("knowledge", "飲み物", "紅茶"),
    ("procedure", "pancakes", "whisk 200g"),
])
def test_search_one_kind(mem, kind, query, must):
    search, _ = create_memory_tools(mem.services, "mika")
    result = call(search, {"query": query, "kind": kind})
    assert result.artifact and {h["kind"] for h in result.artifact} == {kind}
    assert any(must in h["text"] for h in result.artifact)
    prefix = {"episode": ("ep:", "seg:"), "knowledge": ("fact:",), "procedure": ("proc:",)}[kind]
    assert all(h["id"].startswith(prefix) for h in result.artifact)


def test_a_procedure_is_found_without_a_how_question_when_asked_for(mem):
    search, _ = create_memory_tools(mem.services, "mika")
    assert not [h for h in call(search, {"query": "flour eggs milk"}).artifact if h["kind"] == "procedure"]
    (proc,) = call(search, {"query": "flour eggs milk", "kind": "procedure"}).artifact
    assert proc["id"].startswith("proc:") and "pancakes" in proc["text"]


def test_since_and_until_filter_by_the_memory_date(mem):
    search, _ = create_memory_tools(mem.services, "mika")
    everything = call(search, {"query": "コーヒー"}).artifact
    assert {h["date"] for h in everything} >= {"2026-05-02", "2026-09-10"}
    later = call(search, {"query": "コーヒー", "since": "2026-09-01"}).artifact
    earlier = call(search, {"query": "コーヒー", "until": "2026-06-01T00:00:00+09:00"}).artifact
    assert later and all(h["date"] >= "2026-09-01" for h in later)
    assert earlier and all(h["date"] <= "2026-06-01" for h in earlier)
    assert any("毎朝" in h["text"] for h in earlier) and not any("毎朝" in h["text"] for h in later)
    window = call(search, {"query": "diary オーロラ", "since": "2026-07-01", "until": "2026-07-01"}).artifact
    assert window and {h["date"] for h in window} == {"2026-07-01"}
    assert call(search, {"query": "コーヒー", "since": "2027-01-01"}).content.startswith("No memories found")


@pytest.mark.parametrize("args,says", [
    ({"query": "x", "since": "2026-13-01"}, "invalid since"),
    ({"query": "x", "until": "last tuesday"}, "invalid until"),
    ({"query": "x", "since": "2026-09-10", "until": "2026-05-01"}, "after until"),
    ({"query": "x", "kind": "diary"}, "kind"),
    ({"query": "   "}, "query"),
    ({"query": "x" * 100_000}, "query"),
    ({}, "query"),
])
def test_bad_arguments_are_tool_errors_the_model_can_read(mem, args, says):
    search, _ = create_memory_tools(mem.services, "mika")
    result = call(search, args)
    assert result.status == "error" and says in result.content


# ------------------------------------------------------------------------------------------- read


def test_read_a_message_a_segment_and_bare_ids(mem):
    _, read = create_memory_tools(mem.services, "mika")
    opened = call(read, {"id": "ep:d1:0"})
    assert opened.status == "success" and "最近コーヒーやめて紅茶にしたの" in opened.content
    assert opened.artifact["details"]["speaker"] == "user" and opened.artifact["date"] == "2026-09-10"
    assert call(read, {"id": "d1:0"}).content == opened.content  # a bare source id opens the same
    segment_id = opened.artifact["details"]["segment_id"]
    seg = call(read, {"id": f"seg:{segment_id}"})
    assert seg.status == "success" and "[ep:d1:0] user: 最近コーヒーやめて紅茶にしたの" in seg.content
    assert "summary:" in seg.content and [m["source_id"] for m in seg.artifact["details"]["messages"]] == ["d1:0", "d1:1", "d1:2"]


def test_read_a_chunked_long_message_whole(mem):
    search, read = create_memory_tools(mem.services, "mika")
    archive = mem.services.stores.archive
    assert len([t for t in archive.all_turns("mika") if t.source_id.startswith("diary-1")]) > 3  # stored in parts
    hits = call(search, {"query": "オーロラ観測ツアーに申し込んだのはいつ？", "kind": "episode"}).artifact
    hit = next(h for h in hits if "オーロラ観測ツアー" in h["text"])
    # the parts are quoted under the message's one id (beside the reply next to it: their segment's id)
    assert hit["id"] == "ep:diary-1" or (hit["id"].startswith("seg:") and hit["messages"][0] == "ep:diary-1")
    opened = call(read, {"id": "ep:diary-1"})
    assert opened.artifact["details"]["message"] == _diary() and opened.artifact["details"]["chunked"]
    assert "reassembled" in opened.content
    # in its segment, the long message is one entry, cut, pointing at itself
    seg = call(read, {"id": f"seg:{opened.artifact['details']['segment_id']}"})
    assert seg.content.count("[ep:diary-1]") == 1 and "read_memory('ep:diary-1')" in seg.content
    assert seg.artifact["details"]["messages"][0]["text"] == _diary()


def test_a_primed_excerpt_of_a_chunked_message_opens_it_whole_by_its_time_header(mem):
    """Priming quotes the diary's passage under the time the diary was written; read_memory on that header gives
    the conversation at that minute with the diary reassembled whole, not cut as a segment's messages are."""
    from lumina_memory.nodes.priming import prime
    from lumina_memory.nodes.tools.pointers import parse_pointer

    _, read = create_memory_tools(mem.services, "mika")
    primed = prime(mem.services, "mika", "オーロラ観測ツアーに申し込んだのはいつ？", message_type="question", budget=200)
    entry = next(i for i in primed.section("episodes").items if "オーロラ観測ツアー" in i.text)
    assert entry.shown == "2026-07-01T21:00" and parse_pointer(entry.shown).kind == "time"  # the user's clock, Tokyo
    assert f"\n[{entry.shown}]\n" in primed.text and len(entry.text) < len(_diary()) / 4
    opened = call(read, {"id": entry.shown})
    assert opened.status == "success" and _diary() in opened.content
    # The diary's parts straddle two segments (its parts count towards a segment's turns): each opens it whole.
    details = opened.artifact["details"]
    segments = details.get("segments") or [details]
    assert any(m["text"] == _diary() for s in segments for m in s["messages"])
    assert not any("read_memory('ep:diary-1')" in line for line in opened.content.splitlines()
                   if line.startswith("[ep:diary-1]")), "said in that minute: whole, not cut"


def test_read_a_fact_with_its_history(mem):
    search, read = create_memory_tools(mem.services, "mika")
    facts = call(search, {"query": "前は何が好きだった？飲み物は？", "kind": "knowledge"}).artifact
    likes = next(h for h in facts if "コーヒー" in h["text"])
    opened = call(read, {"id": likes["id"]})
    history = opened.artifact["details"]["history"]
    assert len(history) >= 2 and "history (oldest first):" in opened.content
    old = [r for r in history if r["value"].startswith("コーヒー") and r["polarity"] == "positive"]
    assert old and all(r["status"] == "superseded" and r["valid_to"] for r in old)
    assert "superseded 2026-05-02 → 2026-09-10" in opened.content and "(ep:d0:0)" in opened.content
    # the current fact opens too, itself current
    tea = next(h for h in call(search, {"query": "飲み物", "kind": "knowledge"}).artifact if "紅茶" in h["text"])
    assert "current" in call(read, {"id": tea["id"]}).artifact["details"]["item"]["status"]


def test_read_a_procedure(mem):
    search, read = create_memory_tools(mem.services, "mika")
    (proc,) = call(search, {"query": "pancakes", "kind": "procedure"}).artifact
    opened = call(read, {"id": proc["id"]})
    assert opened.status == "success" and "1. First, whisk 200g" in opened.content and "confidence" in opened.content
    assert opened.artifact["details"]["procedure"]["title"] == "pancakes"


def test_pointers_round_trip():
    assert str(parse_pointer("ep:D2:2")) == "ep:D2:2" and parse_pointer("D2:2").kind == "episode"
    assert parse_pointer("fact:abc").kind == "knowledge" and parse_pointer("proc:abc").id == "abc"
    kb = parse_pointer("kb:manual:doc-1:3")
    assert (kb.kind, kb.kb, kb.doc_id, kb.chunk_no, str(kb)) == ("kb", "manual", "doc-1", 3, "kb:manual:doc-1:3")
    assert format_pointer({"kind": "episode", "unit": "turns", "source_ids": ["D2:2"], "segment_id": "s"}) == "ep:D2:2"
    assert format_pointer({"kind": "episode", "unit": "turns", "source_ids": ["a", "b"], "segment_id": "s"}) == "seg:s"
    assert format_pointer({"kind": "episode", "unit": "segment", "source_ids": ["a"], "segment_id": "s"}) == "seg:s"
    assert format_pointer({"kind": "knowledge", "item_id": "i"}) == "fact:i"
    assert format_pointer({"kind": "kb", "id": "kb:m:d:0"}) == "kb:m:d:0"
    for bad in ("", "kb:m", "kb:m:d:x", "seg:../x", "ep:a b"):
        with pytest.raises(InvalidInput):
            parse_pointer(bad)


# ------------------------------------------------------------------------------------------- isolation


def test_a_user_never_reads_another_users_memory(mem):
    mika_search, mika_read = create_memory_tools(mem.services, "mika")
    eve_search, eve_read = create_memory_tools(mem.services, "eve")
    mika_ids = [h["id"] for h in call(mika_search, {"query": "コーヒー 紅茶 pancakes オーロラ"}).artifact]
    mika_ids += [h["id"] for k in ("knowledge", "procedure") for h in call(mika_search, {"query": "飲み物 pancakes", "kind": k}).artifact]
    mika_ids += ["ep:diary-1", "diary-1", "ep:p:1"]
    assert any(i.startswith("fact:") for i in mika_ids) and any(i.startswith("proc:") for i in mika_ids)
    for pointer in mika_ids:
        assert call(mika_read, {"id": pointer}).status == "success"
        opened = call(eve_read, {"id": pointer})
        if opened.status == "success":  # only a source id both users have: eve reads her own message
            assert pointer in ("ep:d0:0", "ep:d1:0", "ep:d0:1", "ep:d1:1", "ep:d0:2", "ep:d1:2")
            assert "コーヒー" not in opened.content and opened.artifact["details"]["speaker"]
        else:
            assert "no memory" in opened.content
    # the same source id opens each user's own message
    assert "最近コーヒーやめて紅茶にしたの" in call(mika_read, {"id": "ep:d1:0"}).content
    assert "ほうじ茶" in call(eve_read, {"id": "ep:d1:0"}).content
    # eve's search never shows mika's memories, whatever she asks
    for kind in (None, "episode", "knowledge", "procedure"):
        for hit in call(eve_search, {"query": "コーヒー 紅茶 pancakes オーロラ diary", "kind": kind}).artifact:
            assert not any(word in hit["text"] for word in ("コーヒー", "紅茶", "pancake", "オーロラ"))


@pytest.mark.parametrize("hostile", [
    "../../etc/passwd", "ep:' OR '1'='1", "fact:*", "seg:", "proc:%", "kb:../x:y:1", "ep:" + "a" * 200,
    "seg:mika", "fact:mika", "ep:\u0000", "ep:d1:0\nseg:x",
])
def test_hostile_ids_open_nothing(mem, hostile):
    _, read = create_memory_tools(mem.services, "eve")
    result = call(read, {"id": hostile})
    assert result.status == "error" and ("invalid id" in result.content or "no memory" in result.content)


def test_the_user_comes_from_the_run_when_not_bound(mem):
    search, read = create_memory_tools(mem.services)
    eve = call(search, {"query": "ほうじ茶"}, {"configurable": {"user_id": "eve"}})
    assert eve.status == "success" and any("ほうじ茶" in h["text"] for h in eve.artifact)
    assert "ほうじ茶" in call(read, {"id": "ep:d1:0"}, {"configurable": {"user_id": "eve"}}).content
    nobody = call(search, {"query": "ほうじ茶"})
    assert nobody.status == "error" and "no user" in nobody.content
    hostile = call(search, {"query": "ほうじ茶"}, {"configurable": {"user_id": "../eve"}})
    assert hostile.status == "error" and "user_id" in hostile.content


# ------------------------------------------------------------------------------------------- agents


class ScriptedToolModel(BaseChatModel):
    """A chat model that calls tools: ``script(messages)`` returns the next AIMessage (tool calls or an answer)."""

    script: Callable[[list[BaseMessage]], AIMessage]
    bound: list[str] = []
    rounds: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted-tools"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.rounds.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.script(list(messages)))])

    def bind_tools(self, tools, **kwargs):
        self.bound[:] = [getattr(t, "name", None) for t in tools]
        return self


def _tool_call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{n}", "type": "tool_call"}])


def search_then_read(query: str, kind: str | None = None) -> Callable[[list[BaseMessage]], AIMessage]:
    """Search, open the first id the search printed (read from its text, as a model would), then answer
    with the first line of what it read."""

    def script(messages: list[BaseMessage]) -> AIMessage:
        tools = [m for m in messages if isinstance(m, ToolMessage)]
        if not tools:
            return _tool_call("search_memory", {"query": query, **({"kind": kind} if kind else {})}, 1)
        if len(tools) == 1:
            found = ids_in(tools[0].content)
            return _tool_call("read_memory", {"id": found[0] if found else "nothing"}, 2)
        return AIMessage(content=f"覚えてるよ。{tools[-1].content.splitlines()[0]}")

    return script


# create_react_agent's successor (langchain.agents.create_agent) lives in the `langchain` package, which this
# project does not depend on; langgraph.prebuilt's agent is still shipped and is what LangGraph users run.
AGENT_WARNING = "ignore:create_react_agent has been moved"


@pytest.mark.filterwarnings(AGENT_WARNING)
def test_a_react_agent_searches_then_reads_a_memory(mem):
    from langgraph.prebuilt import create_react_agent

    model = ScriptedToolModel(script=search_then_read("今好きな飲み物は？", "knowledge"))
    agent = create_react_agent(model, create_memory_tools(mem.services), context_schema=RunContext)
    out = agent.invoke({"messages": [HumanMessage("私が今好きな飲み物、覚えてる？")]}, context=RunContext(user_id="mika"))
    assert model.bound == ["search_memory", "read_memory"]
    found, opened = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert found.name == "search_memory" and "紅茶" in found.content and found.artifact[0]["kind"] == "knowledge"
    assert opened.name == "read_memory" and opened.status == "success" and "紅茶" in opened.content
    assert opened.artifact["details"]["item"]["status"] == "current"
    assert "紅茶" in out["messages"][-1].content and not out["messages"][-1].tool_calls
    # the same agent in eve's run reads eve's memory only
    model.rounds.clear()
    eve = agent.invoke({"messages": [HumanMessage("覚えてる？")]}, context={"user_id": "eve"})
    eve_tools = [m for m in eve["messages"] if isinstance(m, ToolMessage)]
    assert eve_tools and not any("紅茶" in m.content or "コーヒー" in m.content for m in eve_tools)


@pytest.mark.filterwarnings(AGENT_WARNING)
def test_tools_bound_to_one_user_refuse_another_users_run(mem):
    from langgraph.prebuilt import create_react_agent

    model = ScriptedToolModel(script=search_then_read("飲み物"))
    agent = create_react_agent(model, create_memory_tools(mem.services, "mika"), context_schema=RunContext)
    out = agent.invoke({"messages": [HumanMessage("覚えてる？")]}, context={"user_id": "eve"})
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results and all(m.status == "error" and "another user" in m.content for m in results)
    assert not any("紅茶" in m.content for m in results)


def test_the_respond_node_runs_the_tool_loop(memory_factory):
    memory = memory_factory()
    replay(memory.graph, "ken", _drink_rows("ken"))
    model = ScriptedToolModel(script=search_then_read("今好きな飲み物は？", "knowledge"))
    memory.services.chat_model = model
    config = {"configurable": {"thread_id": "ken-chat"}}
    out = memory.graph.invoke({"turn": {"speaker": "user", "text": "ルミナ、私が今好きな飲み物って覚えてる？",
                                        "ts": 1_790_000_000}}, config, context={"user_id": "ken"})
    assert out["responder"] == "lumina" and memory.graph.get_state(config).values["reply_path"] == "llm"
    assert model.bound == ["search_memory", "read_memory", "write_memory", "report_procedure_outcome"] and len(model.rounds) == 3
    last = model.rounds[-1]
    assert "Use these memories" in last[0].content and "search_memory" in last[0].content
    # the primed sections (nodes.priming) are the model's memory context, and every pointer in them opens
    primed = memory.graph.get_state(config).values["primed"]
    assert primed["text"] and primed["text"] in last[0].content
    pointers = [i["_source"] for section in primed["sections"] for i in section["items"]]
    _, read = create_memory_tools(memory.services, "ken")
    opened = [call(read, {"id": p}) for p in pointers if p.split(":", 1)[0] in ("ep", "seg", "fact", "proc")]
    assert opened and all(o.status == "success" for o in opened), [o.content[:80] for o in opened]
    read = [m for m in last if isinstance(m, ToolMessage)][-1]
    assert read.name == "read_memory" and read.status == "success" and "紅茶" in read.content
    assert out["reply"].startswith("覚えてるよ。") and "紅茶" in out["reply"]
    assert list(Journal.for_settings(memory.settings).folder.glob("*.jsonl")) == []  # the reply finished


def test_the_tool_loop_is_bounded_and_uses_primed_text(memory_factory):
    from lumina_memory.nodes.respond import memory_context
    from lumina_memory.nodes.tools.loop import MAX_TOOL_CALLS, run_tool_loop

    memory = memory_factory()
    replay(memory.graph, "lea", _drink_rows("lea"))
    model = ScriptedToolModel(script=lambda messages: _tool_call("search_memory", {"query": "紅茶"}, len(messages)))
    tools = create_memory_tools(memory.services, "lea")
    text, results = run_tool_loop(model, tools, [HumanMessage("覚えてる？")])
    made = [r for r in results if r.status == "success"]
    assert len(made) == MAX_TOOL_CALLS and "limit" in results[-1].content and text == ""
    assert len(model.rounds) == MAX_TOOL_CALLS + 2  # the limit answered once, then no more rounds
    # the memory context: primed sections when the run primed, else the recalled items
    recalled = [{"date": "2026-09-10", "tiers": ["archive"], "text": "紅茶にした"}]
    assert memory_context({"primed": {"text": "## profile\n- 紅茶"}, "recalled": recalled}) == "## profile\n- 紅茶"
    assert memory_context({"recalled": recalled}) == "- [2026-09-10, archive] 紅茶にした"
    assert memory_context({"primed": {"text": ""}, "recalled": recalled}) == "- [2026-09-10, archive] 紅茶にした"
