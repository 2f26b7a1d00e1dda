"""Tenant isolation against hostile callers (issue 16): ids that are almost another user's, queries over the
limit, and another user's ids answered as "not found" — never "forbidden", never with the data."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.graphs.inspect import source_turns
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput

from .conftest import make_settings

TS = 1_790_000_000
ALICE = [("user", "アリスの猫はモカという名前で三歳です"), ("lumina", "モカちゃん、かわいいね"),
         ("user", "アリスは毎朝五時に起きてジョギングする")]


@pytest.fixture(scope="module")
def two_users(tmp_path_factory):
    from .conftest import Memory

    mem = Memory(tmp_path_factory.mktemp("iso"))
    for user, turns in (("alice", ALICE), ("alice2", [("user", "別の人の話：犬を飼っている")])):
        config = {"configurable": {"thread_id": f"user:{user}"}}
        ctx = {"user_id": user, "respond": False}
        for i, (speaker, text) in enumerate(turns):
            mem.graph.invoke({"turn": {"speaker": speaker, "text": text, "ts": TS + 60 * i}}, config, context=ctx)
        mem.graph.invoke({"flush": True}, config, context=ctx)
    yield mem
    mem.close()


@pytest.mark.parametrize("value", ["alice\n", "alice\r\n", "\nalice", "alice\x00", "alice ", "ａｌｉｃｅ", "alіce",
                                   "alice*", "alice?", "al[i]ce", "../alice", "alice'--", "a\u202eecila"])
def test_ids_that_look_like_another_users_are_refused(value):
    with pytest.raises(InvalidInput) as err:
        ids.validate_id(value, "user_id")
    assert err.value.field == "user_id"


def test_a_query_over_the_limit_is_refused_naming_the_field(two_users):
    limit = two_users.settings.max_query_chars
    with pytest.raises(InvalidInput) as err:
        recall(two_users.services, "alice", "猫" * (limit + 1))
    assert err.value.field == "query" and f"{limit:,}" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        recall(two_users.services, "alice", "broken \ud800")
    assert err.value.field == "query"
    with pytest.raises(InvalidInput) as err:
        recall(two_users.services, "alice\n", "猫の名前は？")
    assert err.value.field == "user_id"
    assert recall(two_users.services, "alice", "猫" * limit) is not None  # at the limit: answered


def test_another_users_ids_are_not_found(two_users):
    services = two_users.services
    items = recall(services, "alice", "アリスの猫の名前は？")
    episode = next(i for i in items if i["kind"] == "episode")  # facts (issue 18) may lead; they show the fact alone
    assert "モカ" in episode["text"]
    turn_ids, segment_ids = episode["turn_ids"], [episode["segment_id"]]
    # the same ids asked for by another user (a prefix of alice's id, too): nothing, and no error
    for other in ("alice2", "bob", "alic"):
        assert services.stores.archive.get_turns(other, turn_ids) == []
        assert services.stores.vectors.get(other, segment_ids) == []
        assert source_turns(services, other, items[0]) == []
        assert all("モカ" not in item["text"] for item in recall(services, other, "アリスの猫の名前は？"))
    assert len(services.stores.archive.get_turns("alice", turn_ids)) == len(turn_ids)


def test_a_thread_of_another_user_is_not_found(two_users):
    with pytest.raises(InvalidInput) as err:
        two_users.graph.invoke({"messages": [HumanMessage("猫の名前は？")]},
                               {"configurable": {"thread_id": "user:alice"}}, context={"user_id": "alice2"})
    assert err.value.field == "thread_id" and "not found" in str(err.value)
    assert "forbidden" not in str(err.value).lower() and "alice'" not in str(err.value)


def test_store_items_of_another_namespace_are_not_found(tmp_path):
    from lumina_memory.graphs.lumina_store import make_store
    from lumina_memory.nodes.text.embedder import make_embedder

    settings = make_settings(tmp_path)
    with make_store(settings, embedder=make_embedder(settings)) as store:
        store.put(("memories", "alice"), "cat", {"text": "Alice's cat is called Mocha"})
        assert store.get(("memories", "alice2"), "cat") is None
        assert store.get(("memories", "alic"), "cat") is None
        assert store.search(("memories", "alic"), query="cat") == []
        store.delete(("memories", "bob"), "cat")  # deleting what bob does not have: nothing happens, no error
        assert store.get(("memories", "alice"), "cat") is not None
