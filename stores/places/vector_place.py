"""A vector collection whose points carry their user in the payload (segments, turns, knowledge) as a UserDataPlace."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..vector_filters import TENANT_FIELD, PreparedPoint
from . import jsonl

FILE = "points.jsonl"


def export_points(store, dest: Path, user_of: Callable[[dict], str | None]) -> int:
    rows = ((user_of(payload), {"id": pid, "vector": vec, "payload": payload}) for pid, vec, payload in store.points())
    return jsonl.write_rows(dest / FILE, rows)


def restore_points(store, src: Path, is_erased: Callable[[str], bool], keep: Callable[[dict], bool] = lambda p: True) -> int:
    batch: list[PreparedPoint] = []
    n = 0
    for record in jsonl.kept_rows(src / FILE, is_erased):
        if not keep(record["payload"]):
            continue
        batch.append(PreparedPoint(record["id"], record["vector"], record["payload"]))
        if len(batch) >= store.batch_size:
            store.write_points(batch)
            n, batch = n + len(batch), []
    if batch:
        store.write_points(batch)
        n += len(batch)
    return n


class VectorPlace:
    """``store``: an EdgeVectorStore / ClientVectorStore (or their turn-vector subclasses)."""

    def __init__(self, name: str, store):
        self.name, self.store = name, store
        self._dirty = False

    def count(self, user_id: str) -> int:
        return self.store.count(user_id)

    def erase(self, user_id: str) -> int:
        n = self.store.delete_user(user_id)
        self._dirty = self._dirty or n > 0
        return n

    def scrub(self) -> None:
        if self._dirty:
            self.store.rewrite()
            self._dirty = False

    def raw_paths(self) -> list[Path]:
        return self.store.raw_paths()

    def export(self, dest: Path) -> int:
        return export_points(self.store, dest, lambda payload: payload.get(TENANT_FIELD))

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        return restore_points(self.store, src, is_erased)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return jsonl.forget(src / FILE, user_id)
