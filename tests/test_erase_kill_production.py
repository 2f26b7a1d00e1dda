"""kill -9 of `lumina-memory erase --confirm` on the production adapters (issue 44): an external redis-server
reached by REDIS_URL, the graph through the Neo4j adapter on FalkorDB's Bolt endpoint, the vectors through the
qdrant-client adapter (local mode). Three trials of bench.faults_erase --production, each from the same base
state in every engine: killed at a random file operation, at a random store call (a request to a server or a
call into qdrant-client), and from outside after a random delay; then the data dir is opened again.

After each: no other user's id lost in any tier, the erased user in no place of the registry, no swap file
left, `stats` clean, and the erased user's id or text in no raw byte of the data dir, no Redis key or value,
no FalkorDB node or edge and no point payload. The full count (20 trials) is bench.faults_erase --production.
"""

from __future__ import annotations

import random

from bench import faults_erase
from bench.faults_erase_production import Engines


def test_erase_killed_on_the_production_adapters_loses_no_other_user_and_leaves_no_residue(tmp_path):
    with Engines(tmp_path / "engines") as engines:
        base = faults_erase.setup(tmp_path, 3, 60, 44, engines)
        assert base.ops["store call"] > 10 and base.ops["file op"] > 0
        assert all(base.reference[tier] for tier in ("archive turns", "mid-term", "long-term", "turn points",
                                                     "graph segments", "graph concepts"))
        # The probes see the erased user where the base state has them (the calibration erased them since).
        engines.reset()
        erased, others = base.names[1], [base.names[0], *base.names[2:]]
        assert any(r.startswith("redis ") for r in engines.residue(lambda b: faults_erase.holds(b, base.texts, erased)))
        assert any(r.startswith("falkordb ") for r in engines.residue(lambda b: faults_erase.holds(b, [], erased)))
        _, left, payloads = faults_erase.snapshot(base.data_dir, others, erased, base.texts, engines)
        assert left["midterm.redis"] and left["graph"] and left["vectors.segments"] and payloads
        rng = random.Random(44)
        for n, mode in enumerate(("file op", "store call", "timer")):
            outcome = faults_erase.trial(base.data_dir, tmp_path / f"trial-{n}", base.names, base.texts, base.token,
                                         base.reference, rng, mode, base.ops, base.span, engines=engines)
            assert outcome.killed or mode == "timer", (n, outcome)
            assert outcome.lost == {tier: 0 for tier in base.reference}, (n, outcome)
            assert outcome.erased_left == {} and outcome.leftovers == [], (n, outcome)
            assert outcome.stats_clean, (n, outcome)
            assert outcome.residue == [] and outcome.engine_residue == [], (n, outcome)
