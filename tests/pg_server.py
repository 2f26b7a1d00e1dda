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

import psycopg
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


# Every column that PostgreSQL would compress (pglz) is stored as written instead, from the moment its table is
# created: a raw scan of the server's files then sees text as it is, where pglz hides it (a false "nothing
# left") or splices a kept user's id into what reads as an erased one's (a false "her id is still there").
# As the residue tests store DuckDB and Redis uncompressed.
_UNCOMPRESSED = """
CREATE FUNCTION lumina_test_uncompressed() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE made record; col record;
BEGIN
  FOR made IN SELECT objid FROM pg_event_trigger_ddl_commands() WHERE object_type = 'table' LOOP
    FOR col IN SELECT attname FROM pg_attribute WHERE attrelid = made.objid AND attnum > 0
               AND NOT attisdropped AND attstorage IN ('x', 'm') LOOP
      EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET STORAGE EXTERNAL', made.objid::regclass, col.attname);
    END LOOP;
  END LOOP;
END $$;
CREATE EVENT TRIGGER lumina_test_uncompressed ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'ALTER TABLE') EXECUTE FUNCTION lumina_test_uncompressed();
"""


def uncompressed_database(server: PrivatePostgres) -> tuple[str, str]:
    """``fresh_database``, whose tables store every value uncompressed (for tests that read the server's files)."""
    name, uri = fresh_database(server)
    with psycopg.connect(uri, autocommit=True) as con:
        con.execute(_UNCOMPRESSED)
    return name, uri


@pytest.fixture
def pg_uri(pg_server: PrivatePostgres) -> Iterator[str]:
    """A database of this test's own on the private server."""
    name, uri = fresh_database(pg_server)
    try:
        yield uri
    finally:
        pg_server.drop_database(name)
