"""Knowledge-base passages (L5 ``kb:*``, S3): one vector collection per knowledge base, on the same engine.

A shared KB named ``docs`` is the collection ``lumina_kb_docs_<embedder>_<dim>``; KBs created per user named
``docs`` live in ``lumina_kbuser_docs_<embedder>_<dim>``, one tenant (``user_id``) per owner, so every read of a
per-user KB filters on its user like segments and turns do (and erasure is ``delete_user``). Shared points
carry no ``user_id`` at all: no user's erasure can touch them, and a user who happens to be called "shared"
owns nothing there.

Points are the *passages* of a document's chunks (nodes.kb): what search ranks and quotes. The chunks'
text and the document records live in the archive (stores.kb_duckdb), which is the truth: a passage
whose document has no record there (an ``kb add`` interrupted before its commit) is never returned.

It reuses the vector adapters (validation, batching, backups' scroll, rewrite for erasure); ``KBCollections``
opens each KB's collection once per process (opening a qdrant-edge shard costs ~40 ms) and closes them all
with the stores.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import ids
from .errors import InvalidInput
from .vector_filters import TENANT_FIELD, Condition, Match, PreparedPoint, check_vector
from .records import KB_NAME_RE, validate_kb_name
from .vectors_edge import EdgeVectorStore

SHARED_KIND, USER_KIND = "kb", "kbuser"
DOC_FIELD = "doc_id"


def kb_collection(name: str, per_user: bool, embedder_name: str, dim: int) -> str:
    kind = USER_KIND if per_user else SHARED_KIND
    return ids.collection_name(f"{kind}_{validate_kb_name(name)}", embedder_name, dim)


def parse_kb_collection(collection: str, embedder_name: str, dim: int) -> tuple[str, bool] | None:
    """(kb name, per user) of a KB collection of this embedder, else None."""
    suffix = ids.collection_name("x", embedder_name, dim)[len("lumina_x"):]
    for kind, per_user in ((USER_KIND, True), (SHARED_KIND, False)):
        prefix = f"lumina_{kind}_"
        if collection.startswith(prefix) and collection.endswith(suffix):
            name = collection[len(prefix): -len(suffix)]
            if KB_NAME_RE.fullmatch(name) and name == name.lower():
                return name, per_user
    return None


def passage_point_id(owner: str, kb: str, doc_id: str, chunk: int, passage: int) -> str:
    """Deterministic: re-adding a document after a crash rewrites the same points, never duplicates."""
    return ids.point_id(owner or "", f"kb:{kb}:{doc_id}:{chunk}:{passage}")


class KBPointsMixin:
    """Passage writes and reads for a VectorStoreBase adapter. ``owner`` is a user id, or None (shared)."""

    per_user: bool = False

    def _scope(self, owner: str | None) -> list[Condition]:
        if self.per_user:
            return [Match(TENANT_FIELD, (ids.validate_id(owner, "user_id"),))]
        if owner is not None:
            raise InvalidInput("user_id", "a shared knowledge base has no owner")
        return []

    def upsert_passages(self, owner: str | None, rows: Sequence[Mapping[str, Any]],
                        vectors: Sequence[Sequence[float]]) -> int:
        """``rows``: payloads (kb, doc_id, chunk, passage, start, end, text, source, added...); each gets
        the owner as tenant when the KB is per user. Every row is checked before anything is written."""
        self._require_open()  # type: ignore[attr-defined]
        scope = self._scope(owner)
        if len(rows) != len(vectors):
            raise InvalidInput("vectors", "one vector per passage")
        points = []
        for i, (row, vector) in enumerate(zip(rows, vectors)):
            payload = dict(row)
            payload.pop(TENANT_FIELD, None)
            if scope:
                payload[TENANT_FIELD] = owner
            doc_id = ids.validate_id(payload.get(DOC_FIELD), f"rows[{i}].doc_id")
            pid = passage_point_id(owner or "", str(payload["kb"]), doc_id, int(payload["chunk"]), int(payload["passage"]))
            points.append(PreparedPoint(pid, check_vector(vector, self.dim, f"vectors[{i}]"), payload))  # type: ignore[attr-defined]
        self._write_all(points)  # type: ignore[attr-defined]
        return len(points)

    def search_passages(self, owner: str | None, vector: Sequence[float], limit: int) -> list[tuple[float, dict]]:
        """(cosine, payload) of the nearest passages in this KB (the owner's, when per user), best first."""
        self._require_open()  # type: ignore[attr-defined]
        scope = self._scope(owner)
        query = check_vector(vector, self.dim, "vector")  # type: ignore[attr-defined]
        if limit <= 0:
            return []
        hits = self._query(query, scope, limit)  # type: ignore[attr-defined]
        # The filter already scopes a per-user KB; checking again costs nothing and makes a leak impossible.
        return [(score, payload) for _pid, score, payload in hits
                if not self.per_user or payload.get(TENANT_FIELD) == owner]

    def delete_docs(self, owner: str | None, doc_ids: Sequence[str]) -> int:
        """Remove these documents' passages (the owner's, when per user); returns how many there were."""
        self._require_open()  # type: ignore[attr-defined]
        wanted = tuple(dict.fromkeys(ids.validate_id(d, "doc_ids[]") for d in doc_ids))
        if not wanted:
            return 0
        conditions = [*self._scope(owner), Match(DOC_FIELD, wanted)]
        n = self._count(conditions)  # type: ignore[attr-defined]
        if n:
            self._delete(conditions)  # type: ignore[attr-defined]
        return n

    def count_owner(self, owner: str | None) -> int:
        self._require_open()  # type: ignore[attr-defined]
        return self._count(self._scope(owner) or None)  # type: ignore[attr-defined]


class EdgeKBVectors(KBPointsMixin, EdgeVectorStore):
    """Passages of one KB on qdrant-edge (a shard directory of its own)."""

    def drop(self) -> None:
        """Close the shard and delete its directory (the KB is removed)."""
        self.close()
        shutil.rmtree(self.shard_dir, ignore_errors=True)


def client_kb_vectors():
    """The qdrant-client class, imported on demand (the embedded default never loads qdrant-client)."""
    from .vectors_client import ClientVectorStore

    class ClientKBVectors(KBPointsMixin, ClientVectorStore):
        """Passages of one KB on a Qdrant server (or qdrant-client's local mode)."""

        def drop(self) -> None:
            with self._guard("delete the collection"):
                self._client.delete_collection(self.collection)
            self.close()

    return ClientKBVectors


class KBCollections:
    """Every KB collection of one embedder on one engine, opened on first use and kept open.

    ``client``: a QdrantClient shared by all KB collections (a Qdrant server, or local mode in tests); None
    means qdrant-edge shards under ``root`` (``<data_dir>/qdrant``), as stores.factory lays them out.
    """

    def __init__(self, embedder_name: str, dim: int, *, root: Path | None = None, client=None,
                 batch_size: int = 100, edge_options: Mapping[str, Any] | None = None, owns_client: bool = False):
        if (root is None) == (client is None):
            raise InvalidInput("kb collections", "give either an edge root folder or a Qdrant client")
        self.embedder_name, self.dim, self.root, self.client = embedder_name, dim, root, client
        self.batch_size, self.edge_options = batch_size, dict(edge_options or {})
        self.owns_client = owns_client  # close the client with the collections (one made from QDRANT_URL)
        self.backend = "qdrant-edge" if client is None else "qdrant"
        self._open: dict[str, Any] = {}
        self._lock = threading.RLock()

    def collection(self, kb: str, per_user: bool) -> str:
        return kb_collection(kb, per_user, self.embedder_name, self.dim)

    def existing(self) -> list[tuple[str, bool]]:
        """(kb, per user) of every KB collection the engine holds for this embedder."""
        found = [parse_kb_collection(n, self.embedder_name, self.dim) for n in self._names()]
        return sorted(f for f in found if f is not None)

    def exists(self, kb: str, per_user: bool) -> bool:
        name = self.collection(kb, per_user)
        with self._lock:
            if name in self._open:
                return True
        return self._has(name)

    # --- the engine: qdrant-edge shards under ``root``, or the Qdrant of ``client`` ---------------------
    def _names(self) -> list[str]:
        if self.client is None:
            return [p.name for p in self.root.iterdir() if p.is_dir()] if self.root.is_dir() else []
        return [c.name for c in self.client.get_collections().collections]

    def _has(self, name: str) -> bool:
        if self.client is None:
            return (self.root / name).is_dir()
        return bool(self.client.collection_exists(name))

    def _make(self, name: str):
        if self.client is None:
            return EdgeKBVectors(self.root / name, name, self.dim, self.embedder_name,
                                 batch_size=self.batch_size, **self.edge_options)
        return client_kb_vectors()(self.client, name, self.dim, self.embedder_name,
                                   batch_size=self.batch_size, close_client=False)

    def get(self, kb: str, per_user: bool, *, create: bool = True):
        """The KB's store, opened once; None when it does not exist and ``create`` is false."""
        name = self.collection(kb, per_user)
        with self._lock:
            store = self._open.get(name)
            if store is not None:
                return store
            if not create and not self.exists(kb, per_user):
                return None
            store = self._make(name)
            store.per_user = per_user
            self._open[name] = store
            return store

    def drop(self, kb: str, per_user: bool) -> bool:
        """Delete the KB's whole collection; False when there was none."""
        with self._lock:
            store = self.get(kb, per_user, create=False)
            if store is None:
                return False
            self._open.pop(store.collection, None)
            store.drop()
            return True

    def open_stores(self) -> list:
        """Every existing KB collection, opened (erasure, backups)."""
        return [self.get(kb, per_user) for kb, per_user in self.existing()]

    def close(self) -> None:
        with self._lock:
            stores, self._open = list(self._open.values()), {}
        for store in stores:
            store.close()
        if self.client is not None and self.owns_client:
            self.client.close()


def pg_kb_vectors():
    """The pgvector class of one KB's passages (imported on demand: the embedded default never loads psycopg)."""
    from .vectors_pg import PgVectorStore

    class PgKBVectors(KBPointsMixin, PgVectorStore):
        """Passages of one KB in a pgvector table of its own (``drop`` deletes the table)."""

    return PgKBVectors


class PgKBCollections(KBCollections):
    """Every KB collection of one embedder as pgvector tables, all on one pool (``vectors_pg.open_pool``)."""

    def __init__(self, embedder_name: str, dim: int, pool, *, batch_size: int = 100, owns_pool: bool = True):
        self.embedder_name, self.dim, self.root, self.client = embedder_name, dim, None, None
        self.batch_size, self.edge_options, self.owns_client = batch_size, {}, False
        self.pool, self.owns_pool = pool, owns_pool
        self.backend = "pgvector"
        self._open: dict[str, Any] = {}
        self._lock = threading.RLock()

    def _names(self) -> list[str]:
        from .vectors_pg import collection_names

        return collection_names(self.pool)

    def _has(self, name: str) -> bool:
        return name in self._names()

    def _make(self, name: str):
        return pg_kb_vectors()(self.pool, name, self.dim, self.embedder_name, batch_size=self.batch_size,
                               owns_pool=False)

    def close(self) -> None:
        super().close()
        if self.owns_pool:
            self.pool.close()
