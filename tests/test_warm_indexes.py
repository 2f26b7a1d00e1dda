"""Index work happens at write time (issue 19): a flush leaves the user's recall indexes current, so the
recall after it catches nothing up — it neither tokenises segments nor reads turns from the archive."""

from __future__ import annotations

from graphs.replay import replay
from nodes.retrieval.recall import recall
from stores.memories_duckdb import MEMORIES

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
