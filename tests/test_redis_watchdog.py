"""Whatever the project starts, it stops: a private Redis whose data directory disappears shuts itself
down (its watchdog SIGKILLs it: without its directory it cannot snapshot and ignores SIGTERM), and the
LoCoMo harness stops its servers on every exit path, errors included."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from bench import locomo
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.redis_server import ensure_server, server_paths, server_status, stop_server
from lumina_memory.stores.settings import LuminaSettings


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _settings(data_dir: Path) -> LuminaSettings:
    return LuminaSettings(data_dir=data_dir, REDIS_URL=None, redis_snapshot_seconds=60)


def test_private_redis_stops_itself_when_its_data_dir_is_deleted(tmp_path):
    data_dir = tmp_path / "doomed"
    settings = _settings(data_dir)
    ensure_server(settings)
    pid = server_status(settings)["pid"]
    assert pid and _alive(pid)
    socket = server_paths(settings).socket
    try:
        shutil.rmtree(data_dir)
        assert _wait_gone(pid), f"redis-server {pid} still runs after its data dir was deleted"
        assert not socket.exists()
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_watchdog_leaves_a_healthy_server_alone_and_ends_with_it(tmp_path):
    settings = _settings(tmp_path / "kept")
    ensure_server(settings)
    pid = server_status(settings)["pid"]
    try:
        time.sleep(2.5)  # a few watchdog periods
        assert _alive(pid) and server_status(settings)["running"]
    finally:
        assert stop_server(settings)
    assert _wait_gone(pid)


def _bad_conversation(path: Path) -> None:
    """LoCoMo's format, one conversation whose second turn holds a NUL character: the graph rejects it mid-ingest."""
    conv = {
        "sample_id": "broken-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat last week."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "nice\x00 cat"},
            ],
        },
        "qa": [{"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4}],
    }
    path.write_text(json.dumps([conv]), encoding="utf-8")


def _redis_servers_under(root: Path) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            # argv[0]: the server itself (its watchdog's code mentions redis-server too)
            if cmd.split(b"\0")[0].endswith(b"redis-server") and str(root).encode() in cmd and _alive(int(proc.name)):
                found.append(int(proc.name))
    return found


def test_locomo_harness_failing_mid_run_leaves_no_server(tmp_path):
    data = tmp_path / "broken.json"
    _bad_conversation(data)
    keep = tmp_path / "kept"
    with pytest.raises(InvalidInput):
        locomo.main(["--data", str(data), "--budget", "100", "--quiet", "--no-mem0", "--no-ablation",
                     "--keep-data", str(keep)])
    leftovers = _redis_servers_under(keep)
    for pid in leftovers:
        os.kill(pid, signal.SIGKILL)
    assert not leftovers, f"redis-server(s) {leftovers} left running after the harness failed"
    assert not server_status(_settings(keep / "broken-1"))["running"]
