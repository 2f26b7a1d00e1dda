"""Knowledge retention (``LUMINA_RETENTION_KNOWLEDGE_DAYS``) takes the undo log's entries of the facts it deletes:
an entry left behind would name a fact nothing can bring back (`undo` would report it remembered again). Real
stores, embedded and PostgreSQL; the conversation's clock passed in."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.retention import enforce_retention

from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from .test_knowledge_forgetting import DAY, T0, USER, _tell

pytestmark = pytest.mark.slow  # replays a conversation on each engine


@pytest.fixture(params=["duckdb", "postgres"])
def server(request) -> dict:
    return ({"database_url": request.getfixturevalue("pg_uri"), "secret_key": "undo-knowledge-secret-0123456789abcdef"}
            if request.param == "postgres" else {})


def test_retention_drops_the_undo_entries_of_the_facts_it_deletes(server, memory_factory):
    mem = memory_factory(retention_knowledge_days=20, **server)
    services = mem.services
    _tell(mem)
    items = services.stores.archive.knowledge.items(USER, history=True)
    old = sorted(r["item_id"] for r in items if r["said_at"] < T0 + 5 * DAY)
    new = sorted(r["item_id"] for r in items if r["said_at"] >= T0 + 5 * DAY)
    assert old and new
    undo = services.stores.archive.memories.undo
    # As the monthly knowledge forgetting keeps them (nodes.knowledge.forgetting.forget_idle).
    assert undo.record_facts([(USER, i) for i in old + new], day=1, now=T0 + 24 * DAY) == len(old + new)
    enforce_retention(services, now=T0 + 25 * DAY)
    assert sorted(e["target_id"] for e in undo.entries(USER)) == new
