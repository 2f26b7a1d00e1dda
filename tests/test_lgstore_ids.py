"""The LangGraph store refuses, in a namespace that names a user, the user ids the rest of the product refuses
(stores.lgstore_users on stores.ids.validate_id), so no look-alike namespace sits beside a user's where erasing
the user would not reach it; labels elsewhere stay LangGraph's free text (its own suites rely on that)."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.store.base import InvalidNamespaceError

from lumina_memory.graphs.lumina_store import make_store
from lumina_memory.nodes.text.embedder import make_embedder
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.lgstore_users import check_user_label, user_label
from lumina_memory.stores.places.lgstore_place import LuminaStorePlace

from .conftest import make_settings

# A trailing newline, a Cyrillic 'а', SQL, the item-id separator, a glob, a path.
HOSTILE = ["alice\n", "\u0430lice", "' OR 1=1 --", "alice|b", "*", "../x"]
# LangGraph's own check refuses a '.' in a label when it writes (InvalidNamespaceError, naming the label);
# ours answers the rest, naming the field.
REFUSED = (InvalidInput, InvalidNamespaceError)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    settings = make_settings(tmp_path_factory.mktemp("lgstore-ids"))
    with make_store(settings, embedder=make_embedder(settings)) as opened:
        yield opened


def _holds_label(store, label: str) -> bool:
    return any(label in ns for ns in store.list_namespaces(limit=1_000))


@pytest.mark.parametrize("label", HOSTILE)
def test_a_user_label_the_product_refuses_is_refused_by_the_store(store, label):
    namespace = ("memories", label)
    with pytest.raises(REFUSED) as err:
        store.put(namespace, "k", {"text": "a note filed beside alice's"})
    assert "names a user" in str(err.value) if err.type is InvalidInput else "'../x'" in str(err.value)
    with pytest.raises(REFUSED):
        asyncio.run(store.aput(namespace, "k", {"text": "the same through the async API"}))
    with pytest.raises(REFUSED) as err:
        store.get(namespace, "k")
    assert err.type is InvalidNamespaceError or err.value.field == "namespace"
    with pytest.raises(REFUSED) as err:
        store.search(namespace, query="note")
    assert err.type is InvalidNamespaceError or err.value.field == "namespace_prefix"
    with pytest.raises(REFUSED):  # deeper namespaces under the same user label too
        store.put((*namespace, "episodes"), "k", {"text": "t"})
    assert not _holds_label(store, label)


def test_erasing_alice_leaves_nothing_of_her_in_any_namespace(store):
    store.put(("memories", "alice"), "tea", {"text": "Alice drinks genmaicha"})
    store.put(("memories", "alice", "episodes"), "trip", {"text": "Alice hiked the Kumano Kodo"})
    store.put(("alice", "profile"), "name", {"text": "Alice"})
    store.put(("memories", "bob"), "tea", {"text": "Bob drinks sencha"})
    for label in HOSTILE:
        with pytest.raises(REFUSED):
            store.put(("memories", label), "tea", {"text": "Alice drinks hojicha"})
    place = LuminaStorePlace(store)
    assert place.count("alice") == 3
    assert place.erase("alice") == 3
    assert place.count("alice") == 0
    left = store.list_namespaces(limit=1_000)
    assert ("memories", "bob") in left
    assert not [ns for ns in left if any("lice" in label for label in ns)], left
    assert [i.value["text"] for i in store.search(("memories",), query="tea", limit=10)] == ["Bob drinks sencha"]
    store.delete(("memories", "bob"), "tea")


def test_labels_outside_a_user_root_stay_free_text_and_a_delete_is_let_through(store):
    store.put(("users", "alice\n"), "k", {"v": 2})  # LangGraph's SqliteStore suite puts this one
    assert store.get(("users", "alice\n"), "k").value == {"v": 2}
    assert store.list_namespaces(suffix=("alice",)) == []
    store.delete(("users", "alice\n"), "k")
    store.delete(("memories", "alice\n"), "k")  # an item written before the check must stay removable
    assert store.list_namespaces(prefix=("users",)) == []


def test_which_label_names_a_user():
    assert user_label(("memories", "alice")) == "alice"
    assert user_label(("memories", "alice", "episodes")) == "alice"
    assert user_label(("memories",)) is None and user_label(("alice", "profile")) is None
    check_user_label(("users", "alice\n"), "namespace")  # not a user root by default
    with pytest.raises(InvalidInput, match="names a user under 'users'"):
        check_user_label(("users", "alice\n"), "namespace", roots=("memories", "users"))
