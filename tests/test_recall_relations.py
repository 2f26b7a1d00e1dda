"""F6: recall follows the relations between memories to ``relation_traversal_depth`` (nodes/retrieval/relations.py):
the memories related to what it found come with it, those two relations away only at depth 2, on the real stores."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.settings_recall import RecallConfig

pytestmark = pytest.mark.slow

# The words of the question are in the first memory only: what else comes back came by a relation.
BY_WORDS = RecallConfig.only(["turn_keyword", "graph"])
DAY = 86_400.0
T0 = 1_790_000_000.0
TALKS = (  # three sessions a day apart, on topics that share no word
    ["The old lighthouse on Awaji island is where my grandfather worked as a keeper.", "A lighthouse keeper, lovely.",
     "The lighthouse lamp was lit every evening."],
    ["My violin teacher retired after forty years of lessons.", "Forty years of violin, impressive.",
     "She still plays violin duets with me on Sundays."],
    ["Our neighbourhood bakery sells cinnamon rolls on Fridays.", "Cinnamon rolls, yum.",
     "The bakery queue is long every Friday morning."],
)


def _open(memory_factory, depth: int):
    mem = memory_factory(lifecycle={"relation_traversal_depth": depth})
    turns = [{"user_id": "ren", "speaker": "user" if n % 2 == 0 else "lumina", "text": text,
              "ts": T0 + day * DAY + 60 * n, "source_id": f"d{day}:{n}"}
             for day, texts in enumerate(TALKS) for n, text in enumerate(texts)]
    replay(mem.graph, "ren", turns, flush=True)
    services = mem.services
    index = services.turn_index.get(services.stores.archive, "ren", services.stores.turns)
    by_day = {index.turns[members[0]].source_id.split(":")[0]: seg for seg, members in index.members.items()}
    # The lighthouse memory rests on the violin one; the violin one continues into the bakery one.
    stored = services.stores.graph.set_relations("ren", [(by_day["d0"], by_day["d1"], "derived_from", 1.0),
                                                        (by_day["d1"], by_day["d2"], "continues", 1.0)])
    assert stored == 2
    return mem


def _days(mem, **kwargs) -> set[str]:
    items = recall(mem.services, "ren", "lighthouse keeper", purpose="question", limit=20, config=BY_WORDS, **kwargs)
    return {s.split(":")[0] for item in items for s in item["source_ids"]}


@pytest.mark.parametrize("depth, reached", [(0, {"d0"}), (1, {"d0", "d1"}), (2, {"d0", "d1", "d2"})])
def test_recall_brings_related_memories_to_the_set_depth(memory_factory, depth, reached):
    mem = _open(memory_factory, depth)
    assert _days(mem) == reached
    assert _days(mem, character="nox") == set()  # the scope holds on related memories too


def test_a_related_memory_follows_the_one_that_brought_it(memory_factory):
    mem = _open(memory_factory, 1)
    items = recall(mem.services, "ren", "lighthouse keeper", purpose="question", limit=20, config=BY_WORDS)
    days = [item["source_ids"][0].split(":")[0] for item in items]
    assert days[0] == "d0" and "d1" in days
    related = next(item for item in items if item["source_ids"][0].startswith("d1"))
    assert "graph" in related["tiers"]
