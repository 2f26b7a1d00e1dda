"""LuminaStore (the LangGraph BaseStore) as a UserDataPlace: its DuckDB items and their vectors.

Which items belong to a user: every item whose namespace has a label equal to the user id — the
LangGraph convention (``("memories", user_id)``, ``(user_id, "profile")``...), wherever the label sits.
An application that keys users some other way must erase those namespaces itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from langgraph.store.base import PutOp

from ..langgraph_store import ITEM_FIELD, NS_FIELD
from . import jsonl
from .vector_place import FILE as POINTS_FILE, export_points, restore_points

ITEMS_FILE = "items.jsonl"
_CHUNK = 500


def _labels_of_point(payload: dict) -> list[str]:
    prefixes = payload.get(NS_FIELD) or []
    return max(prefixes, key=len).split(".") if prefixes else []  # '.' is forbidden inside labels


class LuminaStorePlace:
    name = "store.items"

    def __init__(self, store):
        """``store``: an open stores.langgraph_store.LuminaStore."""
        self.store = store
        self._dirty = False

    def count(self, user_id: str) -> int:
        return len(self.store.items.with_label(user_id))

    def erase(self, user_id: str) -> int:
        found = self.store.items.with_label(user_id)
        for start in range(0, len(found), _CHUNK):
            # A put of None deletes the row and every vector point of the item, like any caller's delete.
            self.store.batch([PutOp(ns, key, None) for ns, key in found[start : start + _CHUNK]])
        self._dirty = self._dirty or bool(found)
        return len(found)

    def scrub(self) -> None:
        if self._dirty:
            self.store.items.rewrite()
            self.store.vectors.rewrite()
            self._dirty = False

    def raw_paths(self) -> list[Path]:
        return [*self.store.items.raw_paths(), *self.store.vectors.raw_paths()]

    def export(self, dest: Path) -> int:
        rows = self.store.items.dump_rows()
        # Tagged with no single user (a namespace may name several); filters read the namespace itself.
        n = jsonl.write_rows(dest / ITEMS_FILE, ((None, r) for r in rows))
        export_points(self.store.vectors, dest, lambda payload: None)
        return n

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        def kept(labels) -> bool:
            return not any(is_erased(label) for label in labels)

        rows = [r for r in jsonl.kept_rows(src / ITEMS_FILE, is_erased) if kept(r["namespace"])]
        n = self.store.items.load_rows(rows)
        live = {r["item_id"] for r in rows}
        restore_points(self.store.vectors, src, is_erased, keep=lambda p: p.get(ITEM_FIELD) in live)
        return n

    def forget_in_export(self, src: Path, user_id: str) -> int:
        removed = _filter(src / ITEMS_FILE, lambda r: user_id in r["namespace"])
        _filter(src / POINTS_FILE, lambda r: user_id in _labels_of_point(r["payload"]))
        return removed


def _filter(path: Path, drop: Callable[[dict], bool]) -> int:
    if not path.exists():
        return 0
    rows = list(jsonl.read_rows(path))
    kept = [(u, r) for u, r in rows if not drop(r)]
    if len(kept) != len(rows):
        tmp = path.with_name(path.name + ".tmp")
        jsonl.write_rows(tmp, kept)
        tmp.replace(path)
    return len(rows) - len(kept)
