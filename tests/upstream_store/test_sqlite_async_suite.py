"""LangGraph's AsyncSqliteStore suite — langgraph-checkpoint-sqlite's tests/test_async_store.py at the
installed version, fetched from its sdist — run unchanged on LuminaStore's async API: the
``AsyncSqliteStore`` its fixtures open is ours (stand_ins.py)."""

import pytest

from .suites import SQLITE_ASYNC, load

globals().update(load(SQLITE_ASYNC))

pytestmark = pytest.mark.anyio
# One line each: why the test cannot apply to LuminaStore.
DESELECTED: dict[str, str] = {
    "test_no_running_loop": "AsyncSqliteStore is async-only and refuses sync calls on its event loop's thread; "
                            "LuminaStore serves sync callers on any thread",
}
