"""Kill -9 trials of the audit log: a process appends rows as fast as it can and is SIGKILLed at a random
moment (inside a transaction, between the commit and the head file's update, while the head file is being
replaced); then the log must verify, read-only, as intact (a head one row behind is a notice, not a break),
and the next append must leave no notice at all (issue 44).

    python -m bench.audit_kill --trials 20

Also times ``verify`` on a log of ``--rows`` rows (the whole keyed chain is walked). The tests run two trials
(tests/test_audit_forgery.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from lumina_memory.stores.archive_duckdb import DuckDBArchive
    from lumina_memory.stores.secret import data_dir_secret

    data_dir = Path(sys.argv[1])
    archive = DuckDBArchive(data_dir / "archive.duckdb")
    log = archive.audit_trail(data_dir_secret(data_dir))
    n = 0
    while True:
        log.append("backup", "bench", None, '{"n": %d}' % n)
        n += 1
        if n == 1:
            print("ready", flush=True)
""")


def one_trial(data_dir: Path, rng: random.Random) -> dict[str, Any]:
    """One kill; what verify said right after it and after one more append."""
    from lumina_memory.stores.archive_duckdb import DuckDBArchive
    from lumina_memory.stores.audit import verify_data_dir
    from lumina_memory.stores.secret import data_dir_secret

    child = subprocess.Popen([sys.executable, "-c", CHILD, str(data_dir)], cwd=REPO, stdout=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(REPO)}, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.5))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    after_kill = verify_data_dir(data_dir)
    with DuckDBArchive(data_dir / "archive.duckdb") as archive:
        log = archive.audit_trail(data_dir_secret(data_dir))
        log.append("restore", "bench")
        after_append = log.verify()
    return {"rows": after_kill["rows"], "ok": after_kill["ok"], "lagging_head": bool(after_kill["notice"]),
            "problem": after_kill["problem"], "healed": after_append["ok"] and not after_append["notice"]}


def trials(n: int, root: Path, seed: int = 44) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [one_trial(root / f"trial{i}", rng) for i in range(n)]


def verify_cost(root: Path, rows: int) -> dict[str, float]:
    from lumina_memory.stores.archive_duckdb import DuckDBArchive
    from lumina_memory.stores.audit import verify_data_dir

    key = b"b" * 32
    with DuckDBArchive(root / "archive.duckdb") as archive:
        log = archive.audit_trail(key)
        started = time.perf_counter()
        for i in range(rows):
            log.append("memory_forgotten", "bench", f"user{i % 50}", '{"n": %d}' % i)
        append_ms = (time.perf_counter() - started) * 1000 / rows
    started = time.perf_counter()
    result = verify_data_dir(root, key=key)
    verify_ms = (time.perf_counter() - started) * 1000
    assert result["ok"], result
    return {"rows": rows, "append_ms_each": round(append_ms, 2), "verify_ms": round(verify_ms, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--rows", type=int, default=10_000, help="log size for the verify timing (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = trials(args.trials, Path(tmp))
        cost = verify_cost(Path(tmp) / "cost", args.rows) if args.rows else None
    summary = {
        "trials": len(results),
        "intact_after_kill": sum(r["ok"] for r in results),
        "head_one_behind": sum(r["lagging_head"] for r in results),
        "broken": [r["problem"] for r in results if not r["ok"]],
        "healed_by_next_append": sum(r["healed"] for r in results),
        "rows_at_kill": sorted(r["rows"] for r in results),
        "verify_cost": cost,
    }
    print(json.dumps(summary, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
