"""Run LangGraph's own store suites (test_*_suite.py here) on LuminaStore, and say what they found.

- Each test gets its own data-directory root (on tmpfs when there is one, else under ``tmp_path``); the
  stand-in stores it opened are closed after it, and the root removed. In a wrapper module with
  ``BACKEND = "postgres"`` the stores' items and vectors are in databases of the private PostgreSQL
  (tests.pg_server), dropped after the test.
- The suites' coroutine tests run on anyio's pytest plugin (each module is marked ``anyio``; the asyncio
  backend only), in place of pytest-asyncio's auto mode that LangGraph's own configuration uses.
- Their markers (``asyncio``, ``flaky``) are registered. ``flaky`` asks pytest-retry for retries; without
  that plugin nothing is retried, so a timing-sensitive test must pass on its first run here.
- A wrapper module's ``DESELECTED`` (test name → why it cannot apply) is deselected, counted as such.
- At the end, a summary per file: passed, failed, deselected, and how many tests opened a LuminaStore.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from ..pg_server import pg_server  # noqa: F401 - the PostgreSQL wrappers' server
from . import stand_ins

HERE = Path(__file__).parent
# On a test's report (user_properties travel from an xdist worker to the summary): it opened a LuminaStore.
OPENED = ("opened_lumina_store", True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "asyncio: a coroutine test (LangGraph's suites; run here by anyio)")
    config.addinivalue_line("markers", "flaky(retries): retries under pytest-retry; not installed here, so none")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _stand_in_stores(request: pytest.FixtureRequest, tmp_path: Path):
    # On tmpfs when the machine has one: the engines sync their files to disk, and the suites open ~250
    # stores (0.8 s each on disk here, 0.09 s on tmpfs). Same engines, same files, another filesystem.
    shm = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="lumina-upstream-", dir=shm)) if os.access(shm, os.W_OK) else tmp_path
    on_postgres = getattr(request.module, "BACKEND", "duckdb") == "postgres"
    stand_ins.begin_test(root / "lumina", request.getfixturevalue("pg_server") if on_postgres else None)
    try:
        yield
    finally:
        stand_ins.end_test()
        if root != tmp_path:
            shutil.rmtree(root, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    if call.when == "call" and stand_ins._Session.opened and OPENED not in item.user_properties:
        item.user_properties.append(OPENED)
    yield


def _suite_file(item: pytest.Item) -> Path | None:
    path = Path(str(item.path))
    return path if path.parent == HERE and path.name.endswith("_suite.py") else None


def _test_name(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[1].split("[", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        deselected = getattr(item.module, "DESELECTED", {}) if _suite_file(item) else {}
        (dropped if _test_name(item) in deselected else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    per_file: dict[str, Counter] = {}
    for outcome in ("passed", "failed", "error", "skipped", "deselected"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if not nodeid.startswith("tests/upstream_store/") or "_suite.py::" not in nodeid:
                continue
            counts = per_file.setdefault(nodeid.split("::", 1)[0], Counter())
            counts[outcome] += 1
            counts["store"] += outcome == "passed" and OPENED in getattr(report, "user_properties", [])
    if not per_file:
        return
    terminalreporter.section("LangGraph's own store suites on LuminaStore")
    for path, counts in sorted(per_file.items()):
        ran = counts["passed"] + counts["failed"] + counts["error"] + counts["skipped"]
        terminalreporter.line(
            f"{Path(path).name}: {counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors, "
            f"{counts['skipped']} skipped of {ran} run; {counts['deselected']} deselected; "
            f"{counts['store']} of the passed opened a LuminaStore")
