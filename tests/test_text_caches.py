"""Erasure empties the process-wide caches keyed by what users said (sentences, terms, passages, ids)."""

from __future__ import annotations

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.text_caches import cached_entries, text_caches

SECRET = "ミルフィーユ星雲"


def _turns(user: str, n: int = 8) -> list[dict]:
    long_reply = " ".join(f"The {SECRET} note number {k} says the archive moved to shelf {k}." for k in range(60))
    return [{"speaker": "user" if i % 2 == 0 else "lumina",
             "text": long_reply if i == 3 else f"{SECRET}の話 その{i} 図書館で本を読んだ",
             "ts": 1_760_000_000 + 60 * i, "source_id": f"{user}-{i}"} for i in range(n)]


def test_erasing_a_user_empties_the_text_caches_and_the_registry_counts_them(memory):
    replay(memory.graph, "carol", _turns("carol"))
    items = recall(memory.services, "carol", f"{SECRET}はどこ？", budget=512)
    assert items
    assert cached_entries() > 0
    with open_registry(memory.services) as places:
        place = next(p for p in places if p.name == "cache.text_derivations")
        assert place.count("carol") == cached_entries() > 0
    erase_user(memory.services, "carol", erase_plan(memory.services, "carol")["token"], actor="test")
    assert cached_entries() == 0
    # The erased words are computed afresh, not answered from memory.
    views = text_caches()[2]
    hits = views.cache_info().hits
    views(f"{SECRET}の話 その0 図書館で本を読んだ")
    assert views.cache_info().hits == hits

