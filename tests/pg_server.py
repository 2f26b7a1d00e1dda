"""A real private PostgreSQL with pgvector for the server-mode tests (stores.postgres_server).

One server per test process (an xdist worker), in a temporary folder, on a unix socket only; each test that
asks for ``pg_uri`` gets a database of its own, dropped afterwards. A server that does not start fails the
tests, never skips them.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lumina_memory.stores.postgres_server import PrivatePostgres, start_private_postgres

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PrivatePostgres]:
    # Not under pytest's basetemp: every pytest session that starts makes /tmp/pytest-of-<user> 0700 again,
    # and the server's own user (pgserver runs it unprivileged) then loses its way to its data directory.
    root = Path(tempfile.mkdtemp(prefix="lumina-pg-"))
    server = start_private_postgres(root)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


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
