"""LangGraph's InMemoryStore suite — langgraph-checkpoint's tests/test_store.py at the installed version,
fetched from its sdist — run unchanged on LuminaStore: the ``InMemoryStore`` its tests construct is ours
(stand_ins.py). Its tests of LangGraph's base library (path extraction, op validation, the async batcher
over a mock store) run too; the summary at the end says how many of the passed opened a LuminaStore."""

import pytest

from .suites import CHECKPOINT, load

globals().update(load(CHECKPOINT))

pytestmark = pytest.mark.anyio
DESELECTED: dict[str, str] = {}
