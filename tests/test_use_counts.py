"""Recall's use counts of facts and procedures are summed in memory and written together (issue 19): none is
lost — forgetting, listings and closing the archive write them first — and a recall writes no transaction."""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.knowledge_duckdb import KNOWLEDGE
from lumina_memory.stores.use_counts import PendingUses

T0 = 1_790_000_000.0


def _rows(user: str, texts: list[str], start: float) -> list[dict]:
    return [{"user_id": user, "speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": start + 60 * i,
             "source_id": f"{user}:{start:.0f}:{i}"} for i, t in enumerate(texts)]


def _stored(table, item_id: str) -> tuple:
    with table.db.read() as con:
        return con.execute(f"SELECT access_count, last_access FROM {KNOWLEDGE} WHERE item_id = ?", [item_id]).fetchone()


def test_uses_are_summed_and_written_before_anyone_reads_them(memory_factory):
    mem = memory_factory()
    table = mem.services.stores.archive.knowledge
    replay(mem.graph, "kana", _rows("kana", ["猫のモカを飼ってるんだ", "かわいいね", "うん、よく寝てる"], T0))
    (fact,) = [r for r in table.recall_items("kana") if "モカ" in str(r["value"])]
    before = _stored(table, fact["item_id"])
    for day in range(3):
        items = recall(mem.services, "kana", "猫の名前は？", purpose="question", limit=5, now_ts=T0 + day * 86_400)
        assert any(i.get("item_id") == fact["item_id"] for i in items)
    assert _stored(table, fact["item_id"]) == before  # nothing written on the recalls' path yet
    table.items("kana", item_ids=[fact["item_id"]])  # a reader: the pending uses go in first
    assert _stored(table, fact["item_id"]) == ((before[0] or 0) + 3, T0 + 2 * 86_400)


def test_closing_the_archive_writes_the_pending_uses(memory_factory, tmp_path):
    mem = memory_factory()
    replay(mem.graph, "kana", _rows("kana", ["猫のモカを飼ってるんだ", "かわいいね", "うん、よく寝てる"], T0))
    table = mem.services.stores.archive.knowledge
    (fact,) = [r for r in table.recall_items("kana") if "モカ" in str(r["value"])]
    assert table.mark_accessed("kana", [fact["item_id"]], T0 + 5) == 1
    data_dir = mem.services.settings.resolved_data_dir()
    mem.close()
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    with DuckDBArchive(data_dir / "archive.duckdb") as archive:
        assert _stored(archive.knowledge, fact["item_id"])[0] >= 1


def test_pending_uses_are_due_by_count_or_age():
    uses = PendingUses(max_pending=3, max_age_seconds=3600)
    assert not uses.add("a", ["x", "y"], 1.0)
    assert not uses.add("a", ["x"], 5.0)
    assert uses.add("b", ["x"], 2.0)  # a third (user, id)
    users, ids, counts, lasts = uses.drain()
    assert sorted(zip(users, ids, counts, lasts)) == [("a", "x", 2, 5.0), ("a", "y", 1, 1.0), ("b", "x", 1, 2.0)]
    assert uses.drain() == ([], [], [], [])
    aged = PendingUses(max_pending=100, max_age_seconds=0.0)
    assert aged.add("a", ["x"], 1.0)
