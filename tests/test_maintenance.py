"""The maintenance graph: scheduled backups by group, pruning, retention, settings changes audited."""

from __future__ import annotations

import json
import subprocess
import time
import sys

from lumina_memory.graphs.erase import audit_log
from lumina_memory.graphs.maintenance_graph import STEPS, graph, run_maintenance
from lumina_memory.graphs.replay import replay
from lumina_memory.stores.backup import manifests
from lumina_memory.stores.backup_location import LocalLocation

HOUR = 3_600


def _groups(location):
    return [m["groups"] for m in manifests(location)]


def test_backups_follow_their_schedules_and_old_ones_are_pruned(memory_factory, tmp_path):
    mem = memory_factory(backup_location=str(tmp_path / "b"), backup_keep=3)
    replay(mem.graph, "kim", [{"speaker": "user", "text": f"今日の話 {i}", "ts": 1_760_000_000 + i} for i in range(6)])
    location = LocalLocation(tmp_path / "b")
    t0 = time.time()  # snapshots carry the real clock; pruning by age compares with it
    first = run_maintenance(mem.services, now=t0)
    assert sorted(first["scheduled_backups"]["due"]) == ["archive", "redis", "vectors"]
    assert "retention" in first and first["record_settings"]["changed"] == []
    # 31 min later only Redis is due (30 min); a day later the archive too; a week later everything.
    assert run_maintenance(mem.services, now=t0 + 31 * 60)["scheduled_backups"]["due"] == ["redis"]
    assert run_maintenance(mem.services, now=t0 + 40 * 60)["scheduled_backups"]["due"] == []
    assert sorted(run_maintenance(mem.services, now=t0 + 25 * HOUR)["scheduled_backups"]["due"]) == ["archive", "redis"]
    report = run_maintenance(mem.services, now=t0 + 8 * 24 * HOUR)
    assert sorted(report["scheduled_backups"]["due"]) == ["archive", "redis", "vectors"]
    assert len(location.snapshots()) == 3 and len(report["prune_backups"]["deleted"]) == 1  # backup_keep=3
    assert sorted(_groups(location)[-1]) == ["archive", "redis", "vectors"]
    assert run_maintenance(mem.services, now=t0 + 8 * 24 * HOUR, force=True)["scheduled_backups"]["due"] != []
    events = [r["event"] for r in audit_log(mem.services).rows()]
    assert events.count("backup") == 5 and "backups_pruned" in events
    assert audit_log(mem.services).verify()["ok"]


def test_a_settings_change_is_audited_without_secrets(memory_factory, tmp_path):
    mem = memory_factory(backup_location=str(tmp_path / "b"))
    run_maintenance(mem.services, now=1_800_000_000.0)
    object.__setattr__(mem.services.settings, "backup_keep", 9)
    report = run_maintenance(mem.services, now=1_800_000_100.0)
    assert report["record_settings"]["changed"] == ["backup_keep"]
    row = [r for r in audit_log(mem.services).rows() if r["event"] == "settings_changed"][-1]
    assert json.loads(row["detail"]) == {"backup_keep": {"from": 7, "to": 9}}
    assert "openai_api_key" not in row["detail"] and row["actor"] == "maintenance"


def test_the_graph_is_exported_for_a_langgraph_server():
    config = json.load(open("langgraph.json"))
    assert config["graphs"]["maintenance"] == "lumina_memory.graphs.maintenance_graph:graph"
    assert set(graph.get_graph().nodes) >= {step.__name__ for step in STEPS}


def test_cli_maintain_and_backups_list(tmp_path):
    import os

    env = {**os.environ, "LUMINA_DATA_DIR": str(tmp_path / "data"), "LUMINA_BACKUP_LOCATION": str(tmp_path / "b")}
    for key in ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(key, None)

    def run(*args):
        proc = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    try:
        report = json.loads(run("maintain", "--json"))
        assert report["scheduled_backups"]["snapshot"]
        listed = json.loads(run("backups", "--list", "--json"))
        assert [b["id"] for b in listed] == [report["scheduled_backups"]["snapshot"]]
        assert json.loads(run("audit", "--verify", "--json"))["ok"] is True
    finally:
        subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "services", "stop"], env=env, cwd=tmp_path,
                       capture_output=True, timeout=60)


def test_vector_indexes_are_built_once_enough_points_wait_for_them(memory_factory):
    """qdrant-edge indexes only when asked: the maintenance step builds the indexes once
    ``vector_index_after`` points wait unindexed beyond what the last build left, and not again before."""
    mem = memory_factory(vector_index_after=30, vector_indexing_threshold_kb=1)
    turns = mem.services.stores.turns
    replay(mem.graph, "kim", [{"speaker": "user", "text": f"今日は公園で{i}回目の散歩をした。犬も一緒だった。", "ts": 1_760_000_000 + 700 * i}
                              for i in range(40)])
    waiting = turns.unindexed()
    assert waiting >= 30
    first = run_maintenance(mem.services, now=1_760_100_000.0)["vector_indexes"]
    built = {b["collection"]: b for b in first["built"]}
    assert turns.collection in built and built[turns.collection]["points"] == waiting
    assert turns.unindexed() < waiting and turns.indexed_vectors() > 0
    # Nothing new: nothing is built again; a few new points are not enough either.
    assert run_maintenance(mem.services, now=1_760_100_100.0)["vector_indexes"]["built"] == []
    replay(mem.graph, "kim", [{"speaker": "user", "text": f"夜は映画を{i}本観た。", "ts": 1_760_200_000 + 700 * i} for i in range(3)])
    again = run_maintenance(mem.services, now=1_760_300_000.0)["vector_indexes"]
    assert again["built"] == [] and again["waiting"][turns.collection] >= 1
    # force builds whatever waits.
    assert turns.collection in {b["collection"] for b in run_maintenance(mem.services, now=1_760_300_100.0, force=True)["vector_indexes"]["built"]}
