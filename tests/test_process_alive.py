"""A process id names a live writer only while its process runs: a zombie (exited, not yet reaped) writes
nothing more. Lock holders, staged backups, our Redis and the reply journal all ask stores.processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lumina_memory.stores.journal import Journal
from lumina_memory.stores.processes import pid_alive, process_start


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _zombie() -> subprocess.Popen:
    """A child that has exited and that nobody has reaped yet."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while _state(child.pid) != "Z":
        time.sleep(0.01)
    return child


def _journal_file(folder: Path, pid: int, started: str | None) -> Path:
    folder.mkdir(parents=True)
    path = folder / "user.reply.jsonl"
    start = {"event": "start", "user": "kim", "reply_id": "r1", "pid": pid, "proc_start": started, "at": 0.0}
    path.write_text(json.dumps(start) + "\n" + json.dumps({"event": "text", "text": "half a reply"}) + "\n")
    return path


def test_a_zombie_is_not_alive() -> None:
    child = _zombie()
    try:
        assert not pid_alive(child.pid)
    finally:
        child.wait()
    assert not pid_alive(child.pid)


def test_a_running_process_is_alive_and_a_reused_pid_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        started = process_start(child.pid)
        assert started is not None
        assert pid_alive(child.pid) and pid_alive(child.pid, started)
        assert not pid_alive(child.pid, str(int(started) + 1))  # same pid, another process's start
    finally:
        child.communicate(b"")


def test_a_reply_whose_writer_is_a_zombie_is_an_orphan(tmp_path) -> None:
    child = _zombie()
    try:
        path = _journal_file(tmp_path / "journal", child.pid, process_start(child.pid))
        journal = Journal(tmp_path / "journal")
        assert journal.orphans() == [path]
        recovered = journal.recover_orphans()
    finally:
        child.wait()
    assert [r["text"] for r in recovered] == ["half a reply"] and not path.exists()


def test_a_reply_whose_writer_runs_is_left_alone(tmp_path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        path = _journal_file(tmp_path / "journal", child.pid, process_start(child.pid))
        assert Journal(tmp_path / "journal").orphans() == []
        assert path.exists()
    finally:
        child.communicate(b"")
    assert os.path.exists(path)
