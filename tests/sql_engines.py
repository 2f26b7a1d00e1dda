"""The archive's connection on each engine, for table tests that must behave the same on both.

``sql_db`` is a ``SqlConnection``: an embedded DuckDB file (``GuardedConnection``) or a database of the test's
own on the private PostgreSQL (``PostgresConnection``). ``sql_pair`` is two connections on one database (two
processes sharing one memory on PostgreSQL; the same connection twice on DuckDB, which one process owns).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lumina_memory.stores.duckdb_connection import GuardedConnection
from lumina_memory.stores.pg_connection import PostgresConnection

from .pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

ENGINES = ["duckdb", "postgres"]


def open_sql(engine: str, tmp_path, request) -> GuardedConnection | PostgresConnection:
    if engine == "duckdb":
        return GuardedConnection(str(tmp_path / "archive.duckdb"), str(tmp_path), "archive", ())
    return PostgresConnection(request.getfixturevalue("pg_uri"), "archive")


@pytest.fixture(params=ENGINES)
def sql_db(request, tmp_path) -> Iterator[GuardedConnection | PostgresConnection]:
    db = open_sql(request.param, tmp_path, request)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def sql_pair(request, tmp_path) -> Iterator[tuple]:
    """Two PostgreSQL connections on one database: what one writes, the other reads."""
    uri = request.getfixturevalue("pg_uri")
    first, second = PostgresConnection(uri, "archive"), PostgresConnection(uri, "archive")
    try:
        yield first, second
    finally:
        first.close()
        second.close()
