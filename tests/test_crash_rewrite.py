"""Every rewrite of an engine's files (the scrub after an erasure, L11) survives kill -9 at any moment.

The unit trials run the rewrite of each real engine (a qdrant-edge shard, a qdrant-client local-mode collection
folder, a ladybug graph file, a DuckDB file) in
a child process that SIGKILLs itself before its k-th file operation (rename, remove, mkdir), for every k until a
child finishes; the next open must leave every kept row in place, the deleted user gone, no swap file behind and
none of the deleted user's text in any raw byte. A child killed between the delete and the rewrite is tried too.
The end-to-end trials kill `lumina-memory erase --confirm` at random moments (bench.faults_erase).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lumina_memory.stores import file_swap

REPO = Path(__file__).resolve().parents[1]
KEPT, GONE = "keeper", "leaver"
MARK = {KEPT: "OKAPIKEEPQX", GONE: "ZEBRAGONEQY"}
N = 12

# The child opens one engine in ROOT, writes N rows for each user, deletes GONE, then rewrites with a SIGKILL
# before its KILL_AT-th file operation (0: right after the delete, before the rewrite starts; -1: never).
CHILD = textwrap.dedent("""
    import os, pathlib, shutil, signal, sys
    sys.path.insert(0, sys.argv[4])
    from tests.test_crash_rewrite import open_engine, fill, delete
    engine, root, kill_at = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    store = open_engine(engine, root)
    fill(engine, store)
    delete(engine, store)
    if kill_at == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    calls = [0]
    def dying(fn):
        def wrapped(*args, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(*args, **kwargs)
        return wrapped
    os.replace, shutil.rmtree = dying(os.replace), dying(shutil.rmtree)
    pathlib.Path.unlink, pathlib.Path.mkdir = dying(pathlib.Path.unlink), dying(pathlib.Path.mkdir)
    store.rewrite()
    print("OPS", calls[0])
""")


def open_engine(engine: str, root: Path):
    root.mkdir(parents=True, exist_ok=True)
    if engine == "vectors":
        from lumina_memory.stores.vectors_edge import EdgeVectorStore

        return EdgeVectorStore(root / "qdrant" / "crash_test", "crash_test", 8, "test-embedder")
    if engine == "client":
        from lumina_memory.stores.vectors_client import ClientVectorStore

        return ClientVectorStore.local(root / "qdrant-local", "crash_test", 8, "test-embedder")
    if engine == "graph":
        from lumina_memory.stores.graph_ladybug import LadybugGraph

        return LadybugGraph(root / "graph")
    from lumina_memory.stores.duckdb_connection import GuardedConnection

    return GuardedConnection(str(root / "archive.duckdb"), str(root), "archive",
                             ["CREATE TABLE IF NOT EXISTS rows (user_id VARCHAR, row_id INTEGER, text VARCHAR)"])


def fill(engine: str, store) -> None:
    for user in (KEPT, GONE):
        if engine in ("vectors", "client"):
            from lumina_memory.stores.models import SegmentRecord

            store.upsert([SegmentRecord(segment_id=f"s{i}", user_id=user, turn_ids=[f"t{i}"], source_ids=[f"t{i}"],
                                        start_ts=i, end_ts=i, summary=f"{MARK[user]} summary {i}",
                                        embedding=[1.0 + i, 0.5, 0, 0, 0, 0, 0, 1.0]) for i in range(N)])
        elif engine == "graph":
            from lumina_memory.stores import ids

            for i in range(N):
                store.upsert_segment(user, ids.segment_id(user, f"t{i}"), ["lumina"], [f"{MARK[user]}concept{i}"], f"{MARK[user]} {i}", i, 0.5)
        else:
            with store.tx() as con:
                con.executemany("INSERT INTO rows VALUES (?, ?, ?)", [(user, i, f"{MARK[user]} text {i}") for i in range(N)])


def delete(engine: str, store) -> None:
    if engine == "duckdb":
        # As graphs.erase does: marked before anything goes, so the next open rewrites the file.
        from lumina_memory.stores.erasure import mark_erasure_started

        mark_erasure_started(store.data_dir, GONE)
        with store.tx() as con:
            con.execute("DELETE FROM rows WHERE user_id = ?", [GONE])
        store.checkpoint()
    else:
        assert store.delete_user(GONE) > 0


def held(engine: str, store, user: str) -> int:
    if engine in ("vectors", "client"):
        return store.count(user)
    if engine == "graph":
        return store.counts(user).nodes.get("Segment", 0)
    with store.read() as con:
        return con.execute("SELECT count(*) FROM rows WHERE user_id = ?", [user]).fetchone()[0]


def close(store) -> None:
    store.close()


def _raw_hits(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _run_child(engine: str, root: Path, kill_at: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD, engine, str(root), str(kill_at), str(REPO)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})


def _check_recovered(engine: str, root: Path, where: str) -> None:
    store = open_engine(engine, root)  # the open finishes or rolls back the swap, and redoes an owed rewrite
    try:
        assert held(engine, store, KEPT) == N, where
        assert held(engine, store, GONE) == 0, where
    finally:
        close(store)
    if engine == "duckdb":
        from lumina_memory.stores.erasure import mark_erasure_finished

        mark_erasure_finished(root, GONE)  # what the erasure's redo does once every place is clean
    assert file_swap.leftovers(root) == [], where
    assert _raw_hits(root, MARK[GONE]) == [], where
    assert _raw_hits(root, MARK[KEPT]), where  # the scan does see text that is there


@pytest.mark.parametrize("engine", ["vectors", "client", "graph", "duckdb"])
def test_a_rewrite_killed_before_any_step_of_its_swap_is_recovered_at_the_next_open(engine, tmp_path):
    k, finished = 0, False
    while not finished:
        root = tmp_path / f"kill-{k}"
        child = _run_child(engine, root, k)
        finished = child.returncode == 0
        assert finished or child.returncode == -signal.SIGKILL, child.stderr[-3000:]
        _check_recovered(engine, root, f"{engine}, killed before file operation {k}")
        k += 1
        assert k < 60, "the rewrite never finished"
    assert k >= 6  # the trials did reach past the commit point (journal, renames, clean-up)


def test_recover_finishes_a_committed_swap_and_removes_an_uncommitted_one(tmp_path):
    live = tmp_path / "db"
    live.write_text("old")
    (tmp_path / "db.wal").write_text("old wal")
    (file_swap.staging(live) / "db").write_text("new")
    assert file_swap.recover(live) == "rolled back"
    assert live.read_text() == "old" and (tmp_path / "db.wal").exists()
    (file_swap.staging(live) / "db").write_text("new")
    # The state a kill leaves right after the journal was written: nothing switched yet.
    import json

    (tmp_path / "db.swap").write_text(json.dumps({"replace": ["db"], "drop": ["db.wal"]}))
    assert file_swap.recover(live) == "finished"
    assert live.read_text() == "new" and not (tmp_path / "db.wal").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db"]


def test_a_commit_refuses_a_copy_without_the_live_name(tmp_path):
    live = tmp_path / "db"
    live.write_text("old")
    (file_swap.staging(live) / "other").write_text("new")
    with pytest.raises(FileNotFoundError):
        file_swap.commit(live)
    assert live.read_text() == "old"


def test_erase_killed_at_random_moments_loses_no_other_user_and_leaves_no_residue(tmp_path):
    """Two end-to-end trials of bench.faults_erase: `lumina-memory erase --confirm` SIGKILLed (inside the process at
    a random file operation, and from outside after a random delay), then the data dir opened again."""
    import random

    from bench import faults_erase

    base, users, texts, token, reference, ops, span = faults_erase.prepare(tmp_path, 3, 60, 44)
    assert ops > 10 and all(reference[tier] for tier in ("archive turns", "long-term", "turn points"))
    rng = random.Random(44)
    for n, mode in enumerate(("file op", "timer")):
        outcome = faults_erase.trial(base, tmp_path / f"trial-{n}", users, texts, token, reference, rng, mode, ops,
                                     span)
        assert outcome.killed or mode == "timer"
        assert outcome.lost == {tier: 0 for tier in reference}, (n, outcome)
        assert outcome.erased_left == {} and outcome.leftovers == [], (n, outcome)
        assert outcome.residue == [], (n, outcome)  # no erased text nor the erased id in any raw byte
