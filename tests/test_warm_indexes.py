"""Index work happens at write time (issue 19): a flush leaves the user's recall indexes current, so the
recall after it catches nothing up — it neither tokenises segments nor reads turns from the archive."""

from __future__ import annotations

import numpy as np

import lumina_memory.nodes.retrieval.recall_stages as recall_module
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.memories_duckdb import MEMORIES

T0 = 1_790_000_000.0


def _rows(user: str, texts: list[str], start: float) -> list[dict]:
    return [{"user_id": user, "speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": start + 60 * i,
             "source_id": f"{user}:{start:.0f}:{i}"} for i, t in enumerate(texts)]


def test_a_flush_leaves_the_recall_indexes_current(memory_factory, monkeypatch):
    mem = memory_factory()
    services = mem.services
    archive = services.stores.archive
    replay(mem.graph, "kana", _rows("kana", ["猫のモカが今日もよく寝てる", "かわいいね", "うん、ずっと寝てる"], T0))
    replay(mem.graph, "kana", _rows("kana", ["来週から京都に出張なんだ", "いいね", "お土産買ってくる"], T0 + 86_400))
    segments = archive.counts("kana")["segments"]
    assert segments == 2
    keyword = services.keyword_index._users["kana"]
    assert len(keyword.ids) == segments and keyword.generation == archive.generation_of("kana")
    turns = services.turn_index._users["kana"]
    assert len(turns.turns) == archive.counts("kana", which=("turns",))["turns"] and turns.vectors is not None

    # The recall after it reads nothing from the archive to catch up.
    def caught_up(*_a, **_k):
        raise AssertionError("recall caught an index up: that work belongs to the flush")

    monkeypatch.setattr(archive, "segment_texts", caught_up)
    monkeypatch.setattr(archive, "turns_since", caught_up)
    rebuilds, extensions = services.turn_index.rebuilds, services.turn_index.extensions
    items = recall(services, "kana", "京都の出張はいつ？", purpose="question", limit=5)
    assert items and services.turn_index.rebuilds == rebuilds and services.turn_index.extensions == extensions
    assert any("京都" in i["text"] for i in items)


def test_a_recall_leaves_the_users_write_stamp_alone(memory_factory):
    """What a recall writes (recall flags for the lifecycle, use counts of facts and procedures) is no input of
    any in-process index: the stamp stays, so the next recall does not re-count the user's archive."""
    mem = memory_factory()
    services = mem.services
    archive = services.stores.archive
    replay(mem.graph, "kana", _rows("kana", ["猫のモカが今日もよく寝てる", "かわいいね", "うん、ずっと寝てる"], T0))
    stamp = archive.generation_of("kana")
    items = recall(services, "kana", "モカは元気？", purpose="question", limit=5)
    with archive.memories.db.read() as con:
        (flagged,) = con.execute(f"SELECT count(*) FROM {MEMORIES} WHERE user_id = 'kana' AND recalled").fetchone()
    assert items and flagged  # the flag was written…
    assert archive.generation_of("kana") == stamp  # …without moving the stamp


def _long_reply(topic: str, value: str) -> str:
    # Replies alike in all but one fact: their vectors are near-duplicates, so dedup compares their words.
    steps = "\n".join(f"{n}. Check the settings, restart the service and read the logs again before "
                      f"moving on to the next step of the checklist." for n in range(1, 25))
    return (f"Here is how to set up the {topic} for the project.\n\n{steps}\n\nThe {topic} we chose is {value}.\n"
            "```bash\nmake deploy && make check\n```\nLet me know if anything fails.")


def test_a_recall_over_warmed_long_replies_tokenises_none_of_them_whole(memory_factory, monkeypatch):
    """The first recall quoting a long reply in a process that started read it whole with Sudachi, to tell
    near-duplicates apart by their words (rerank.dedup): 100–320 ms inside a recall on the hard long-reply
    set, 2026-12-02. The warm-up (a flush's, or a starting process's) reads them, so the recall finds their
    terms ready."""
    import lumina_memory.nodes.retrieval.rerank as rerank
    import lumina_memory.nodes.text.tokenize as tokenize
    from lumina_memory.nodes.retrieval.warm import warm_indexes

    mem = memory_factory()
    texts = []
    for topic, value in (("cache", "Redis"), ("queue", "RabbitMQ"), ("database", "Postgres"), ("search", "Qdrant")):
        texts += [f"How should we set up the {topic}?", _long_reply(topic, value)]
    replay(mem.graph, "dev", _rows("dev", texts, T0))
    tokenize._views.cache_clear()  # what a process that starts holds: nothing read
    warm_indexes(mem.services, "dev")
    index = mem.services.turn_index._users["dev"]
    assert (index.token_counts > index.passage_cut[1]).sum() >= 4  # the replies are long turns

    real, compared = tokenize._morphemes, []

    def morphemes(text):
        if len(text) > 1_000:
            raise AssertionError(f"a recall tokenised a long reply whole ({len(text)} characters)")
        return real(text)

    def dedup(pool, order, sims, rest, turns, threshold, keep=frozenset(), token_counts=None, real_dedup=rerank.dedup):
        # The near-duplicate pairs of long replies this recall met: each was once compared by its words.
        compared.extend((a, b) for a, b in np.argwhere(np.triu(sims >= threshold, 1)).tolist() if a in keep and b in keep)
        return real_dedup(pool, order, sims, rest, turns, threshold, keep, token_counts)

    monkeypatch.setattr(tokenize, "_morphemes", morphemes)
    monkeypatch.setattr(recall_module, "dedup", dedup)
    items = recall(mem.services, "dev", "Which database did we choose?", purpose="question", budget=400)
    assert items and compared  # near-duplicate long replies were in the pool, and none was tokenised whole
