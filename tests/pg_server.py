"""A real private PostgreSQL with pgvector for the server-mode tests (stores.postgres_server).

One server per test process (an xdist worker), in a temporary folder, on a unix socket only; each test that
asks for ``pg_uri`` gets a database of its own, dropped afterwards. A server that does not start fails the
tests, never skips them.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from lumina_memory.stores.postgres_server import PrivatePostgres, start_private_postgres

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory) -> Iterator[PrivatePostgres]:
    server = start_private_postgres(tmp_path_factory.mktemp("postgres"))
    try:
        yield server
    finally:
        server.stop()


def fresh_database(server: PrivatePostgres) -> tuple[str, str]:
    """(name, uri) of a new empty database with pgvector on ``server``."""
    name = f"t{os.getpid()}_{next(_names)}"
    return name, server.create_database(name)


@pytest.fixture
def pg_uri(pg_server: PrivatePostgres) -> Iterator[str]:
    """A database of this test's own on the private server."""
    name, uri = fresh_database(pg_server)
    try:
        yield uri
    finally:
        pg_server.drop_database(name)
