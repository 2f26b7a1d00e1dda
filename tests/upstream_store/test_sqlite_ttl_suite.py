"""LangGraph's store TTL suite — langgraph-checkpoint-sqlite's tests/test_ttl.py at the installed
version, fetched from its sdist — run unchanged on LuminaStore: the ``SqliteStore`` and
``AsyncSqliteStore`` it opens are ours (stand_ins.py). Its tests sleep through real TTLs (~40 s)."""

import pytest

from .suites import SQLITE_TTL, load

globals().update(load(SQLITE_TTL))

pytestmark = pytest.mark.anyio
DESELECTED: dict[str, str] = {}
