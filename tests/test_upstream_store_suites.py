"""The harness that runs LangGraph's own store suites on LuminaStore (tests/upstream_store): it fetches the
sdists of the installed versions once, fails loudly when it cannot, swaps only the store class, and
deselects nothing it does not name with a reason. The suites themselves run as
tests/upstream_store/test_*_suite.py."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from lumina_memory.stores.langgraph_store import LuminaStore
from tests.upstream_store import fetch as fetch_module, stand_ins
from tests.upstream_store.fetch import CACHE, FetchError, fetch, installed_version
from tests.upstream_store.suites import CHECKPOINT, SQLITE, SQLITE_ASYNC, SQLITE_TTL, Suite, load

# The suites' own marks (asyncio, flaky) are registered by tests/upstream_store/conftest.py, which a run of
# this file alone does not load; importing the suites here must not warn about them.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
WRAPPERS = {"test_inmemory_suite": CHECKPOINT, "test_sqlite_suite": SQLITE,
            "test_sqlite_async_suite": SQLITE_ASYNC, "test_sqlite_ttl_suite": SQLITE_TTL}
WRAPPERS |= {name.replace("_suite", "_pg_suite"): suite for name, suite in WRAPPERS.items()}  # items on PostgreSQL


def test_the_installed_versions_are_fetched_once_and_reused(monkeypatch):
    downloads = []
    download = fetch_module._download
    monkeypatch.setattr(fetch_module, "_download", lambda *args: downloads.append(args) or download(*args))
    for distribution in ("langgraph-checkpoint", "langgraph-checkpoint-sqlite"):
        version = installed_version(distribution)
        path = fetch(distribution)
        fetched = len(downloads)
        assert path == CACHE / f"{distribution}-{version}"
        assert (path / "tests" / "test_store.py").is_file() and (path / "PKG-INFO").is_file()
        assert f"Version: {version}" in (path / "PKG-INFO").read_text(encoding="utf-8")
        assert not (path / "langgraph").exists()  # only the tests and the metadata are kept
        assert fetch(distribution) == path and len(downloads) == fetched  # the second fetch downloaded nothing
    assert (CACHE.parent / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_a_cached_copy_is_used_without_the_network(tmp_path):
    copy = tmp_path / "langgraph-checkpoint-0.0.1" / "tests"
    copy.mkdir(parents=True)
    assert fetch("langgraph-checkpoint", "0.0.1", cache=tmp_path) == copy.parent


def test_a_failed_download_raises_with_pips_words(tmp_path):
    with pytest.raises(FetchError) as err:
        fetch("langgraph-checkpoint", "0.0.0.post987654", cache=tmp_path)
    assert "langgraph-checkpoint==0.0.0.post987654" in str(err.value)
    assert not (tmp_path / "langgraph-checkpoint-0.0.0.post987654").exists()


def test_a_suite_that_cannot_be_loaded_fails_instead_of_vanishing():
    names = load(Suite("langgraph-checkpoint", "test_no_such_file", {}))
    assert list(names) == ["test_upstream_suite_is_available"]
    with pytest.raises(AssertionError, match="test_no_such_file"):
        names["test_upstream_suite_is_available"]()
    renamed = load(Suite("langgraph-checkpoint", "test_store", {"NoSuchStore": stand_ins.InMemoryStore}))
    assert list(renamed) == ["test_upstream_suite_is_available"]


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_each_suite_runs_on_our_store_and_names_what_it_deselects(wrapper):
    module = importlib.import_module(f"tests.upstream_store.{wrapper}")
    suite = WRAPPERS[wrapper]
    assert "test_upstream_suite_is_available" not in vars(module)
    tests = {name for name, obj in vars(module).items() if name.startswith("test") and callable(obj)}
    assert len(tests) >= 5
    for name, stand_in in suite.swaps.items():
        assert getattr(module, name) is stand_in and issubclass(stand_in, LuminaStore)
        upstream = sys.modules[next(vars(module)[t].__module__ for t in sorted(tests)
                                    if vars(module)[t].__module__.startswith("upstream_"))]
        assert getattr(upstream, name) is stand_in  # the test bodies look the name up there
    deselected = module.DESELECTED
    assert set(deselected) <= tests, set(deselected) - tests  # a renamed upstream test must not linger here
    assert all(len(reason) > 40 for reason in deselected.values())
    assert len(deselected) <= 3


def test_the_stand_ins_are_the_store_make_store_gives(tmp_path):
    stand_ins.begin_test(tmp_path)
    try:
        store = stand_ins.InMemoryStore()
        store.put(("a",), "k", {"text": "hello"})
        assert isinstance(store, stand_ins.store_class(stand_ins.make_settings(Path("."))))
        assert store.supports_ttl and store.search(("a",), query="hello")[0].score > 0.9
        with stand_ins.SqliteStore.from_conn_string(str(tmp_path / "db")) as first:
            first.setup()
            first.put(("a",), "k", {"v": 1})
        with stand_ins.SqliteStore.from_conn_string(str(tmp_path / "db")) as again:  # a path persists
            assert again.get(("a",), "k").value == {"v": 1}
        with stand_ins.SqliteStore.from_conn_string(":memory:") as fresh:  # ":memory:" starts empty
            assert fresh.get(("a",), "k") is None
    finally:
        assert stand_ins.end_test() == 4
