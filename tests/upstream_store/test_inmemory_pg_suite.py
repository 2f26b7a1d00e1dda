"""LangGraph's InMemoryStore suite (test_inmemory_suite.py) again, LuminaStore's items on PostgreSQL: every store the suite
opens keeps its items in a database of its own on the private server (stand_ins.py)."""

import pytest

from .suites import CHECKPOINT, load

globals().update(load(CHECKPOINT))

pytestmark = pytest.mark.anyio
BACKEND = "postgres"
DESELECTED: dict[str, str] = {}
