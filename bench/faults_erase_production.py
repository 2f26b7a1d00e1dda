"""The production adapters for `python -m bench.faults_erase --production`: an external redis-server reached by
REDIS_URL, the graph through the Neo4j adapter on FalkorDB's Bolt endpoint (NEO4J_URI), the vectors through the
qdrant-client adapter on qdrant-client's local mode (the only Qdrant engine reachable here, as in the
conformance tests), the archive in the data dir as always.

Every trial starts from the same base state in every engine: both servers are stopped and started again on
the base's RDB snapshot, and the data dir (which holds the qdrant-client local folders) is copied from the base.
Residue is looked for in the engines themselves: every Redis key and value (SCAN), every node and edge of every
FalkorDB graph (GRAPH.LIST, then MATCH), every point's payload (scroll, in bench.faults_erase.snapshot).

Run as a module it is the `lumina-memory` CLI with QDRANT_URL=qdrant-local://<folder> opening local mode:

    python -m bench.faults_erase_production stats
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import redis

from bench.faults import cli_env
from tests.falkordb_bolt import StoppableFalkorDB, absorb_handshake_hang
from tests.redis_process import start_redis, stop_redis

# QDRANT_URL of this form: qdrant-client's local mode, one folder per collection under the path (local mode
# lets one client hold a folder, and the factory opens one client per collection), the KBs in <path>/kb.
LOCAL = "qdrant-local://"
LOCAL_DIR = "qdrant-local"
# The erase child runs this first (bench.faults_erase.CHILD).
PRELUDE = "from bench.faults_erase_production import route_qdrant_local; route_qdrant_local()\n"


def route_qdrant_local() -> None:
    """In this process, a QDRANT_URL starting with LOCAL opens the qdrant-client adapters on local mode."""
    from qdrant_client import QdrantClient

    from lumina_memory.stores import kb_open
    from lumina_memory.stores.kb_vectors import KBCollections
    from lumina_memory.stores.vectors_client import ClientVectorStore

    if getattr(ClientVectorStore.from_url, "routes_local", False):
        return
    real_from_url, real_collections = ClientVectorStore.from_url.__func__, kb_open._collections

    def from_url(cls, url, api_key, collection, dim, embedder_name, *, timeout=10, batch_size=100):
        if not url.startswith(LOCAL):
            return real_from_url(cls, url, api_key, collection, dim, embedder_name, timeout=timeout,
                                 batch_size=batch_size)
        return cls.local(Path(url[len(LOCAL):]) / collection, collection, dim, embedder_name, batch_size=batch_size)

    def collections(settings, embedder_name, dim):
        if not (settings.qdrant_url or "").startswith(LOCAL):
            return real_collections(settings, embedder_name, dim)
        client = QdrantClient(path=str(Path(settings.qdrant_url[len(LOCAL):]) / "kb"))
        return KBCollections(embedder_name, dim, client=client, batch_size=settings.upsert_batch_size,
                             owns_client=True)

    from_url.routes_local = True  # type: ignore[attr-defined]
    ClientVectorStore.from_url = classmethod(from_url)  # type: ignore[method-assign]
    kb_open._collections = collections


class Engines:
    """The two servers (started on enter, stopped on exit, whatever happened) and their base snapshots."""

    def __init__(self, root: Path):
        self.root = root
        self.redis_dir, self.graph_dir = root / "redis", root / "falkordb"
        self.sock = self.redis_dir / "redis.sock"
        self.redis: subprocess.Popen | None = None
        self.graph: StoppableFalkorDB | None = None

    def __enter__(self) -> "Engines":
        route_qdrant_local()  # snapshots open the stores in this process
        self.redis_dir.mkdir(parents=True, exist_ok=True)
        self.graph_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _start(self) -> None:
        self.redis = start_redis(self.redis_dir, self.sock)
        self.graph = self.graph or StoppableFalkorDB(self.graph_dir)
        self.graph.start()
        absorb_handshake_hang(self.graph.port)

    def stop(self) -> None:
        if self.redis is not None and self.redis.poll() is None:
            stop_redis(self.redis)
        if self.graph is not None:
            self.graph.kill()

    # --- what the processes are given ---------------------------------------------------------------
    def urls(self, data_dir: Path) -> dict[str, str]:
        assert self.graph is not None
        return {"REDIS_URL": f"unix://{self.sock}", "NEO4J_URI": f"bolt://127.0.0.1:{self.graph.port}",
                "QDRANT_URL": f"{LOCAL}{data_dir.resolve() / LOCAL_DIR}"}

    def env(self, data_dir: Path, **extra: str) -> dict[str, str]:
        """A child's environment. FalkorDB leaves the first connection after a client's GOODBYE unanswered:
        a throwaway handshake takes that hit before each process (or in-process open) that connects."""
        assert self.graph is not None
        absorb_handshake_hang(self.graph.port)
        return cli_env(data_dir, **self.urls(data_dir), **extra)

    def settings(self, data_dir: Path):
        from lumina_memory.stores.settings import LuminaSettings

        assert self.graph is not None
        absorb_handshake_hang(self.graph.port)
        urls = self.urls(data_dir)
        return LuminaSettings(data_dir=data_dir, redis_url=urls["REDIS_URL"], qdrant_url=urls["QDRANT_URL"],
                              neo4j_uri=urls["NEO4J_URI"], openai_api_key=None, openai_base_url=None, llm="offline",
                              embedder="usem3")

    @staticmethod
    def cli() -> list[str]:
        return [sys.executable, "-m", "bench.faults_erase_production"]

    # --- the base state -----------------------------------------------------------------------------
    def save_base(self, name: str = "base") -> None:
        """Both servers' state now becomes the state ``reset(name)`` returns to."""
        assert self.graph is not None
        client = redis.Redis(unix_socket_path=str(self.sock), socket_timeout=60)
        try:
            client.save()
        finally:
            client.close()
        self.graph.save()
        shutil.copy2(self.redis_dir / "dump.rdb", self.root / f"{name}-redis.rdb")
        shutil.copy2(self.graph_dir / "dump.rdb", self.root / f"{name}-graph.rdb")

    def reset(self, name: str = "base") -> None:
        """Both servers restarted on the snapshots saved as ``name`` (their in-memory state is exactly that)."""
        self.stop()
        shutil.copy2(self.root / f"{name}-redis.rdb", self.redis_dir / "dump.rdb")
        shutil.copy2(self.root / f"{name}-graph.rdb", self.graph_dir / "dump.rdb")
        self._start()

    # --- residue in the engines ---------------------------------------------------------------------
    def residue(self, holds) -> list[str]:
        """Redis keys and FalkorDB graphs whose contents ``holds`` (bytes -> bool: the erased user's id or text)."""
        return self._redis_residue(holds) + self._graph_residue(holds)

    def _redis_residue(self, holds) -> list[str]:
        client = redis.Redis(unix_socket_path=str(self.sock), socket_timeout=60)
        found = []
        try:
            for key in client.scan_iter(count=1000):
                kind = client.type(key).decode()
                value = {"string": lambda: [client.get(key)], "hash": lambda: client.hgetall(key).items(),
                         "zset": lambda: client.zrange(key, 0, -1), "list": lambda: client.lrange(key, 0, -1),
                         "set": lambda: client.smembers(key), "stream": lambda: client.xrange(key)}.get(kind, list)()
                if holds(key + b"\0" + _flat(list(value))):
                    found.append(f"redis {kind} {key.decode(errors='replace')}")
        finally:
            client.close()
        return found

    def _graph_residue(self, holds) -> list[str]:
        assert self.graph is not None
        absorb_handshake_hang(self.graph.port)  # else the first connection after a GOODBYE waits out the timeout
        client = redis.Redis(unix_socket_path=str(self.graph_dir / "fk.sock"), socket_timeout=60)
        found = []
        try:
            for graph in client.execute_command("GRAPH.LIST"):
                for what, query in (("nodes", "MATCH (n) RETURN labels(n), properties(n)"),
                                    ("edges", "MATCH ()-[r]->() RETURN type(r), properties(r)")):
                    rows = client.execute_command("GRAPH.RO_QUERY", graph, query)[1]
                    hits = [row for row in rows if holds(_flat(row))]
                    if hits:
                        found.append(f"falkordb graph {graph.decode()}: {len(hits)} {what}")
        finally:
            client.close()
        return found


def _flat(value) -> bytes:
    """Every string in a nested reply, as UTF-8 bytes joined by NUL (so no two strings run into one token)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict):
        return b"\0".join(_flat(x) for kv in value.items() for x in kv)
    if isinstance(value, (list, tuple, set)):
        return b"\0".join(_flat(x) for x in value)
    return str(value).encode()


if __name__ == "__main__":
    route_qdrant_local()
    from lumina_memory.graphs.cli import main

    sys.exit(main(sys.argv[1:]))
