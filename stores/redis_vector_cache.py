"""S6: the embedding cache's second tier, in the mid-term Redis: text -> vector, shared by every process of a memory.

A key is ``lumina-embed:<namespace>:<sha256 of the text>`` (the namespace names the embedder and its dimension, so
two models never share a vector; the key holds no text) and its value the vector's float32 bytes, with a TTL. The
prefix is outside the mid-term tier's ``lumina:`` keys, so backups and per-user counts never see these. Like the
process cache, the tier is not filed by user: erasing anyone empties it whole.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

PREFIX = "lumina-embed"
_SCAN_COUNT = 1000
_DELETE_CHUNK = 500
_T = TypeVar("_T")


class RedisVectorCache:
    """Vectors by text hash over a redis-py client; ``run`` is the owning store's call wrapper (its retries, and
    StoreUnavailable when the server does not answer)."""

    def __init__(self, client: Any, run: Callable[[str, Callable[[], _T]], _T], namespace: str) -> None:
        # A model may be named "nomic-embed-text:latest": glob characters and colons would blur the key's parts.
        self._client, self._run, self.namespace = client, run, re.sub(r"[^A-Za-z0-9._-]", "_", namespace)

    def key(self, text: str) -> str:
        return f"{PREFIX}:{self.namespace}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"

    def get_many(self, texts: Sequence[str]) -> list[bytes | None]:
        """Each text's stored vector bytes, None where none is stored."""
        if not texts:
            return []

        def get() -> list[bytes | None]:
            pipe = self._client.pipeline(transaction=False)  # GETs, not MGET: a cluster spreads the keys over slots
            for text in texts:
                pipe.get(self.key(text))
            return list(pipe.execute())

        return self._run("embedding cache get", get)

    def put_many(self, vectors: Mapping[str, bytes], ttl_seconds: int) -> None:
        if not vectors:
            return

        def put() -> None:
            pipe = self._client.pipeline(transaction=False)
            for text, data in vectors.items():
                pipe.set(self.key(text), data, ex=ttl_seconds)
            pipe.execute()

        self._run("embedding cache put", put)

    def _keys(self) -> set[str]:
        return {k.decode() if isinstance(k, bytes) else k
                for k in self._client.scan_iter(match=f"{PREFIX}:*", count=_SCAN_COUNT)}

    def count(self) -> int:
        """Vectors held, of every embedder."""
        return self._run("embedding cache count", lambda: len(self._keys()))

    def clear(self) -> int:
        """Remove every vector of every embedder (erasure); how many were held."""

        def clear() -> int:
            keys = sorted(self._keys())
            for start in range(0, len(keys), _DELETE_CHUNK):
                pipe = self._client.pipeline(transaction=False)
                for key in keys[start:start + _DELETE_CHUNK]:
                    pipe.delete(key)
                pipe.execute()
            return len(keys)

        return self._run("embedding cache clear", clear)
