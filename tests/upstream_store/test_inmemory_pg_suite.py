"""LangGraph's InMemoryStore suite (test_inmemory_suite.py) again, LuminaStore in server mode: every store the suite
opens keeps its items and vectors in a database of its own on the private server (stand_ins.py)."""

import pytest

from .suites import CHECKPOINT, load

globals().update(load(CHECKPOINT))

pytestmark = pytest.mark.anyio
BACKEND = "postgres"
DESELECTED: dict[str, str] = {}
