"""LuminaStore against hostile namespaces and keys, and its limits (issue 16).

Item ids were uuid5 of ``namespace|key`` joined with '|', which labels and keys may contain: a caller
reached another namespace's item by moving a '|' between the last label and the key. Under a namespace that
names a user (``("memories", user_id)``) such a label is refused outright (tests/test_lgstore_ids.py); the
labels of other namespaces are free text, where the ids must keep them apart."""

from __future__ import annotations

import uuid

import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp

from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.langgraph_store import ITEM_FIELD
from lumina_memory.stores.lgstore_ids import item_id, legacy_rows
from lumina_memory.stores.vector_filters import Match

from .conftest import make_settings

ALICE_NS, ALICE_KEY = ("notes", "alice"), "note|1"
HOSTILE_NS, HOSTILE_KEY = ("notes", "alice|note"), "1"
SECRET = {"text": "Alice's diary: the spare key is under the blue flowerpot"}


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return make_embedder(make_settings(tmp_path_factory.mktemp("emb")))


@pytest.fixture
def open_store(tmp_path, embedder):
    opened = []

    def open_(**overrides):
        store = make_store(make_settings(tmp_path / "data", **overrides), embedder=embedder)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


def test_ids_are_injective_on_the_separator():
    assert item_id(ALICE_NS, ALICE_KEY) != item_id(HOSTILE_NS, HOSTILE_KEY)
    assert item_id(("a|b",), "c") != item_id(("a",), "b|c")
    assert item_id(("a", "b|"), "c") != item_id(("a", "b"), "|c")
    # ids without a '|' are those of the first scheme: rows written before keep theirs
    legacy = str(uuid.uuid5(ids.NAMESPACE, "lgstore|notes.alice|note-1"))
    assert item_id(ALICE_NS, "note-1") == legacy


def test_a_moved_separator_reaches_nothing_of_another_namespace(open_store):
    store = open_store()
    store.put(ALICE_NS, ALICE_KEY, SECRET)
    assert store.get(HOSTILE_NS, HOSTILE_KEY) is None  # not found, as any absent item
    store.put(HOSTILE_NS, HOSTILE_KEY, {"text": "mallory was here"})
    assert store.get(ALICE_NS, ALICE_KEY).value == SECRET  # not overwritten
    store.delete(HOSTILE_NS, HOSTILE_KEY)
    assert store.get(ALICE_NS, ALICE_KEY).value == SECRET  # not deleted
    assert store.get(HOSTILE_NS, HOSTILE_KEY) is None
    # a search under the hostile namespace sees nothing of alice's
    assert store.search(HOSTILE_NS, query="spare key flowerpot") == []
    assert [i.key for i in store.search(ALICE_NS, query="spare key flowerpot")] == [ALICE_KEY]
    with pytest.raises(InvalidInput):  # where the label names a user, the '|' itself is refused
        store.put(("memories", "alice|note"), HOSTILE_KEY, {"text": "mallory was here"})


def test_items_of_the_first_id_scheme_are_rekeyed_when_the_store_opens(open_store):
    store = open_store()
    old_id = str(uuid.uuid5(ids.NAMESPACE, f"lgstore|{'.'.join(ALICE_NS)}|{ALICE_KEY}"))  # the first scheme
    store._apply({old_id: PutOp(ALICE_NS, ALICE_KEY, SECRET)})  # what the store wrote before issue 16
    store.put(("memories", "bob"), "plain", {"text": "Bob likes green tea"})
    assert len(legacy_rows(store.items)) == 1
    assert store.get(ALICE_NS, ALICE_KEY) is None  # unreachable under the new scheme until re-keyed
    store.close()

    store = open_store()
    assert legacy_rows(store.items) == []
    assert store.get(ALICE_NS, ALICE_KEY).value == SECRET
    assert store.items.get([old_id]) == {}
    assert store.vectors.count_where([Match(ITEM_FIELD, (old_id,))]) == 0
    assert store.vectors.count_where([Match(ITEM_FIELD, (item_id(ALICE_NS, ALICE_KEY),))]) == 1
    hits = store.search(("notes",), query="spare key under the blue flowerpot", limit=1)
    assert hits[0].key == ALICE_KEY and hits[0].score > 0.5  # found by its re-indexed vector too
    assert store.get(("memories", "bob"), "plain").value == {"text": "Bob likes green tea"}
    assert store.items.count() == 2


def test_a_long_query_and_a_large_value_are_refused_before_any_work(open_store):
    store = open_store(max_query_chars=100, max_store_value_bytes=2_000)
    store.put(("docs",), "a", {"text": "short"})
    with pytest.raises(InvalidInput) as err:
        store.search(("docs",), query="x" * 101)
    assert err.value.field == "query" and "100" in str(err.value)
    assert len(store.search(("docs",), query="x" * 100)) == 1
    with pytest.raises(InvalidInput) as err:
        store.put(("docs",), "b", {"text": "あ" * 700})  # 2,100 bytes in UTF-8
    assert err.value.field == "value"
    with pytest.raises(InvalidInput):  # in a batch: the put before it is not written either
        store.batch([PutOp(("docs",), "c", {"text": "fine"}), PutOp(("docs",), "d", {"text": "y" * 5_000})])
    assert store.get(("docs",), "b") is None and store.get(("docs",), "c") is None
    assert store.items.count() == 1


def test_hostile_namespace_labels_are_refused_naming_the_field(open_store):
    store = open_store()
    label = "x" * 2_000
    with pytest.raises(InvalidInput) as err:
        store.put(("memories", label), "k", {"text": "t"})
    assert err.value.field == "namespace"
    with pytest.raises(InvalidInput) as err:
        store.search(("memories", label), query="t")
    assert err.value.field == "namespace_prefix"
    with pytest.raises(InvalidNamespaceError, match="NUL"):  # LangGraph's own check names the label
        store.put(("memories", "nul\x00label"), "k", {"text": "t"})
    assert store.items.count() == 0
