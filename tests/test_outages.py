"""An unavailable store never loses a turn: with the graph or the vector store down, the flush goes on,
the turns and the segment reach the archive, the owed writes wait in the archive's outbox (stats says
so), and they are applied, oldest first, by the first flush once the store is back.

The stores are the real embedded adapters; the outage is injected at their engine calls (as
test_crash_resume injects a disk failure into the real archive). A real Redis server stopped and
restarted is in test_store_down.py.
"""

from __future__ import annotations

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.stores.errors import StoreUnavailable
from lumina_memory.stores.graph_ladybug import LadybugGraph
from lumina_memory.stores.turn_vectors import EdgeTurnVectors
from lumina_memory.stores.vectors_edge import EdgeVectorStore

USER = "rin"
CTX = {"user_id": USER, "respond": False}
CONFIG = {"configurable": {"thread_id": "outage"}}


class Outage:
    """A switch shared by the adapters of one backend."""

    down = False

    def check(self, tier: str) -> None:
        if self.down:
            raise StoreUnavailable(tier, "injected outage: connection refused")


def _switchable(cls, outage: Outage, tier: str):
    class Switchable(cls):
        def _write(self, *args, **kwargs):
            outage.check(tier)
            return super()._write(*args, **kwargs)

        def _query(self, *args, **kwargs):
            outage.check(tier)
            return super()._query(*args, **kwargs)

        def _read(self, *args, **kwargs):
            outage.check(tier)
            return super()._read(*args, **kwargs)

        def _query_many(self, *args, **kwargs):
            outage.check(tier)
            return super()._query_many(*args, **kwargs)

        def _count(self, *args, **kwargs):
            outage.check(tier)
            return super()._count(*args, **kwargs)

    Switchable.__name__ = f"Switchable{cls.__name__}"
    return Switchable


def _say(mem, texts: list[str], start: int) -> None:
    for i, text in enumerate(texts):
        mem.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": start + 40 * i}}, CONFIG, context=CTX)
    mem.graph.invoke({"flush": True}, CONFIG, context=CTX)


def _reopen_graph(mem, outage: Outage) -> None:
    stores = mem.services.stores
    path = stores.graph.path
    stores.graph.close()
    stores.graph = _switchable(LadybugGraph, outage, "graph")(path)


def _reopen_vectors(mem, outage: Outage) -> None:
    stores = mem.services.stores
    for name, cls in (("vectors", EdgeVectorStore), ("turns", EdgeTurnVectors)):
        real = getattr(stores, name)
        args = (real.shard_dir, real.collection, real.dim, real.embedder_name)
        real.close()
        setattr(stores, name, _switchable(cls, outage, "long-term")(*args, batch_size=real.batch_size))


def test_graph_down_the_turns_reach_the_archive_and_the_graph_catches_up(memory):
    outage = Outage()
    _reopen_graph(memory, outage)
    outage.down = True
    _say(memory, ["昨日から陶芸教室に通い始めた", "ろくろが難しくて粘土が崩れた", "先生は焦らなくていいって"], 1_790_000_000)
    stats = tier_stats(memory.services, USER)  # answers with a tier down, and says which
    assert stats["archive"]["turns"] == 3 and stats["archive"]["segments"] == 1
    assert stats["long-term"]["points"] == 1 and stats["mid-term"]["segments"] == 1
    assert str(stats["graph"]["nodes"]).startswith("unavailable")
    assert stats["derivations"]["owed"] == {"graph": 1} and "graph" in stats["derivations"]["degraded"]
    assert memory.graph.get_state(CONFIG).values["pending"] == []
    outage.down = False
    _say(memory, ["今日は湯呑みがひとつ焼き上がった", "少し歪んでるけど気に入ってる"], 1_790_100_000)
    stats = tier_stats(memory.services, USER)
    assert stats["archive"]["segments"] == 2 and stats["graph"]["nodes"]["Segment"] == 2
    assert stats["derivations"] == {"segments": 0, "owed": {}, "degraded": {}}


def test_vector_store_down_the_segment_is_archived_and_completed_later(memory):
    outage = Outage()
    _reopen_vectors(memory, outage)
    outage.down = True
    _say(memory, ["来週の日曜に富士山に登る", "五合目から山頂まで六時間くらい", "ご来光が見られるといいな"], 1_790_000_000)
    stats = tier_stats(memory.services, USER)
    assert stats["archive"]["turns"] == 3 and stats["mid-term"]["segments"] == 1
    assert str(stats["long-term"]["points"]).startswith("unavailable")
    # The graph's links need the vector search, so the graph waits with the vectors.
    assert stats["derivations"]["owed"] == {"long-term": 1, "graph": 1}
    assert "long-term" in stats["derivations"]["degraded"]
    outage.down = False
    _say(memory, ["富士山、無事に登頂できたよ", "山頂はすごく寒かった"], 1_790_200_000)
    stats = tier_stats(memory.services, USER)
    turns = memory.services.stores.turns
    assert stats["archive"]["segments"] == 2 and stats["graph"]["nodes"]["Segment"] == 2
    assert turns.count(USER) == 5 and stats["long-term"]["points"] >= 1
    assert stats["derivations"] == {"segments": 0, "owed": {}, "degraded": {}}
