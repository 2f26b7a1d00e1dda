"""The archive's connection on each engine, for table tests that must behave the same on both.

``sql_db`` is a ``SqlConnection``: an embedded DuckDB file (``GuardedConnection``) or a database of the test's
own on the private PostgreSQL (``PostgresConnection``). ``sql_pair`` is two connections on one PostgreSQL
database: two processes sharing one memory. Each fixture makes and drops its database itself, so its
connections are closed before the database goes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from lumina_memory.stores.duckdb_connection import GuardedConnection
from lumina_memory.stores.pg_connection import PostgresConnection

from .pg_server import fresh_database, pg_server  # noqa: F401 - the session's server

ENGINES = ["duckdb", "postgres"]


def _postgres(stack: ExitStack, request, count: int) -> list[PostgresConnection]:
    server = request.getfixturevalue("pg_server")
    name, uri = fresh_database(server)
    stack.callback(server.drop_database, name)
    connections = []
    for _ in range(count):
        connections.append(PostgresConnection(uri, "archive"))
        stack.callback(connections[-1].close)
    return connections


@pytest.fixture(params=ENGINES)
def sql_db(request, tmp_path) -> Iterator[GuardedConnection | PostgresConnection]:
    with ExitStack() as stack:
        if request.param == "duckdb":
            db = GuardedConnection(str(tmp_path / "archive.duckdb"), str(tmp_path), "archive", ())
            stack.callback(db.close)
        else:
            (db,) = _postgres(stack, request, 1)
        yield db


@pytest.fixture
def sql_pair(request) -> Iterator[tuple[PostgresConnection, PostgresConnection]]:
    """Two PostgreSQL connections on one database: what one writes, the other reads."""
    with ExitStack() as stack:
        first, second = _postgres(stack, request, 2)
        yield first, second
