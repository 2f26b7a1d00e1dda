"""One worker process of bench.perf_server: it opens its own memory (server mode, embedded mode or LangGraph's
PostgresStore), then, in step with the other workers (a barrier), writes its own users or runs recall at each
concurrency for the same wall window, and puts what it measured on a queue for the parent.

Workers are started with multiprocessing's spawn method, so each is a fresh interpreter with nothing shared but the
servers (PostgreSQL, the data dir's private Redis), as LangGraph server workers and replicas are.
"""

from __future__ import annotations

import random
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

BARRIER_SECONDS = 900.0  # the longest a worker waits for the others (opening, warming); then it fails, named


@dataclass
class Spec:
    """What one worker does. kind: "server" (Services on PostgreSQL), "embedded" (Services on the data dir's
    files) or "pgstore" (LangGraph's PostgresStore); job: "recall" or "ingest"."""

    kind: str
    job: str
    index: int
    data_dir: str
    database_url: str = ""
    secret_key: str = ""
    users: list[tuple[str, int]] = field(default_factory=list)  # recall: users queried; ingest: users written
    memories: int = 0  # ingest: memories per user written
    queries: list[tuple[str, int]] = field(default_factory=list)  # (user, question number)
    concurrency: list[int] = field(default_factory=list)
    seconds: float = 10.0
    check_users: dict[str, int] = field(default_factory=dict)  # user -> turns every recall worker must see
    pool: Any = None  # bench.perf.Pool (texts and vectors), for ingest
    qtexts: list[str] = field(default_factory=list)
    qvecs: Any = None


def settings_for(spec: Spec):
    from bench.common import bench_settings

    if spec.kind == "server":
        return bench_settings(Path(spec.data_dir), database_url=spec.database_url, secret_key=spec.secret_key)
    return bench_settings(Path(spec.data_dir))


def timed_window(call: Callable[[Any], float], queries: list[Any], concurrency: int, seconds: float, seed: int):
    """``concurrency`` threads each run ``call`` on random queries until the window closes (a query started
    before the end runs to its end). Returns (latencies in ms, each minus what ``call`` returns: time spent
    embedding the query; seconds from the start until the last thread stopped)."""
    started = time.perf_counter()
    deadline = started + seconds

    def loop(thread: int) -> list[float]:
        rng = random.Random(seed * 1000 + thread)
        out: list[float] = []
        while time.perf_counter() < deadline:
            q = queries[rng.randrange(len(queries))]
            began = time.perf_counter()
            excluded = call(q) or 0.0
            out.append((time.perf_counter() - began) * 1000 - excluded)
        return out

    with ThreadPoolExecutor(concurrency) as ex:
        per_thread = list(ex.map(loop, range(concurrency)))
    return [ms for lat in per_thread for ms in lat], time.perf_counter() - started


def _our_recall(services, qtexts, qvecs) -> Callable[[Any], float]:
    from lumina_memory.nodes.retrieval.recall import Timings, recall

    def call(q) -> float:
        user_id, k = q
        timings = Timings()
        recall(services, user_id, qtexts[k], purpose="question", budget=1024, query_vector=qvecs[k], timings=timings)
        return timings.embed_ms

    return call


def _seen(services, check_users: dict[str, int], qtexts, qvecs) -> dict[str, dict[str, int]]:
    """For each user another process wrote: the turns this process reads in the archive and the items a recall
    here returns (both must be there for the memory to be shared)."""
    from lumina_memory.nodes.retrieval.recall import recall

    out = {}
    for user_id in check_users:
        turns = services.stores.archive.counts(user_id, which=("turns",))["turns"]
        items = recall(services, user_id, qtexts[0], purpose="question", budget=1024, query_vector=qvecs[0])
        out[user_id] = {"turns": turns, "recalled": len(items)}
    return out


def open_pgstore(uri: str, dims: int, embed, pool_size: int):
    """LangGraph's PostgresStore on ``uri`` with its pgvector HNSW index (cosine), a connection pool of
    ``pool_size`` as our stores get; returns (store, context manager to exit)."""
    from langgraph.store.postgres import PostgresStore

    cm = PostgresStore.from_conn_string(
        uri, pool_config={"min_size": 1, "max_size": pool_size},
        index={"dims": dims, "embed": embed, "fields": ["text"], "distance_type": "cosine",
               "ann_index_config": {"kind": "hnsw"}},
    )
    store = cm.__enter__()
    return store, cm


def _pgstore_search(store, qtexts) -> Callable[[Any], float]:
    def call(q) -> float:
        user_id, k = q
        store.search((user_id, "memories"), query=qtexts[k], limit=40)
        return 0.0

    return call


def _recall_job(spec: Spec, barrier, closers: list) -> dict[str, Any]:
    qvecs = np.asarray(spec.qvecs, dtype=np.float32)
    result: dict[str, Any] = {}
    if spec.kind == "pgstore":
        from lumina_memory.stores.settings import LuminaSettings

        lookup = {text: qvecs[k].tolist() for k, text in enumerate(spec.qtexts)}  # precomputed, as ours gets
        store, cm = open_pgstore(spec.database_url, int(qvecs.shape[1]), lambda texts: [lookup[t] for t in texts],
                                 LuminaSettings.model_fields["database_pool_size"].default)
        closers.append(lambda: cm.__exit__(None, None, None))
        call = _pgstore_search(store, spec.qtexts)
        call(spec.queries[0])  # the pool's first connections, as a warm server has them
    else:
        from lumina_memory.nodes.retrieval.warm import warm_indexes
        from lumina_memory.nodes.services import open_services

        services = open_services(settings_for(spec))
        closers.append(services.close)
        for user_id, _ in spec.users:
            warm_indexes(services, user_id)
        if spec.check_users:
            result["seen"] = _seen(services, spec.check_users, spec.qtexts, qvecs)
        call = _our_recall(services, spec.qtexts, qvecs)
    result["windows"] = {}
    for c in spec.concurrency:
        barrier.wait(BARRIER_SECONDS)  # every process starts this concurrency's window together
        latencies, seconds = timed_window(call, spec.queries, c, spec.seconds, seed=spec.index * 100 + c)
        result["windows"][c] = {"latencies_ms": latencies, "seconds": seconds}
    return result


def _ingest_job(spec: Spec, barrier, closers: list) -> dict[str, Any]:
    from bench.perf import fill_user
    from lumina_memory.nodes.services import open_services

    services = open_services(settings_for(spec))
    closers.append(services.close)
    barrier.wait(BARRIER_SECONDS)
    started = time.perf_counter()
    for user_id, seed in spec.users:
        fill_user(services, spec.pool, user_id, spec.memories, seed)
    return {"turns": spec.memories * len(spec.users), "seconds": time.perf_counter() - started}


def run(spec: Spec, barrier, results) -> None:
    """The process's entry point: the job's measurements, or the error that stopped it, onto ``results``."""
    closers: list[Callable[[], Any]] = []
    try:
        job = _recall_job if spec.job == "recall" else _ingest_job
        results.put({"index": spec.index, "kind": spec.kind, "job": spec.job, **job(spec, barrier, closers)})
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run by name
        barrier.abort()  # the others stop waiting for this one
        results.put({"index": spec.index, "kind": spec.kind, "job": spec.job,
                     "error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}"})
    finally:
        for close in reversed(closers):
            close()
