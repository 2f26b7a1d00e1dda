"""The lifecycle, semantic and turn-read tables on both engines: an embedded DuckDB file and a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lumina_memory.stores.duckdb_connection import GuardedConnection
from lumina_memory.stores.memories_duckdb import MemoryTable
from lumina_memory.stores.pg_connection import PostgresConnection
from lumina_memory.stores.semantic_duckdb import SemanticTable
from lumina_memory.stores.sql_connection import SqlConnection
from lumina_memory.stores.turn_reads_duckdb import TurnReadsTable
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures


@pytest.fixture(params=["duckdb", "postgres"])
def engine(request, tmp_path) -> Iterator[tuple[str, str]]:
    """(dialect, database): a DuckDB file in tmp_path, or a fresh PostgreSQL database."""
    if request.param == "duckdb":
        yield "duckdb", str(tmp_path / "archive.duckdb")
    else:
        yield "postgres", request.getfixturevalue("pg_uri")


def connect(engine: tuple[str, str], tmp_path) -> SqlConnection:
    dialect, database = engine
    if dialect == "duckdb":
        return GuardedConnection(database, str(tmp_path), "archive", ())
    return PostgresConnection(database, "archive")


@pytest.fixture
def db(engine, tmp_path) -> Iterator[SqlConnection]:
    con = connect(engine, tmp_path)
    try:
        yield con
    finally:
        con.close()


def test_tables_open_on_both_engines_and_again(engine, tmp_path, db):
    MemoryTable(db), SemanticTable(db), TurnReadsTable(db)
    MemoryTable(db), SemanticTable(db), TurnReadsTable(db)  # step 1 applied once, a second open is a no-op
    with db.read() as con:
        steps = con.execute("SELECT component, step FROM lumina_migrations WHERE component IN "
                            "('memories', 'semantic', 'turn_reads') ORDER BY component").fetchall()
        assert steps == [("memories", 1), ("semantic", 1), ("turn_reads", 1)]
        for table in ("memories", "memory_relations", "lifecycle_days", "memory_forgotten", "lifecycle_outbox",
                      "semantic_memories", "turn_reads"):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
