"""The erasure registry's in-process places read the indexes and caches through their public members: a per-user
index place counts the user while the index holds them (KeywordIndex.holds, TurnIndex.holds) and not another
user, and the text-derivations place covers every memo packing keeps (packing.CACHES)."""

from __future__ import annotations

from lumina_memory.graphs.erase import erase_plan, erase_user
from lumina_memory.graphs.registry import open_registry
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval import excerpts, packing
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.text.text_caches import text_caches

INDEXES = ("cache.keyword_index", "cache.turn_index")


def _turns(user: str, n: int = 6) -> list[dict]:
    return [{"speaker": "user" if i % 2 == 0 else "lumina", "text": f"{user} kept the blue kettle on shelf {i}",
             "ts": 1_760_000_000 + 60 * i, "source_id": f"{user}-{i}"} for i in range(n)]


def _index_counts(services, user: str) -> dict[str, int]:
    with open_registry(services) as places:
        return {p.name: p.count(user) for p in places if p.name in INDEXES}


def test_an_index_place_counts_the_user_it_holds_until_erased(memory):
    services = memory.services
    assert _index_counts(services, "uma") == {name: 0 for name in INDEXES}  # nothing built yet
    replay(memory.graph, "uma", _turns("uma"), flush=True)
    assert recall(services, "uma", "Where is the blue kettle?", budget=256)
    assert _index_counts(services, "uma") == {name: 1 for name in INDEXES}
    assert services.keyword_index.holds("uma") and services.turn_index.holds("uma")
    assert _index_counts(services, "umar") == {name: 0 for name in INDEXES}  # a longer id is another user
    erase_user(services, "uma", erase_plan(services, "uma")["token"], actor="test")
    assert _index_counts(services, "uma") == {name: 0 for name in INDEXES}
    assert not services.keyword_index.holds("uma") and not services.turn_index.holds("uma")


def test_every_memo_of_packings_excerpts_is_listed_with_the_text_caches():
    memos = {name for name, value in vars(excerpts).items()
             if hasattr(value, "cache_clear") and getattr(value, "__module__", None) == excerpts.__name__}
    assert memos and memos == {f.__name__ for f in packing.CACHES}
    listed = {id(cache) for cache in text_caches()}
    assert all(id(cache) in listed for cache in packing.CACHES)
