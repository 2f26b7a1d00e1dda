"""The graph channel's statements are compiled when the services open, not by a user's first recall.

ladybug compiles a statement the first time a connection runs it (~6 ms each for the graph channel's two reads,
13 ms of the first recall after a start on the long-reply set) and keeps it, keyed by the query and its
parameters' types. Opening the services runs both reads once, on ids no user has."""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.graph_base import _NO_USER
from tests.conftest import Memory

T0 = 1_790_000_000


def _statements(graph) -> set:
    return set(graph._conn._pybind_implicit_prepared_cache)


def test_a_recall_after_the_services_open_compiles_no_graph_statement(tmp_path):
    first = Memory(tmp_path)
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "ts": T0 + 3600 * i, "source_id": f"m{i}",
             "text": t} for i, t in enumerate(["I started learning the cello with Maestro Ruiz.", "How exciting!",
                                                "The cello teacher wants me to practise scales daily.", "Good plan.",
                                                "Tomorrow I visit the observatory with Hana.", "Have fun!"])]
    replay(first.graph, "ines", rows)
    first.close()

    again = Memory(tmp_path)  # a process that starts on that data
    try:
        _check(again)
    finally:
        again.close()


def _check(again: Memory) -> None:
    graph = again.services.stores.graph
    assert graph.backend == "ladybug"
    prepared = _statements(graph)
    assert len(prepared) >= 2
    items = recall(again.services, "ines", "What does the cello teacher want?", purpose="question", budget=200)
    assert items
    assert _statements(graph) == prepared
    # Nothing was written for the id the reads ran on.
    counts = graph.counts(_NO_USER)
    assert not any(counts.nodes.values()) and not any(counts.edges.values())
