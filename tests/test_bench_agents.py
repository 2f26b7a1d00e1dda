"""The many-agents benchmarks (issue 48, P8) at a tiny size on the real engines: the quality bench on the generated
village, the simulation driver and the LTM fill behind the sizing table. Their reports' structure and invariants
are checked (counts add up, every kind of question scored for every system, no group memory shown to an
outsider), never their timings."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from bench import agents_quality, agents_scaling, agents_sim, agents_sizing
from bench.agents_open import opened_services
from bench.common import bench_settings
from bench.agents_scenario import generate
from lumina_memory.stores.redis_server import WATCHDOG_SECONDS, ensure_server, server_status, stop_server
from tests.pg_server import pg_server, pg_uri  # noqa: F401

pytestmark = pytest.mark.slow


def processes_of(data_dir: Path) -> list[psutil.Process]:
    """Live processes naming ``data_dir`` (its private redis-server and that server's watchdog)."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        line = " ".join(p.info["cmdline"] or [])
        if str(data_dir) in line and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def left_running(data_dir: Path) -> list[str]:
    """What still runs for ``data_dir`` once its watchdog had time to notice its server stopped (it looks every
    stores.redis_server.WATCHDOG_SECONDS; the wait only stops a hang, a leak stays and fails)."""
    _, alive = psutil.wait_procs(processes_of(data_dir), timeout=10 * WATCHDOG_SECONDS)
    return [" ".join(p.cmdline())[:200] for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_the_village_asks_every_kind_with_decoys_and_known_outsiders():
    sc = generate(agents=8, routine_per_agent=3, seed=11)
    kinds = {q.kind for q in sc.questions}
    assert kinds == set(agents_quality.KINDS)
    assert len(sc.questions) == 8 * 4  # told, trust, latest per agent, and a rule question per group member
    ids = {e["event_id"] for e in sc.events}
    shared = {s["memory_id"] for s in sc.shared}
    for q in sc.questions:
        assert set(q.evidence) <= ids
        assert set(q.decoys) <= ids | shared
        assert not set(q.decoys) & set(q.evidence)
        if q.kind in ("latest", "rule", "trust"):
            assert q.decoys and q.decoy_answers and q.answer not in q.decoy_answers
    members = {a for group in sc.groups.values() for a in group}
    for outsider, memory_id in sc.outsiders:
        group = next(s["group_id"] for s in sc.shared if s["memory_id"] == memory_id)
        assert outsider not in sc.groups[group] and outsider in members | {e["agent_id"] for e in sc.events}
    times = [e["time"] for e in sc.events]
    assert times == sorted(times)
    assert generate(agents=8, routine_per_agent=3, seed=11).events == sc.events  # deterministic for a seed


def test_quality_scores_every_kind_for_every_system_and_leaks_nothing(tmp_path: Path):
    out = tmp_path / "quality.json"
    report = agents_quality.main(["--agents", "8", "--routine", "4", "--k", "5", "--json", str(out)])
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(report))
    assert report["leaks"] == [0, 0]
    assert [r["system"] for r in report["rows"]] == [
        "Lumina agents", "plain vectors", "Lumina agents after consolidation and forgetting (+3 h)"]
    for row in report["rows"]:
        assert set(row["by_kind"]) == set(agents_quality.KINDS)
        assert sum(v["questions"] for v in row["by_kind"].values()) == report["questions"]
        for kind, v in row["by_kind"].items():
            assert 0.0 <= v["hit"] <= 1.0 and 0.0 <= v["found"] <= 1.0
            missed = sum(row["misses"].get(kind, {}).values())
            assert missed == round((1 - v["hit"]) * v["questions"])  # every miss has its reason
        mean, lo, hi = row["hit"]
        assert lo <= mean <= hi
    made = report["consolidation"]
    assert made["consolidated"] > 0 and made["deleted"] > 0  # routine records faded in 3 h and were never used
    assert made["ltm_left"] == (made["consolidated"] - made["deleted"] - made["compressed"]
                                 + made["merged_into"])


def test_the_judge_reads_each_rule():
    q = generate(agents=8, routine_per_agent=1, seed=2).questions
    latest = next(x for x in q if x.kind == "latest")
    good, bad = latest.evidence[0], latest.decoys[0]
    assert agents_quality.judge(latest, [("a", "x", [good]), ("b", "y", [bad])])[0] == 1.0
    assert agents_quality.judge(latest, [("b", "y", [bad]), ("a", "x", [good])])[2] == "decoy ranked first"
    assert agents_quality.judge(latest, [("m", "x", ["r", good, bad])])[2] == "merged with a decoy"
    trust = next(x for x in q if x.kind == "trust")
    merged = ("m", "x", ["r", *trust.evidence])  # one record holding the three helps counts three
    assert agents_quality.judge(trust, [merged, ("d", "y", [trust.decoys[0]])])[0] == 1.0
    assert agents_quality.judge(trust, [("d", "y", trust.decoys)])[2] == "absent"


def test_the_sim_counts_add_up(tmp_path: Path):
    out = tmp_path / "sim.json"
    report = agents_sim.main(["--agents", "4", "--hours", "0.05", "--queries-per-tick", "2", "--qps-queries", "3",
                              "--stm-capacity", "6", "--json", str(out)])
    assert json.loads(out.read_text(encoding="utf-8"))["events"] == report["events"]
    assert report["ticks"] == 18 and report["events"] == 4 * 18
    assert report["stm_total"] == 0  # the final consolidation is forced
    assert report["consolidated_events"] + report["stm_total"] == report["events"]
    assert report["ltm_total"] > 0 and report["pool"]["failed"] == 0 and report["pool"]["jobs"] > 0
    assert report["queries"]["stm"] == report["queries"]["default"] == 18 * 2
    assert 0 < report["queries"].get("ltm", 0) <= 18 * 2  # timed only once an agent holds LTM records
    assert [r["threads"] for r in report["ltm_qps"]["rows"]] == list(agents_sim.QPS_THREADS)
    assert all(r["queries"] == 3 * r["threads"] for r in report["ltm_qps"]["rows"])
    minutes = [s["game_minutes"] for s in report["series"]]
    assert minutes == sorted(minutes) and minutes[-1] == 3.0
    assert report["data_bytes_per_agent"] > 0
    spread = report["spread"]  # every telling reached a new agent, is traced, and the hearer finds its copy
    assert spread["hops"] == spread["tellings"] and spread["knowers"] == 2 + spread["tellings"]
    assert spread["found_by_sample"][0] == spread["found_by_sample"][1] == min(20, spread["knowers"])
    assert [p["knowers"] for p in spread["series"]] == sorted(p["knowers"] for p in spread["series"])
    assert agents_sim.render(report)[0].startswith("4 agents (duckdb)")


def test_the_sim_runs_in_server_mode(pg_uri: str, tmp_path: Path):
    report = agents_sim.run(3, 0.02, 10.0, 1, tmp_path, database_url=pg_uri, qps_queries=2, stm_capacity=4,
                            progress=lambda _: None)
    assert report["engine"] == "postgres" and report["events"] == 3 * 7
    assert report["consolidated_events"] == report["events"] and report["ltm_total"] > 0
    assert report["pool"]["failed"] == 0
    assert report["spread"]["hops"] == report["spread"]["tellings"]
    assert left_running(tmp_path) == []  # the private Redis it started (and its watchdog) stopped with it


def test_the_fill_holds_every_record_and_the_table_renders(tmp_path: Path):
    report = agents_sizing.fill(agents=3, records=20, rounds=2, queries=4, data_dir=tmp_path / "data", pool_size=30,
                                qps_queries=2, progress=lambda _: None)
    assert report["ltm_counts"] == [20] and report["records"] == 60
    assert [r["records_per_agent"] for r in report["rounds"]] == [0, 10, 20]
    assert report["rounds"][-1]["vector_bytes"] > report["rounds"][0]["vector_bytes"]
    assert set(report["per_record"]) >= {"archive_bytes", "vector_bytes", "rss_bytes", "ltm_p95_ms_per_record"}
    assert left_running(tmp_path / "data") == []  # the private Redis it started (and its watchdog) stopped
    results = tmp_path / "results"
    results.mkdir()
    (results / "agents_fill_3x20.json").write_text(json.dumps(report), encoding="utf-8")
    sim = agents_sim.main(["--agents", "2", "--hours", "0.01", "--qps-queries", "2"])
    (results / "agents_sim_2.json").write_text(json.dumps(sim), encoding="utf-8")
    lines = agents_sizing.table(results)
    text = "\n".join(lines)
    assert "| agents_sim_2.json | 2 |" in text
    assert "1,000 agents x 10,000 records" in text and "vectors (qdrant-edge) bytes" in text


def test_a_sim_stopped_by_sigterm_stops_its_redis(tmp_path: Path):
    data = tmp_path / "data"
    proc = subprocess.Popen([sys.executable, "-m", "bench.agents_sim", "--agents", "2", "--hours", "1",
                             "--qps-queries", "1", "--data-dir", str(data)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=Path(__file__).parent.parent)
    try:
        for _ in range(1200):  # until its private Redis answers (the run's ticks take far longer than a poll)
            if (data / "redis" / "redis.pid").exists() and processes_of(data):
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
        assert processes_of(data)
        time.sleep(1.0)  # inside the run's ticks
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    assert left_running(data) == []


SIGTERM_IN_A_QUERY = """
import os, signal, threading, time
import duckdb
from bench.sigterm import exit_on_sigterm

con = duckdb.connect()
started = threading.Event()
def stop():
    started.wait()
    time.sleep(0.5)  # most often inside the query
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=stop, daemon=True).start()
with exit_on_sigterm():
    started.set()
    con.execute("SELECT count(*) FROM range(1000000000) AS t(i) WHERE i % 7 = 3").fetchone()
    while True:  # a query that ended before the signal came: it lands here
        time.sleep(0.1)
"""


def test_sigterm_inside_a_duckdb_query_still_exits_as_sigterm():
    """DuckDB turns an exception a signal handler raises while it runs into its own 'Query interrupted', or drops
    it and runs on: the process must still end, with SIGTERM's code, not as a failed run."""
    proc = subprocess.run([sys.executable, "-c", SIGTERM_IN_A_QUERY], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parent.parent)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr[-2000:]


def test_the_scaling_bench_splits_agents_over_processes_on_one_postgres(pg_uri: str, tmp_path: Path):
    assert agents_scaling.split([f"a{i}" for i in range(5)], 2) == [["a0", "a2", "a4"], ["a1", "a3"]]
    report = agents_scaling.main(["--agents", "5", "--hours", "0.01", "--processes", "1", "2", "--qps-queries", "3",
                                  "--queries-per-tick", "1", "--database-url", pg_uri, "--data-dir", str(tmp_path),
                                  "--json", str(tmp_path / "scaling.json")])
    assert json.loads((tmp_path / "scaling.json").read_text(encoding="utf-8"))["counts"][1]["processes"] == 2
    assert [c["processes"] for c in report["counts"]] == [1, 2]
    for c in report["counts"]:
        rows = c["per_process"]
        assert [r["index"] for r in rows] == list(range(c["processes"]))
        assert len({r["pid"] for r in rows}) == c["processes"]  # each share in a process of its own
        assert sum(r["agents"] for r in rows) == 5 and c["events"] == 5 * rows[0]["ticks"] == sum(
            r["events"] for r in rows)
        assert c["ltm_queries"] == 3 * c["processes"] and all(r["ltm_queries"] == 3 for r in rows)
        assert c["retrieve_queries"] == sum(r["queries"] for r in rows) == c["processes"] * rows[0]["ticks"]
        assert all(r["final_records"] > 0 and r["pool_failed"] == 0 for r in rows)
        assert c["ltm_qps"] > 0 and c["ltm_ms"]["p50"] <= c["ltm_ms"]["p95"]
        assert len(c["load_average"]["start"]) == 3
    assert agents_scaling.render(report)[3].startswith("| 1 |")
    assert left_running(tmp_path) == []  # every worker stopped the private Redis it started


def test_a_bench_stops_only_the_redis_it_started(tmp_path: Path):
    mine, theirs = bench_settings(tmp_path / "mine"), bench_settings(tmp_path / "theirs")
    ensure_server(theirs)  # another process's server on that data dir, answering before the bench opens it
    try:
        with pytest.raises(RuntimeError, match="bench failed"), opened_services(mine):
            assert server_status(mine)["running"]
            raise RuntimeError("bench failed")
        assert left_running(tmp_path / "mine") == []  # stopped on the error path too
        with opened_services(theirs) as services:
            assert services.settings.data_dir == theirs.data_dir
        assert server_status(theirs)["running"]  # not the bench's to stop
    finally:
        stop_server(theirs)
    assert left_running(tmp_path / "theirs") == []
