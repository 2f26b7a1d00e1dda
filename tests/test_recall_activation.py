"""A3: recall's score has the notes' access term (0.1·log(1 + times recalled)) and Personalized PageRank over the
explicit and implicit links around the best memories found (nodes/retrieval/activation.py), on the real stores."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.settings_recall import RecallConfig

pytestmark = pytest.mark.slow

DAY = 86_400.0
T0 = 1_790_000_000.0


def _open(memory_factory, talks, **settings):
    mem = memory_factory(**settings)
    turns = [{"user_id": "sora", "speaker": "user" if n % 2 == 0 else "lumina", "text": text,
              "ts": T0 + day * DAY + 60 * n, "source_id": f"d{day}:{n}"}
             for day, texts in enumerate(talks) for n, text in enumerate(texts)]
    replay(mem.graph, "sora", turns, flush=True)
    services = mem.services
    index = services.turn_index.get(services.stores.archive, "sora", services.stores.turns)
    by_day = {index.turns[members[0]].source_id.split(":")[0]: seg for seg, members in index.members.items()}
    return mem, by_day


def _order(mem, query, config) -> list[str]:
    items = recall(mem.services, "sora", query, purpose="question", limit=10, config=config)
    return list(dict.fromkeys(s.split(":")[0] for item in items for s in item["source_ids"]))


# The question matches the second memory better (its beach); the first was recalled twenty times.
KITES = (["We flew the red kite on the windy hill.", "Sounds fun.", "The tail got tangled in a tree."],
         ["We flew the red kite on the windy beach.", "Sounds fun.", "The tail got wet in the sea."])


@pytest.mark.parametrize("weight, first", [(0.1, "d0"), (0.0, "d1")])
def test_a_memory_recalled_often_comes_back_first(memory_factory, weight, first):
    mem, by_day = _open(memory_factory, KITES, recall_access_weight=weight)
    table = mem.services.stores.archive.memories
    with table.db.tx() as con:  # what twenty recalls leave after the daily batch (F3)
        con.execute("UPDATE memories SET recall_count = 20 WHERE user_id = ? AND memory_id = ?",
                    ["sora", by_day["d0"]])
    table.forget_cached("sora")  # the batch's write moves the user's stamp; this update stands for it
    assert table.recall_view("sora")[0][by_day["d0"]]["recall_count"] == 20
    order = _order(mem, "red kite beach", RecallConfig.only(["turn_keyword", "lifecycle"]))
    assert order[0] == first and set(order[:2]) == {"d0", "d1"}


# The question's words are in the first memory; the other two share one word with it, and the later one is more
# recent, so without the links it comes first. The middle one is linked to the first.
TRIO = (["The harbour festival had lantern boats and taiko drums.", "Lantern boats, how pretty.",
         "The taiko drums were loud."],
        ["The museum had one lantern from the Edo period.", "Interesting.", "It was behind glass."],
        ["I bought a paper lantern at the market.", "Nice.", "It is blue."])


@pytest.mark.parametrize("weight", [0.5, 0.0])
def test_pagerank_lifts_the_memory_linked_to_the_best_one(memory_factory, weight):
    mem, by_day = _open(memory_factory, TRIO, recall_pagerank_weight=weight, lifecycle={"relation_traversal_depth": 0})
    assert mem.services.stores.graph.set_relations("sora", [(by_day["d0"], by_day["d1"], "same_topic", 0.9)]) == 1
    order = _order(mem, "lantern boats taiko festival", RecallConfig.only(["turn_keyword", "graph"]))
    assert order[0] == "d0" and {"d1", "d2"} <= set(order)
    linked_first = order.index("d1") < order.index("d2")
    assert linked_first == (weight > 0)
