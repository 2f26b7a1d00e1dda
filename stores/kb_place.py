"""The knowledge bases' collections as one UserDataPlace (``vectors.kb``): erased, backed up, restored.

The KBs' records (stores.kb_duckdb) are archive tables with a ``user_id`` column, so the archive's places
carry them; this place carries the passages of every KB collection. Export writes one tagged JSONL file
per collection: a per-user KB's points tagged with their user (erasure rewrites backups without them),
a shared KB's points tagged with no one (kept whoever is erased). Restore recreates the collections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .kb_open import KBStores
from .kb_vectors import parse_kb_collection
from .places import jsonl
from .vector_filters import TENANT_FIELD, PreparedPoint

NAME = "vectors.kb"


class KBPlace:
    name = NAME

    def __init__(self, kb: KBStores):
        self.kb = kb
        self._dirty: dict[str, object] = {}

    def _per_user(self) -> list:
        return [s for s in self.kb.collections.open_stores() if s.per_user]

    def count(self, user_id: str) -> int:
        return sum(store.count(user_id) for store in self._per_user())

    def erase(self, user_id: str) -> int:
        removed = 0
        for store in self._per_user():
            n = store.delete_user(user_id)
            if n:
                self._dirty[store.collection] = store
            removed += n
        return removed

    def scrub(self) -> None:
        for store in self._dirty.values():
            store.rewrite()  # type: ignore[attr-defined]
        self._dirty.clear()

    def raw_paths(self) -> list[Path]:
        return [p for store in self.kb.collections.open_stores() for p in store.raw_paths()]

    def export(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        n = 0
        for store in self.kb.collections.open_stores():
            tag = (lambda payload: payload.get(TENANT_FIELD)) if store.per_user else (lambda payload: None)
            rows = ((tag(payload), {"id": pid, "vector": vec, "payload": payload}) for pid, vec, payload in store.points())
            n += jsonl.write_rows(dest / f"{store.collection}.jsonl", rows)
        return n

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        collections = self.kb.collections
        n = 0
        for path in sorted(src.glob("*.jsonl")):
            parsed = parse_kb_collection(path.stem, collections.embedder_name, collections.dim)
            if parsed is None:
                continue  # another embedder's KB: its vectors cannot mix with ours (re-add the files)
            store = collections.get(*parsed)
            batch: list[PreparedPoint] = []
            for record in jsonl.kept_rows(path, is_erased):
                batch.append(PreparedPoint(record["id"], record["vector"], record["payload"]))
                if len(batch) >= store.batch_size:
                    store.write_points(batch)
                    n, batch = n + len(batch), []
            if batch:
                store.write_points(batch)
                n += len(batch)
        return n

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return jsonl.forget_all(src, user_id)


def kb_place(stores, settings, embedder_name: str, dim: int) -> KBPlace:
    """The place, with the KB tables created in the archive first (a restore into an empty data dir then
    finds them among the archive's places)."""
    from .kb_open import kb_stores

    return KBPlace(kb_stores(stores, settings, embedder_name, dim))
