"""The console command, run as a user would, in its own data directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture
def cli(cli_factory):
    return cli_factory()


def test_demo_fills_every_tier_and_answers(cli):
    out = cli("demo").stdout
    assert "replayed 102 turns" in out
    for tier in ("redis-embedded", "duckdb", "qdrant-edge", "ladybug"):
        assert tier in out
    assert "102 turns" in out and "offline responder" in out
    assert out.count("Q: ") == 3 and "↳" in out
    status = cli("services", "status").stdout
    assert "running: True" in status and "socket:" in status


def test_ingest_recall_stats_and_chat(cli, tmp_path):
    lines = [
        {"user_id": "ivy", "speaker": "user", "text": "来週の土曜日に富士山に登る予定なんだ", "ts": "2026-09-01T09:00:00+09:00"},
        {"user_id": "ivy", "speaker": "clarisse", "text": "富士山登山なら防寒具と水を忘れずに", "ts": "2026-09-01T09:01:00+09:00"},
        {"user_id": "ivy", "speaker": "user", "text": "山小屋も予約したよ", "ts": "2026-09-01T09:02:00+09:00"},
        {"user_id": "jay", "speaker": "user", "text": "I adopted a dog called Biscuit", "ts": "2026-09-01T10:00:00+00:00"},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    out = cli("ingest", str(path)).stdout
    assert "ivy: 3 turns" in out and "jay: 1 turns" in out
    optimized = cli("optimize").stdout
    assert optimized.count("(qdrant-edge): indexed") == 3, optimized  # segment, turn and knowledge collections
    rec = cli("recall", "--user", "ivy", "富士山に登るのはいつ？", "--json").stdout
    items = json.loads(rec)
    # the fact asked about leads (issue 18: the plan, with its day), then the episode with its three turns
    assert items and items[0]["kind"] == "knowledge" and "富士山" in items[0]["text"] and len(items[0]["source_ids"]) == 1
    episode = next(i for i in items if i["kind"] == "episode")
    assert "富士山" in episode["text"] and len(episode["source_ids"]) == 3
    assert "Biscuit" not in rec  # another user's memory
    stats = cli("stats", "--user", "ivy").stdout
    assert "3 turns, 1 segments" in stats
    chat = cli("chat", "--user", "ivy", stdin="ノクス、富士山の話覚えてる？\n\n").stdout
    assert "nox>" in chat and "offline responder" in chat


def test_an_import_that_makes_the_vector_indexes_due_builds_them(cli, tmp_path):
    """lumina_memory.graphs.vector_indexes after `ingest`: a bulk import is indexed once, not scanned by every recall."""
    env_file = tmp_path / "rows.jsonl"
    rows = [{"user_id": "uma", "speaker": "user" if i % 2 == 0 else "nox", "text": f"今日は{i}番目の話題、公園の散歩について話した。",
             "ts": 1_760_000_000 + 300 * i} for i in range(40)]
    env_file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "ingest", str(env_file)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "LUMINA_DATA_DIR": str(tmp_path / "data"),
                                                        "LUMINA_VECTOR_INDEX_AFTER": "20",
                                                        "LUMINA_VECTOR_INDEXING_THRESHOLD_KB": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "vector index of lumina_turns" in proc.stdout and "uma: 40 turns" in proc.stdout
    state = json.loads((tmp_path / "data" / "maintenance-state.json").read_text())
    assert any(name.startswith("lumina_turns") for name in state["vector_indexes"])
    cli("services", "stop", check=False)


def test_bad_input_file_gives_a_clear_error(cli, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"user_id": "../etc", "speaker": "user", "text": "x", "ts": 1}\n', encoding="utf-8")
    proc = cli("ingest", str(path), check=False)
    assert proc.returncode == 2 and "invalid user_id" in proc.stdout


def test_a_second_process_gets_a_clear_lock_error(tmp_path, memory_factory):
    mem = memory_factory()
    code = (
        "from lumina_memory.nodes.services import open_services\n"
        "from lumina_memory.stores.settings import LuminaSettings\n"
        f"open_services(LuminaSettings(data_dir={str(mem.settings.data_dir)!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "DataDirLocked" in proc.stderr and f"pid={os.getpid()}" in proc.stderr
    assert "LUMINA_DATA_DIR" in proc.stderr


def test_services_postgres_starts_a_private_server_that_outlives_the_command_and_stops(cli):
    import psycopg

    out = cli("services", "postgres").stdout
    uri = out.split("DATABASE_URI='", 1)[1].split("'", 1)[0]
    try:
        with psycopg.connect(uri) as con:  # the command has exited: the server is still there, with pgvector
            assert con.execute("SELECT '[1,2]'::vector <-> '[1,3]'::vector").fetchone() == (1.0,)
            assert con.execute("SHOW listen_addresses").fetchone() == ("",)  # a unix socket only
        assert "postgres: running" in cli("services", "status").stdout
        again = cli("services", "postgres").stdout  # a second start joins the running server
        assert f"DATABASE_URI='{uri}'" in again
    finally:
        stopped = cli("services", "stop").stdout
    assert "postgres: stopped" in stopped
    assert "postgres: not running" in cli("services", "status").stdout
