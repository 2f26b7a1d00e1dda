"""Server mode (DATABASE_URI set): many processes share one memory on a real private PostgreSQL with pgvector.

Each "process" here is a separate ``Services`` (no state shared between them but the servers), and one is a real
child process; they share the private Redis of one data dir (its unix socket), as processes on one machine do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lumina_memory.graphs.memory_graph import build_graph
from lumina_memory.graphs.replay import thread_config
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.services import open_services
from lumina_memory.stores.datadir_lock import LOCK_FILENAME
from lumina_memory.stores.redis_server import stop_server
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
SECRET = "server-mode-test-secret-0123456789abcdef"


def _settings(data_dir: Path, uri: str):
    return make_settings(data_dir, database_url=uri, secret_key=SECRET)


def _ingest(services, user: str, said: list[tuple[str, str]], start: float = 1_777_000_000) -> None:
    graph = build_graph(services, checkpointer=InMemorySaver())
    turns = [{"speaker": who, "text": text, "ts": start + 60 * i} for i, (who, text) in enumerate(said)]
    run = {"config": thread_config(user), "context": {"user_id": user, "respond": False}}
    graph.invoke({"transcript": turns}, **run)
    graph.invoke({"flush": True}, **run)


def _recalled(services, user: str, query: str) -> str:
    return " / ".join(item["text"] for item in recall(services, user, query, purpose="question", limit=5))


@pytest.fixture
def server_dir(tmp_path):
    yield tmp_path / "data"
    stop_server(make_settings(tmp_path / "data"))


def test_two_processes_share_one_memory_without_a_data_dir_lock(server_dir, pg_uri):
    first = open_services(_settings(server_dir, pg_uri))
    second = open_services(_settings(server_dir, pg_uri))  # embedded mode would refuse: DataDirLocked
    try:
        assert first.stores.backends == {"mid-term": "redis-embedded", "archive": "postgres",
                                         "long-term": "pgvector", "graph": "postgres"}
        assert not (server_dir / LOCK_FILENAME).exists()
        _ingest(first, "mio", [("user", "My sister Emma just moved to Lisbon."),
                               ("clarisse", "Lisbon is lovely in spring.")])
        assert "Lisbon" in _recalled(second, "mio", "Where does Emma live now?")
        # second's recall indexes are built now; a later write by first must reach them (stamps move)
        _ingest(first, "mio", [("user", "I adopted a grey cat called Miso yesterday.")], start=1_777_100_000)
        assert "Miso" in _recalled(second, "mio", "What is my cat called?")
        assert "Lisbon" not in _recalled(second, "ren", "Where does Emma live now?")  # another user sees nothing
    finally:
        first.close()
        second.close()


def test_a_turn_written_by_a_child_process_is_recalled_here(server_dir, pg_uri):
    here = open_services(_settings(server_dir, pg_uri))
    try:
        _ingest(here, "kai", [("user", "I play the cello in a quartet.")])
        assert "cello" in _recalled(here, "kai", "Which instrument do I play?")  # indexes built before the child
        code = textwrap.dedent(f"""
            from tests.test_server_mode import _ingest, _settings
            from lumina_memory.nodes.services import open_services
            from pathlib import Path
            services = open_services(_settings(Path({str(server_dir)!r}), {pg_uri!r}))
            _ingest(services, "kai", [("user", "My quartet rehearses every Thursday at the old library.")],
                    start=1_777_200_000)
            services.close()
        """)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Thursday" in _recalled(here, "kai", "When does the quartet rehearse?")
        counts = here.stores.archive.counts("kai")
        assert counts["turns"] == 2, json.dumps(counts)
    finally:
        here.close()


def test_the_same_transcript_from_two_processes_leaves_no_duplicate(server_dir, pg_uri):
    said = [("user", "We are planning a trip to Hokkaido in February."), ("nox", "Pack for the snow."),
            ("user", "I want to see the Sapporo snow festival.")]
    first = open_services(_settings(server_dir, pg_uri))
    second = open_services(_settings(server_dir, pg_uri))
    try:
        _ingest(first, "aya", said)
        _ingest(second, "aya", said)
        assert first.stores.archive.counts("aya")["turns"] == 3
        segments = first.stores.archive.segments("aya")
        assert len({s.segment_id for s in segments}) == len(segments) >= 1
        items = recall(second, "aya", "Which festival do I want to see?", purpose="question", limit=5)
        texts = [item["text"] for item in items]
        assert len(texts) == len(set(texts))
        assert any("Sapporo" in t for t in texts)
    finally:
        first.close()
        second.close()


def test_doctor_reads_the_server_mode_without_changing_it(server_dir, pg_uri):
    from lumina_memory.graphs.doctor import FAIL, run_doctor

    services = open_services(_settings(server_dir, pg_uri))
    try:
        _ingest(services, "mio", [("user", "My sister Emma just moved to Lisbon."), ("lumina", "How exciting!")])
        checks = run_doctor(services.settings)
    finally:
        services.close()
    assert [c for c in checks if c.status == FAIL] == []
    rows = {(c.component, c.check): c.detail for c in checks}
    assert "server mode" in rows[("settings", "valid")] and ("data dir", "lock") not in rows
    assert "PostgreSQL" in rows[("archive", "reachable")] and "2 turns" in rows[("archive", "schema")]
    assert "postgres" in rows[("graph", "schema")]
    assert any("pgvector" in c.detail and "points" in c.detail for c in checks if c.component == "long-term")


def test_langgraph_dev_placeholders_are_not_servers_and_a_bad_uri_is_refused(monkeypatch):
    from pydantic import ValidationError

    from lumina_memory.stores.settings import LuminaSettings

    # `langgraph dev`'s in-memory runtime sets these in its own process
    monkeypatch.setenv("DATABASE_URI", ":memory:")
    monkeypatch.setenv("REDIS_URI", "fake")
    for name in ("LUMINA_DATABASE_URL", "DATABASE_URL", "REDIS_URL", "LUMINA_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = LuminaSettings()
    assert settings.database_url is None and settings.redis_url is None
    monkeypatch.setenv("DATABASE_URI", "postgresql://lumina@db:5432/lumina")
    monkeypatch.setenv("REDIS_URI", "redis://cache:6379/0")
    settings = LuminaSettings()
    assert settings.database_url == "postgresql://lumina@db:5432/lumina" and settings.redis_url == "redis://cache:6379/0"
    monkeypatch.setenv("DATABASE_URI", "mysql://lumina@db/lumina")
    with pytest.raises(ValidationError, match="PostgreSQL URI"):
        LuminaSettings()


def test_the_langgraph_store_in_server_mode_is_shared_and_takes_no_lock(server_dir, pg_uri):
    from lumina_memory.graphs.lumina_store import make_store

    settings = _settings(server_dir, pg_uri)
    first, second = make_store(settings), make_store(settings)  # embedded: the second would be DataDirLocked
    try:
        assert not (server_dir / LOCK_FILENAME).exists()
        first.put(("mio", "notes"), "trip", {"text": "Lisbon in May with Emma"})
        assert second.get(("mio", "notes"), "trip").value == {"text": "Lisbon in May with Emma"}
        assert [item.key for item in second.search(("mio",), query="Lisbon")] == ["trip"]
        assert second.search(("ren",), query="Lisbon") == []
    finally:
        first.close()
        second.close()


def test_server_mode_without_the_secret_is_refused_before_anything_opens(server_dir, pg_uri):
    from lumina_memory.stores.secret import MissingSecret

    with pytest.raises(MissingSecret, match="LUMINA_SECRET_KEY"):
        open_services(make_settings(server_dir, database_url=pg_uri))
    with pytest.raises(MissingSecret, match="too short"):
        open_services(make_settings(server_dir, database_url=pg_uri, secret_key="short"))
    assert not server_dir.exists()  # refused before the mid-term server or any table was made
