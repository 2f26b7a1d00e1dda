"""Cypher, SQL and Redis keys are each built in one module; ids travel as parameters."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for d in ("graphs", "nodes", "stores", "bench") for p in (ROOT / d).rglob("*.py")]


def _offenders(pattern: str, allowed: set[str]) -> list[str]:
    rx = re.compile(pattern)
    return [str(p.relative_to(ROOT)) for p in SOURCES if p.name not in allowed and rx.search(p.read_text("utf-8"))]


def test_cypher_lives_in_the_cypher_module():
    # cypher_backup.py holds the dump/load statements of backups and scrubbing, beside cypher.py; cypher_relations.py
    # and cypher_knowledge.py hold the typed relations' and knowledge items' statements that cypher.py re-exports
    # graph_pg_knowledge.py maps each Cypher statement the shared graph logic sends to its SQL form (PostgresGraph)
    allowed = {"cypher.py", "cypher_backup.py", "cypher_relations.py", "cypher_knowledge.py", "graph_pg_knowledge.py",
               "cypher_repair.py"}  # store upkeep's cross-user edge repair (issue 49), one module for every Cypher engine
    assert _offenders(r"\b(MERGE|DETACH DELETE)\s*\(|MATCH \(\w*:", allowed) == []


def test_sql_lives_in_the_duckdb_adapters():
    # audit.py is the audit table's adapter; places/archive.py erases/exports the archive's user tables
    # memories_duckdb.py is the lifecycle tables' adapter (same file and transactions as the archive)
    # knowledge_duckdb.py is the knowledge items' adapter (issue 18; same file and transactions as the archive)
    # bench/lifecycle_store.py is the lifecycle benchmark's own table (the round trip of the core's columns)
    allowed = {"archive_duckdb.py", "kv_duckdb.py", "audit.py", "archive.py", "memories_duckdb.py", "knowledge_duckdb.py", "semantic_duckdb.py",
               "procedures_duckdb.py",  # procedures (issue 18, A8): same file and transactions as the archive
               "strategies_sql.py",  # S5 decompositions and failure patterns: same file and transactions as the archive
               "kb_duckdb.py",  # knowledge bases' records (issue 20, L5): same file as the archive
               "turn_reads_duckdb.py",  # the recall index's kept reads of turns (issue 19): same file and transactions
               "lifecycle_store.py",
               # the archive's and the lifecycle tables' adapters split by job: their DDL, the outbox, the daily batch
               "archive_schema.py", "archive_outbox.py", "memories_schema.py", "memories_batch.py",
               # the archive's statements written once for both engines, and its tables' rows to/from Parquet
               "archive_sql.py", "parquet_rows.py",
               # the server mode's adapters (issue 47): the connection and its migrations, pgvector collections,
               # the graph's tables, the journal, activity log and small shared documents, user rows' places
               "sql_connection.py", "pg_connection.py", "vectors_pg.py", "vectors_pg_sql.py", "graph_pg_sql.py",
               "graph_pg_knowledge.py", "journal_pg.py", "activity_log_pg.py", "shared_state.py", "pg_user_rows.py",
               "agent_tables_sql.py",  # agents' records (issue 48): one statement module for both engines
               # the undo log of forgetting, operations' cost records and the PostgreSQL graph's edge repair (issue
               # 49): each one statement module for both engines (the graph's: its SQL form of cypher_repair)
               "memory_undo.py", "costs_sql.py", "graph_pg_repair.py"}
    assert _offenders(r"\b(INSERT INTO|DELETE FROM|CREATE TABLE)\b", allowed) == []


def test_redis_keys_are_built_in_ids():
    assert _offenders(r"f[\"']lumina:", {"ids.py"}) == []

