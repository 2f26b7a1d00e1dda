"""bench.perf_server at a tiny size: real spawned processes on a real private PostgreSQL (the benchmark starts its
own), the embedded mode and LangGraph's PostgresStore beside it. The report has every (system, processes,
concurrency) row it promises, every server-mode process read and recalled the users other processes wrote, the
sizing follows from the measured rates, and nothing the run started is left running."""

from __future__ import annotations

import json
import math

import psutil
import pytest

from bench import perf_server, perf_server_report


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("perf_server") / "perf_server.json"
    before = {p.pid for p in psutil.process_iter()}
    report = perf_server.main(["--users", "1", "--memories", "50", "--processes", "1,2", "--concurrency", "1,2",
                               "--ingest-processes", "1,2", "--ingest-memories", "20", "--seconds", "0.5",
                               "--pool", "32", "--queries", "10", "--quiet", "--out", str(out)])
    ours = {p.pid for p in psutil.Process().children(recursive=True)}
    # Other engineers' processes come and go meanwhile: the run's own are its children and the servers it
    # started in its temp dir (PostgreSQL, Redis and its watchdog name it on their command lines).
    started = [p for p in psutil.process_iter(["pid", "name", "cmdline"]) if p.info["pid"] not in before
               and (p.info["pid"] in ours or "lumina-perf-server-" in " ".join(p.info["cmdline"] or []))]
    return report, out, started


def test_report_has_every_system_process_count_and_concurrency(tiny):
    report, out, _ = tiny
    assert set(report["recall"]) == {"server", "embedded", "pgstore"}
    assert set(report["recall"]["server"]) == set(report["recall"]["pgstore"]) == {"p1", "p2"}
    assert set(report["recall"]["embedded"]) == {"p1"}  # a data dir opens in one process
    for per_processes in report["recall"].values():
        for per_c in per_processes.values():
            assert set(per_c) == {"c1", "c2"}
            for row in per_c.values():
                assert row["queries"] > 0 and row["p50"] <= row["p95"] <= row["p99"]
                assert row["qps"] == pytest.approx(row["queries"] / row["seconds"], rel=0.05)
    assert [r["processes"] for r in report["ingest"]["server"]] == [1, 1, 2]  # the fill, then 1 and 2 writers
    assert report["ingest"]["server"][2]["turns"] == 2 * 20
    assert all(r["turns_per_s"] > 0 for rows in report["ingest"].values() for r in rows)
    assert json.loads(out.read_text(encoding="utf-8"))["recall"].keys() == report["recall"].keys()
    text = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "LangGraph PostgresStore" in text and "1,000 q/s peak needs" in text
    assert out.with_suffix(".png").stat().st_size > 0


def test_every_server_process_reads_and_recalls_what_other_processes_wrote(tiny):
    report, _, _ = tiny
    want = {"user-0000": 50, "ingest1-writer0": 20, "ingest2-writer0": 20, "ingest2-writer1": 20}
    for processes in ("p1", "p2"):
        seen = report["seen"][processes]
        assert len(seen) == int(processes[1:])
        for one in seen:
            assert {u: v["turns"] for u, v in one.items()} == want
            assert all(v["recalled"] > 0 for v in one.values())
    assert report["seen_by_every_process"] is True


def test_sizing_follows_from_the_best_measured_point(tiny):
    report, _, _ = tiny
    rows = {r["system"]: r for r in report["sizing"]}
    for system in ("server", "pgstore"):
        row = rows[system]
        best = max((v for per_c in report["recall"][system].values() for v in per_c.values()), key=lambda v: v["qps"])
        assert row["qps"] == best["qps"]
        assert row["peak"]["processes"] == math.ceil(1000 / best["qps_per_process"])
        assert row["average"]["cores"] == math.ceil(200 / best["qps_per_core"])
    embedded = rows["embedded"]
    assert embedded["peak"]["processes"] is None or embedded["qps"] >= 1000  # no scaling out of one data dir


def test_the_run_leaves_no_process_running(tiny):
    _, _, started = tiny
    # multiprocessing's resource tracker is the interpreter's own helper for spawn, kept until the interpreter exits
    helpers = [p for p in started if "multiprocessing.resource_tracker" not in " ".join(p.info["cmdline"] or [])]
    # a stopped private Redis's watchdog notices on its next poll (stores.redis_server.WATCHDOG_SECONDS) and exits:
    # wait for every process to end, bounded, then name any still running
    _, alive = psutil.wait_procs(helpers, timeout=60)
    alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [], [(p.pid, p.info["name"], p.info["cmdline"]) for p in alive]


def test_sizing_of_a_system_without_rows_is_left_out():
    assert perf_server_report.sizing({"server": {}}, 2) == []


def test_the_recall_profile_counts_round_trips_and_cpu_on_a_private_server():
    from bench import perf_server_profile

    result = perf_server_profile.main(["--users", "1", "--memories", "120", "--queries", "6", "--pool", "32",
                                       "--top", "5", "--concurrency", "1,2", "--seconds", "0.5"])
    assert result["recalls"] == 6
    # a recall of bench.perf's memories: the vector search, the graph's reads, a stamp read at most (see
    # tests/test_pg_recall_roundtrips.py); no pool check query
    assert 1 <= result["round_trips_per_recall"] <= 5, result["statements_per_recall"]
    assert ".." not in result["statements_per_recall"]
    assert any("jsonb_each" in kind for kind in result["statements_per_recall"])  # the turn vectors' search
    # the server's CPU is read in clock ticks (10 ms), more than six small recalls take: found (not NaN), maybe 0
    assert result["client_cpu_ms_per_recall"] > 0 and result["server_cpu_ms_per_recall"] >= 0
    assert "recall" in result["profile"]
    assert set(result["windows"]) == {1, 2}
    assert all(row["qps"] > 0 and row["p50"] <= row["p95"] for row in result["windows"].values())
