"""LangGraph's SqliteStore suite — langgraph-checkpoint-sqlite's tests/test_store.py at the installed
version, fetched from its sdist — run unchanged on LuminaStore: the ``SqliteStore`` its fixtures and
tests open is ours (stand_ins.py)."""

import pytest

from .suites import SQLITE, load

globals().update(load(SQLITE))

pytestmark = pytest.mark.anyio
# Tests of SqliteStore's own machinery, not of a store's behaviour (one line each: why it cannot apply).
DESELECTED: dict[str, str] = {
    "test_vector_store_initialization": "ends by listing SqliteStore's vector tables through store.conn "
                                        "(sqlite_master); its index_config/embeddings checks pass in the async suite",
    "test_nonnull_migrations": "checks the statements of SqliteStore.MIGRATIONS, SqliteStore's SQL schema",
    "test_sql_injection_vulnerability": "expects SqliteStore's guard on SQL built from filter keys (only "
                                        "[A-Za-z0-9_.-] allowed); ours builds no SQL from keys and accepts any "
                                        "field name — tests/test_langgraph_store.py sends the same key",
}
