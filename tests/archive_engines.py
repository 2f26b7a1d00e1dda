"""The archive on each engine, for the tests whose behaviour must be the same on both: a DuckDB file under the
test's folder, or a database of the test's own on the private PostgreSQL (tests.pg_server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.stores.archive_postgres import PostgresArchive
from lumina_memory.stores.archive_sql import SqlArchive

ENGINES = ["duckdb", "postgres"]


def open_archive(request: pytest.FixtureRequest, location: Path) -> SqlArchive:
    """``request.param``'s archive: DuckDB at ``location`` (a data dir or a .duckdb file), or PostgreSQL (the
    requesting module imports the ``pg_server`` and ``pg_uri`` fixtures)."""
    if request.param == "duckdb":
        return DuckDBArchive(location)
    return PostgresArchive(request.getfixturevalue("pg_uri"), timeout=10)
