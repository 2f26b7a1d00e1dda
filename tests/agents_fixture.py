"""An agents' memory on real engines for the agents' tests: embedded (DuckDB, qdrant-edge) or server mode
(PostgreSQL + pgvector from tests.pg_server), with a run clock the test moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from lumina_memory.nodes.agents.memory import AgentMemory
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.redis_server import stop_server

from .conftest import make_settings

SECRET = "agents-test-secret-0123456789abcdef0123"
T0 = 1_800_000_000.0


class Clock:
    """The run's clock: epoch seconds the test sets or moves."""

    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += hours * 3600.0


class Opened:
    """Services and an AgentMemory on them; ``close`` closes both (and the data dir's Redis)."""

    def __init__(self, data_dir: Path, engine: str, uri: str | None = None, model=None, **overrides):
        if engine == "postgres":
            overrides.update(database_url=uri, secret_key=SECRET)
        self.engine = engine
        self.settings = make_settings(data_dir, **overrides)
        self.services = open_services(self.settings)
        self.clock = Clock()
        self.memory = AgentMemory(self.services, clock=self.clock, model=model)

    def close(self) -> None:
        self.memory.close()
        self.services.close()
        stop_server(self.settings)


def open_engine(request, tmp_path: Path, **overrides) -> Opened:
    uri = request.getfixturevalue("pg_uri") if request.param == "postgres" else None
    return Opened(tmp_path / "data", request.param, uri, **overrides)


@pytest.fixture(params=["duckdb", "postgres"])
def opened(request, tmp_path):
    o = open_engine(request, tmp_path)
    try:
        yield o
    finally:
        o.close()
