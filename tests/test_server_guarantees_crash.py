"""Crash recovery in server mode: an import (the CLI in a child process, on PostgreSQL) SIGKILLs itself right after
a run's archive commit, before any derived tier has that run's segments; doctor then reports the owed work, and
the same import again leaves every tier equal to a clean reference import, id by id (0 lost, 0 duplicated).

The random kill -9 trials of a server-mode import are tests/test_faults_server.py's; this is the one moment that
must be hit exactly (bench.faults.ingest_crashing_at), as tests/test_crash_recovery.py hits it in embedded mode.
"""

from __future__ import annotations

from bench import faults
from lumina_memory.graphs.doctor import FAIL, OK, WARN, run_doctor
from tests.conftest import make_settings

from .pg_server import fresh_database, pg_server  # noqa: F401 - fixture

SECRET = "server-crash-test-secret-0123456789abcdef"
USERS, TURNS = 2, 60


def test_kill_after_the_archive_commit_then_rerun_equals_the_reference(tmp_path, pg_server, monkeypatch):  # noqa: F811
    file = tmp_path / "import.jsonl"
    users = faults.generate(file, USERS, TURNS, seed=47)
    names = []
    monkeypatch.setenv("LUMINA_SECRET_KEY", SECRET)  # the child processes' environment is this one's (cli_env)
    try:
        name, uri = fresh_database(pg_server)
        names.append(name)
        monkeypatch.setenv("LUMINA_DATABASE_URL", uri)
        reference = faults.reference(file, tmp_path / "reference", users)
        assert len(reference["archive turns"]) == TURNS and reference["long-term"] and reference["graph segments"]

        name, uri = fresh_database(pg_server)
        names.append(name)
        monkeypatch.setenv("LUMINA_DATABASE_URL", uri)
        data_dir = tmp_path / "data"
        settings = make_settings(data_dir, database_url=uri, secret_key=SECRET)
        try:
            crashed = faults.ingest_crashing_at(file, data_dir, "upsert_long_term", 1)
            assert crashed.killed, "\n".join(crashed.lines[-20:])
            rows = {(c.component, c.check): c for c in run_doctor(settings)}
            assert rows[("derivations", "outbox")].status == WARN, rows[("derivations", "outbox")]
            rerun = faults.ingest(file, data_dir)
            assert rerun.returncode == 0, "\n".join(rerun.lines[-20:])
            got = faults.fingerprint(data_dir, users)
            diff = {tier: d for tier, d in faults.compare(reference, got).items() if d != (0, 0)}
            assert diff == {}, f"tiers differing from the reference as (lost, duplicated): {diff}"
            checks = {(c.component, c.check): c.status for c in run_doctor(settings)}
            assert checks[("derivations", "outbox")] == OK and FAIL not in checks.values()
        finally:
            faults.stop_private_redis(data_dir)
    finally:
        for name in names:
            pg_server.drop_database(name)

