"""The knowledge, procedure and knowledge-base tables on both engines (issue 47's server mode): the same shared
SQL on an embedded DuckDB file and on a real private PostgreSQL."""

from __future__ import annotations

from lumina_memory.stores.kb_duckdb import BASES, CHUNKS, DOCUMENTS, KBCatalog
from lumina_memory.stores.knowledge_duckdb import KNOWLEDGE, KnowledgeTable
from lumina_memory.stores.procedures_duckdb import PROCEDURES, ProcedureTable

from .sql_engines import pg_server, pg_uri, sql_db, sql_pair  # noqa: F401 - fixtures


def test_the_schemas_open_twice_and_record_one_step_each(sql_db):
    for _ in range(2):  # the second open finds every step applied
        KnowledgeTable(sql_db), ProcedureTable(sql_db), KBCatalog(sql_db)
    with sql_db.read() as con:
        steps = con.execute("SELECT component, step FROM lumina_migrations WHERE component IN "
                            "('knowledge', 'procedures', 'kb') ORDER BY component").fetchall()
        for table in (KNOWLEDGE, PROCEDURES, BASES, DOCUMENTS, CHUNKS):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert steps == [("kb", 1), ("knowledge", 1), ("procedures", 1)]
