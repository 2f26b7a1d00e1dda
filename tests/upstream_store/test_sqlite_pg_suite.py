"""LangGraph's SqliteStore suite (test_sqlite_suite.py) again, LuminaStore in server mode: every store the suite opens
keeps its items and vectors in a database of its own on the private server (stand_ins.py)."""

import pytest

from .suites import SQLITE, load
from .test_sqlite_suite import DESELECTED  # noqa: F401 - the same tests cannot apply, for the same reasons

globals().update(load(SQLITE))

pytestmark = pytest.mark.anyio
BACKEND = "postgres"
