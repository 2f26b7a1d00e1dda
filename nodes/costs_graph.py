"""The memory graph's operations (issue 49, nodes.costs): a turn's ``write`` is its nodes from ingest_turn to
detect_boundary, a segment's ``flush`` its nodes from flush_to_redis to link_associations, a ``reply`` the respond
node; each node is one stage of its operation. retrieve_context is none: the recall and the priming it runs record
themselves. The maintenance graph makes its own (graphs.maintenance_graph: a run is one ``maintain``).

Nodes of one operation run one after another in one run of one thread (LangGraph lets one run at a time write a
thread), so the operation open between them is kept per (user, thread); its first node opens it afresh, its last
node or an error closes it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from .costs import Operation, recording

OP_OF_NODE = {
    "ingest_turn": "write", "batch_fallback": "write", "detect_boundary": "write",
    "flush_to_redis": "flush", "archive_to_duckdb": "flush", "upsert_long_term": "flush", "link_associations": "flush",
    "respond": "reply",
}
FIRST = {"ingest_turn", "flush_to_redis", "respond"}
LAST = {"detect_boundary", "link_associations", "respond"}


class GraphOperations:
    """The operations open between the nodes of graph runs, per (user, thread): ``op_of_node`` names each node's
    operation, ``first`` the nodes that open one, ``last`` those that end it."""

    def __init__(self, op_of_node: dict[str, str], first: set[str], last: set[str]) -> None:
        self.op_of_node, self.first, self.last = op_of_node, first, last
        self._open: dict[tuple[str, str, str], Operation] = {}
        self._lock = threading.Lock()

    def run_node(self, node: str, services: Any, user_id: str, thread: str, call: Callable[[], Any]) -> Any:
        """``call()`` (the node) as a stage of its operation."""
        op = self.op_of_node.get(node)
        if op is None or not recording(services):
            return call()
        key = (user_id, thread, op)
        with self._lock:
            current = self._open.get(key)
            if current is None or node in self.first:
                current = self._open[key] = Operation(op, services)
        try:
            with current.active(), current.stage(node):
                update = call()
        except BaseException:
            self._close(key, current)
            raise
        if node in self.last:
            self._close(key, current)
        return update

    def _close(self, key: tuple[str, str, str], current: Operation) -> None:
        with self._lock:
            if self._open.get(key) is current:
                del self._open[key]
        current.finish()

    def open_count(self) -> int:
        with self._lock:
            return len(self._open)


GRAPH_OPERATIONS = GraphOperations(OP_OF_NODE, FIRST, LAST)
