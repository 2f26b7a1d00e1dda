"""The associative graph as a UserDataPlace (ladybug or Neo4j).

A user's data there is their User node, their Segment, Concept and Knowledge nodes (concept ids are per
user, so a concept is never shared and goes with its only user) and every edge touching those. Character
nodes are shared by everyone and hold no user data; they stay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .. import cypher_backup
from . import jsonl

_COUNTED = ("User", "Segment", "Concept", "Knowledge")


class GraphPlace:
    name = "graph"

    def __init__(self, graph):
        self.graph = graph
        self._dirty = False

    def count(self, user_id: str) -> int:
        nodes = self.graph.counts(user_id).nodes
        return sum(int(nodes.get(label, 0)) for label in _COUNTED)

    def erase(self, user_id: str) -> int:
        n = self.graph.delete_user(user_id)
        self._dirty = self._dirty or n > 0
        return n

    def scrub(self) -> None:
        if self._dirty:
            self.graph.rewrite()
            self._dirty = False

    def raw_paths(self) -> list[Path]:
        return self.graph.raw_paths()

    def export(self, dest: Path) -> int:
        n = 0
        for kind, rows in self.graph.dump().items():
            # A kind with no rows (a relation type nobody has yet) gets no file: restore reads a missing
            # file as empty, and a backup then lists no empty files.
            if rows:
                n += jsonl.write_rows(dest / f"{kind}.jsonl", ((r.get("user_id"), r) for r in rows))
        return n

    def restore(self, src: Path, is_erased: Callable[[str], bool]) -> int:
        rows = {kind: list(jsonl.kept_rows(src / f"{kind}.jsonl", is_erased)) for kind in cypher_backup.LOAD}
        return self.graph.load(rows)

    def forget_in_export(self, src: Path, user_id: str) -> int:
        return jsonl.forget_all(src, user_id)
