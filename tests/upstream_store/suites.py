"""Load one of LangGraph's store test files (fetched by tests.upstream_store.fetch) with its store swapped.

A suite file is imported as it is, through pytest's import hook (so its asserts are rewritten and report
their values), as ``upstream_<distribution>_<version>.<file>``. The files import their siblings as
``tests.<sibling>`` (their own package is named ``tests`` too); those names point at the siblings while a
file is imported, and at ours again after. Then the names the file builds its store by —
``InMemoryStore``, ``SqliteStore``, ``AsyncSqliteStore`` — are rebound to the stand-ins (stand_ins.py).
Nothing else in the file changes: its fixtures, helpers and test bodies run as LangGraph wrote them.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import stand_ins
from .fetch import FetchError, fetch, installed_version


@dataclass(frozen=True)
class Suite:
    distribution: str
    file: str  # in the sdist's tests/ folder
    swaps: Mapping[str, type]  # the file's name for a store class → its stand-in
    siblings: tuple[str, ...] = field(default=())  # files it imports as tests.<name>


CHECKPOINT = Suite("langgraph-checkpoint", "test_store", {"InMemoryStore": stand_ins.InMemoryStore},
                   ("embed_test_utils",))
SQLITE = Suite("langgraph-checkpoint-sqlite", "test_store", {"SqliteStore": stand_ins.SqliteStore})
SQLITE_ASYNC = Suite("langgraph-checkpoint-sqlite", "test_async_store",
                     {"AsyncSqliteStore": stand_ins.AsyncSqliteStore}, ("test_store",))
SQLITE_TTL = Suite("langgraph-checkpoint-sqlite", "test_ttl",
                   {"SqliteStore": stand_ins.SqliteStore, "AsyncSqliteStore": stand_ins.AsyncSqliteStore})


def load(suite: Suite) -> dict[str, Any]:
    """The suite module's names, store classes swapped — or, when it cannot be fetched or imported, one
    test that fails saying why (the suite must never pass by not running)."""
    try:
        module = _import(suite)
    except (FetchError, ImportError, SyntaxError) as exc:
        return {"test_upstream_suite_is_available": _failing(suite, exc)}
    for name, stand_in in suite.swaps.items():
        if not isinstance(getattr(module, name, None), type):
            return {"test_upstream_suite_is_available": _failing(suite, LookupError(
                f"{suite.file}.py no longer has the store class {name!r}: update tests/upstream_store/suites.py"))}
        setattr(module, name, stand_in)
    return {k: v for k, v in vars(module).items() if not k.startswith("__")}


def _import(suite: Suite) -> types.ModuleType:
    version = installed_version(suite.distribution)
    root = fetch(suite.distribution, version)
    package = f"upstream_{suite.distribution}_{version}".replace("-", "_").replace(".", "_")
    if package not in sys.modules:
        parent = types.ModuleType(package, f"tests/ of the {suite.distribution} {version} sdist")
        parent.__path__ = [str(root / "tests")]
        sys.modules[package] = parent
    siblings = {f"tests.{name}": importlib.import_module(f"{package}.{name}") for name in suite.siblings}
    saved = {name: sys.modules.get(name) for name in siblings}
    sys.modules.update(siblings)
    try:
        return importlib.import_module(f"{package}.{suite.file}")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _failing(suite: Suite, exc: BaseException):
    message = f"LangGraph's {suite.distribution} tests/{suite.file}.py could not be loaded: {exc}"

    def test_upstream_suite_is_available() -> None:
        raise AssertionError(message)

    return test_upstream_suite_is_available
