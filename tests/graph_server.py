"""What the graph-server outage tests share (a real FalkorDB Bolt server killed, or frozen, mid-import):
the import file, a clean reference import on a server of its own, the checks while the server is
down and after it is back, and a server that can also be frozen (SIGSTOP) and thawed (SIGCONT).

Test-only, like tests/falkordb_bolt.py. The ``reference`` fixture is module-scoped: a test module
that imports it gets its own reference import.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest

from bench import faults
from lumina_memory.graphs.cli import _open
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.recovery import outbox_summary, recover, rederive
from lumina_memory.stores.redis_server import stop_server
from tests.falkordb_bolt import StoppableFalkorDB, absorb_handshake_hang

from .conftest import make_settings

USERS, TURNS = 2, 320  # 160 turns per user
RUN = 32  # turns per graph run: the outage starts between two runs of the first user
OUTAGE_AFTER = 96  # turns of the first user sent when the server goes away

# A query FalkorDB needs seconds for; the marker finds it among the running queries.
SLOW = "UNWIND range(1, 20000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x) AS n, 'slow-marker' AS m"


def by_user(file: Path) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for line in file.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows.setdefault(row.pop("user_id"), []).append(row)
    return rows


def graph_segment_ids(services, users) -> set[tuple[str, str]]:
    dump = services.stores.graph.dump()["Segment"]
    ids = [(r["user_id"], r["id"]) for r in dump if r["user_id"] in users]
    assert len(ids) == len(set(ids)), "a Segment node is duplicated"
    return set(ids)


def archive_segment_ids(services, users) -> set[tuple[str, str]]:
    return {(u, s.segment_id) for u in users for s in services.stores.archive.segments(u)}


def outage_settings(data_dir: Path, port: int, **overrides):
    return make_settings(data_dir, neo4j_uri=f"bolt://127.0.0.1:{port}", **overrides)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """(import file, users, tier ids) of the import run start to end with the server up."""
    root = tmp_path_factory.mktemp("graph_outage")
    file = root / "import.jsonl"
    users = faults.generate(file, USERS, TURNS, seed=16)
    (root / "falkordb").mkdir()
    with StoppableFalkorDB(root / "falkordb") as server:
        absorb_handshake_hang(server.port)
        settings = outage_settings(root / "reference", server.port)
        services, graph, conn = _open(settings)
        try:
            assert services.stores.graph.backend == "neo4j"
            for user, rows in by_user(file).items():
                replay(graph, user, rows, batch=RUN)
            ids = faults.tier_ids(services, users)
            graph_ids = graph_segment_ids(services, users)
            assert graph_ids == archive_segment_ids(services, users) and len(graph_ids) > 10
        finally:
            services.close()
            conn.close()
            stop_server(settings)
    return file, users, ids


def assert_graph_writes_owed(services, users, expected) -> tuple[set, set]:
    """While the server is away: the archive has every turn and segment, the graph's writes are owed
    (some of the first user's were written before the outage, all of the second user's wait).
    Returns (archived segment ids, segment ids the graph is owed)."""
    archived = archive_segment_ids(services, users)
    assert {(u, s) for u, s, _t in expected["archive segments"]} == archived
    owed_rows = services.stores.archive.outbox()
    owed_graph = {(r["user_id"], r["segment_id"]) for r in owed_rows if "graph" in r["stages"]}
    assert owed_graph and owed_graph < archived  # the first user's early segments were written
    assert {u for u, _s in owed_graph} == set(users)  # ... the second user's all wait
    assert outbox_summary(services.stores.archive)["owed"] == {"graph": len(owed_graph)}
    assert "graph" in services.degraded
    return archived, owed_graph


def assert_recovered_level(
    services, users, expected, archived: set, owed_graph: set, *, server_lost_data: bool
) -> None:
    """The server is back: recovery (the same driver reconnects) completes exactly what was owed, and
    every tier equals the reference, id by id. ``server_lost_data``: it came back empty, so what it
    had before the outage is rebuilt by ``rederive`` (see test_graph_server_outage)."""
    report = recover(services, reason="store back")
    assert report["still owed"] == 0 and report["completed graph"] == len(owed_graph)
    assert services.stores.archive.outbox() == [] and "graph" not in services.degraded

    if server_lost_data:
        # Exactly what the outbox owed is there now, nothing else: the server lost the rest.
        assert graph_segment_ids(services, users) == owed_graph
        for user in users:
            rederive(services, user)
    got = faults.tier_ids(services, users)
    diff = {tier: d for tier, d in faults.compare(expected, got).items() if d != (0, 0)}
    if server_lost_data:
        # rederive judges promotion again and links each segment to ALL archived ones (the
        # import linked it only to earlier ones): those two tiers may gain, never lose.
        regained = {tier: diff.pop(tier) for tier in ("long-term", "graph associated") if tier in diff}
        assert all(lost == 0 for lost, _more in regained.values()), regained
    assert not diff, f"tiers differing from the reference as (lost, duplicated): {diff}"
    assert graph_segment_ids(services, users) == archived


def act_when_running(server: StoppableFalkorDB, marker: str, act) -> threading.Thread:
    """A watcher thread that calls ``act()`` once a query containing ``marker`` runs on the server."""
    def watch() -> None:
        for _ in range(6000):  # generous: the query shows up within the first polls
            if server.proc.poll() is not None:
                return
            if any(marker in q for q in server.running_queries()):
                act()
                return
            time.sleep(0.01)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


class FreezableFalkorDB(StoppableFalkorDB):
    """A StoppableFalkorDB that can also be frozen: SIGSTOP leaves the process and its sockets in
    place (the kernel still accepts connections and acknowledges data) but nothing answers, as on a
    hung host. Leaving the ``with`` block always thaws it first, so it can be stopped."""

    def freeze(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, "the server is not running"
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    @property
    def frozen(self) -> bool:
        """Whether the process is stopped now (state T in /proc/<pid>/stat)."""
        if self.proc is None or self.proc.poll() is not None:
            return False
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] == "T"

    def __exit__(self, *exc_info) -> None:
        try:
            self.thaw()  # a stopped process would only act on SIGTERM once continued
        finally:
            super().__exit__(*exc_info)
