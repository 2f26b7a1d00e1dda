"""kill -9 of `lumina-memory backup` and `lumina-memory restore` on the production adapters (issue 44): an
external redis-server reached by REDIS_URL, the graph through the Neo4j adapter on FalkorDB's Bolt endpoint,
the vectors through the qdrant-client adapter (local mode). One trial of each from bench.faults_backup
--production: a backup killed at a random moment, then backed up again; a restore into the configured servers
(reset to empty) killed at a random moment, then run again.

After each backup: no partial left, the new snapshot verifies and counts what a clean backup counts. After each
restore: no restore-in-progress mark left and every tier's ids, read back from the servers, exactly the
source's (none lost, none duplicated). Then the source's ids are unchanged. The full count is
`python -m bench.faults_backup --production --trials 20`.
"""

from __future__ import annotations

import random

from bench import faults_backup
from bench.faults import compare
from bench.faults_erase_production import Engines


def test_backup_and_restore_killed_on_the_production_adapters_lose_and_double_nothing(tmp_path):
    with Engines(tmp_path / "engines") as engines:
        ctx = faults_backup.prepare(tmp_path, 3, 40, 44, engines)
        # The servers hold what the trials compare: without them the comparison could not fail.
        assert all(ctx["reference"][tier] for tier in ("archive turns", "mid-term", "long-term", "turn points",
                                                       "graph segments", "graph concepts"))
        engines.reset("empty")
        emptied = faults_backup.ids(tmp_path / "empty-check", ctx["users"], engines)
        assert emptied["mid-term"] == set() and emptied["graph mentions"] == set()
        rng = random.Random(44)
        for n in range(1):
            got = faults_backup.restore_trial(ctx, tmp_path / f"restore-{n}", rng)
            assert got["problems"] == [], (n, got)
            assert (got["lost"], got["duplicated"]) == (0, 0), (n, got)
        engines.reset("source")
        for n in range(1):
            got = faults_backup.backup_trial(ctx, tmp_path / "backups", rng)
            assert got["problems"] == [], (n, got)
        assert compare(ctx["reference"], faults_backup.ids(ctx["source"], ctx["users"], engines)) == {
            tier: (0, 0) for tier in ctx["reference"]}
