"""kill -9 during `lumina-memory ingest`, then the same import again: every tier equals a clean
reference run, id by id (0 lost, 0 duplicated), and doctor reports the owed work in between.

Real processes on real engines: the importer is the CLI in a subprocess, killed by SIGKILL (from
outside at random log lines, or by itself as a flush stage begins, for the moments that must be hit
exactly). The figures at scale come from ``python -m bench.faults``.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from bench import faults
from lumina_memory.graphs.doctor import FAIL, OK, WARN, run_doctor
from tests.conftest import make_settings

USERS, TURNS = 2, 560  # 280 turns per user: two graph runs each (runs of 256), the second one opens mid-segment


@pytest.fixture(scope="module")
def transcript(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    file = root / "import.jsonl"
    users = faults.generate(file, USERS, TURNS, seed=16)
    reference = faults.reference(file, root / "reference", users)
    assert len(reference["archive turns"]) == TURNS and reference["graph segments"] and reference["long-term"]
    return file, users, reference


def _same(reference, got) -> None:
    diff = {tier: d for tier, d in faults.compare(reference, got).items() if d != (0, 0)}
    assert not diff, f"tiers differing from the reference as (lost, duplicated): {diff}"


@pytest.mark.parametrize("nth", [1, 2])
def test_kill_right_after_the_archive_commit_then_rerun(transcript, tmp_path, nth):
    """The process dies as a run's first derived stage begins: its segments are archived, and nothing
    else has them. Before the fix the re-run skipped them and they were lost for good. nth=2 is the
    first user's second run, which starts with an open segment the killed run then archived: the
    checkpoint is older than the archive, and the re-run must not cut those turns a second time."""
    file, users, reference = transcript
    data_dir = tmp_path / "data"
    try:
        crashed = faults.ingest_crashing_at(file, data_dir, "upsert_long_term", nth)
        assert crashed.killed, "\n".join(crashed.lines[-20:])
        # Between the crash and the re-run, doctor says what is owed instead of "all well".
        checks = run_doctor(make_settings(data_dir))
        rows = {(c.component, c.check): c for c in checks}
        assert rows[("derivations", "outbox")].status == WARN, rows[("derivations", "outbox")]
        assert "owe derived writes" in rows[("derivations", "outbox")].detail
        rerun = faults.ingest(file, data_dir)
        assert rerun.returncode == 0, "\n".join(rerun.lines[-20:])
        assert any("recovery (start-up)" in line for line in rerun.lines)  # logged what it repaired
        _same(reference, faults.fingerprint(data_dir, users))
        checks = {(c.component, c.check): c.status for c in run_doctor(make_settings(data_dir))}
        assert checks[("derivations", "outbox")] == OK and checks[("derivations", "complete")] == OK
        assert FAIL not in checks.values()
    finally:
        faults.stop_private_redis(data_dir)


@pytest.mark.parametrize("seed,after_archive", [(1, True), (2, False)])
def test_kill_minus_9_at_random_moments_then_rerun(transcript, tmp_path, seed, after_archive):
    """SIGKILL from outside, right after an archive_to_duckdb log line or at a random node's line."""
    file, users, reference = transcript
    got = faults.kill_trial(file, tmp_path / "data", users, random.Random(seed), after_archive)
    _same(reference, got)


@pytest.mark.parametrize("rerun", [False, True])
def test_private_redis_killed_mid_import_loses_nothing(transcript, tmp_path, rerun):
    """The private Redis SIGKILLed (no snapshot yet) after a mid-term write: the adapter restarts it,
    finds what it lost against the archive, and puts it back (logged); a re-run changes nothing more."""
    file, users, reference = transcript
    data_dir = tmp_path / "data"
    lines: list[str] = []
    original = faults.ingest

    def ingest(*args, **kwargs):
        run = original(*args, **kwargs)
        lines.extend(run.lines)
        return run

    faults.ingest = ingest
    try:
        got = faults.redis_kill_trial(file, data_dir, users, random.Random(7), rerun)
    finally:
        faults.ingest = original
    assert any("mid-term lacked" in line for line in lines), "the lost records were not detected and logged"
    _same(reference, got)


def test_production_redis_down_mid_import_loses_nothing(transcript, tmp_path):
    """REDIS_URL's server killed mid-import and back, empty, a second later: the flushes in between defer
    mid-term to the outbox, the import exits 0, and every tier equals the reference."""
    file, users, reference = transcript
    got = faults.redis_outage_trial(file, tmp_path / "data", users, random.Random(5), down_seconds=1.0)
    _same(reference, got)


def test_doctor_fails_when_a_tier_lacks_what_the_archive_holds_and_nothing_is_owed(transcript, tmp_path):
    """A data dir damaged before the outbox existed (derived writes lost, nothing owed): doctor FAILs and
    says how to rebuild, instead of "all well"."""
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    file, users, _reference = transcript
    data_dir = tmp_path / "data"
    try:
        assert faults.ingest_crashing_at(file, data_dir, "upsert_long_term", 1).killed
        with DuckDBArchive(data_dir) as archive:  # forget what is owed, as an older version never knew it
            for row in archive.outbox():
                archive.settle_outbox(row["user_id"], {row["segment_id"]: []})
        checks = {(c.component, c.check): c for c in run_doctor(make_settings(data_dir))}
        assert checks[("derivations", "outbox")].status == OK
        bad = checks[("derivations", "complete")]
        assert bad.status == FAIL and "archived segments" in bad.detail and "--rederive" in bad.detail
        for user in users:  # the repair doctor names
            done = subprocess.run([sys.executable, "-m", "lumina_memory.graphs.cli", "recover", "--user", user, "--rederive"],
                                  cwd=faults.REPO, env=faults.cli_env(data_dir), capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr
        checks = {(c.component, c.check): c.status for c in run_doctor(make_settings(data_dir))}
        assert checks[("derivations", "complete")] == OK
        got = faults.fingerprint(data_dir, users)  # every derived tier holds what the (partial) archive holds
        segments = {(u, s) for u, s, _turns in got["archive segments"]}
        assert segments and got["mid-term"] == segments
        assert {x for x in got["graph segments"] if len(x) == 2} == segments
        assert {x for x in got["turn points"] if len(x) == 2} == {(u, t) for u, t, _s in got["archive turns"]}
    finally:
        faults.stop_private_redis(data_dir)
