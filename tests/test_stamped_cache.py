"""Recall keeps what it reads of a user's tables between queries (issue 19: no DuckDB round trip inside a
recall) and reads again as soon as a write touches the user: a cached read never hides a new fact or a
changed memory, and recall's own flags do not throw the cache away."""

from __future__ import annotations

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall

T0 = 1_790_000_000.0


def _rows(user: str, texts: list[str], start: float) -> list[dict]:
    return [{"user_id": user, "speaker": "user" if i % 2 == 0 else "lumina", "text": t, "ts": start + 60 * i,
             "source_id": f"{user}:{start:.0f}:{i}"} for i, t in enumerate(texts)]


def _loads(archive) -> list[int]:
    return [archive.memories._recall_cache.loads, archive.knowledge._recall_cache.loads,
            archive.procedures._recall_cache.loads]


def test_recall_reads_the_users_tables_once_per_write(memory_factory):
    mem = memory_factory()
    services = mem.services
    archive = services.stores.archive
    replay(mem.graph, "kana", _rows("kana", ["来週から京都に出張なんだ", "いいね", "お土産買ってくる"], T0))
    before = _loads(archive)
    for _ in range(3):
        assert recall(services, "kana", "京都の出張はいつ？", purpose="question", limit=5)
        assert recall(services, "kana", "京都の話をして", purpose="talking", limit=5)
    assert _loads(archive) == before  # the flush read them; recalls (and the flags they write) read nothing

    # A write that touches the user is seen by the very next read.
    view, _gone = archive.memories.recall_view("kana")
    memory_id = next(iter(view))
    assert not archive.memories.rows("kana", [memory_id])[0]["protected"]
    archive.memories.set_protected("kana", memory_id, True, cap=10)
    recall(services, "kana", "京都の出張はいつ？", purpose="question", limit=5)
    assert _loads(archive)[0] == before[0] + 1

    # A new fact learned by the pipeline is in the next recall's read of the facts.
    assert not any("モカ" in str(r["value"]) for r in archive.knowledge.recall_items("kana"))
    replay(mem.graph, "kana", _rows("kana", ["猫のモカを飼ってるんだ", "かわいいね", "うん、よく寝てる"], T0 + 86_400))
    assert any("モカ" in str(r["value"]) for r in archive.knowledge.recall_items("kana"))
    facts = [i for i in recall(services, "kana", "猫の名前は？", purpose="question", limit=5) if i.get("kind") == "knowledge"]
    assert any("モカ" in f["text"] for f in facts)


def test_a_cached_read_is_a_copy(memory_factory):
    mem = memory_factory()
    replay(mem.graph, "kana", _rows("kana", ["猫のモカを飼ってるんだ", "かわいいね", "うん、よく寝てる"], T0))
    table = mem.services.stores.archive.knowledge
    first = table.recall_items("kana")
    assert first
    first[0]["value"] = "changed by a caller"
    first.clear()
    again = table.recall_items("kana")
    assert again and again[0]["value"] != "changed by a caller"


def test_recall_flags_are_written_once_until_the_batch_consumes_them(memory_factory):
    from lumina_memory.stores.memories_duckdb import MEMORIES

    mem = memory_factory()
    replay(mem.graph, "kana", _rows("kana", ["来週から京都に出張なんだ", "いいね", "お土産買ってくる"], T0))
    table = mem.services.stores.archive.memories
    (memory_id,) = list(table.recall_view("kana")[0])

    def flagged() -> bool:
        with table.db.read() as con:
            return con.execute(f"SELECT recalled FROM {MEMORIES} WHERE memory_id = ?", [memory_id]).fetchone()[0]

    def reset(touch: bool) -> None:
        with table.db.tx(touches=("kana",) if touch else ()) as con:
            con.execute(f"UPDATE {MEMORIES} SET recalled = false WHERE memory_id = ?", [memory_id])

    assert table.mark_recalled("kana", [memory_id], T0, False) == 1 and flagged()
    reset(touch=False)  # not how anything clears flags: shows the second call writes nothing
    assert table.mark_recalled("kana", [memory_id], T0, False) == 1 and not flagged()
    reset(touch=True)  # as the batch does: the user's stamp moves, so the flag is written again
    assert table.mark_recalled("kana", [memory_id], T0, False) == 1 and flagged()
    # deliberate recall is its own flag (it may ask for a revival)
    reset(touch=False)
    assert table.mark_recalled("kana", [memory_id], T0, True) == 1 and flagged()


def test_the_profile_priming_shows_is_built_once_per_write_and_forgotten_with_the_user(memory_factory):
    from lumina_memory.graphs.erase import erase_plan, erase_user
    from lumina_memory.nodes.knowledge.profile import cached_profile

    mem = memory_factory()
    services = mem.services
    archive = services.stores.archive
    replay(mem.graph, "mio", _rows("mio", ["星を見に行った", "きれいだった？", "流れ星が見えたよ"], T0))
    loads = archive._derived.loads
    first = cached_profile(services, "mio")
    assert cached_profile(services, "mio") == first and archive._derived.loads == loads + 1  # second from memory
    assert archive.cached_for("mio") == 1
    # New turns of the user: the next profile is built again and sees them.
    replay(mem.graph, "mio", _rows("mio", ["猫を飼い始めた", "名前は？", "猫の名前はミケ"], T0 + 86_400 * 3), flush=True)
    second = cached_profile(services, "mio")
    assert archive._derived.loads == loads + 2
    assert second["updated_at"] > first["updated_at"]
    erase_user(services, "mio", erase_plan(services, "mio")["token"], actor="test")
    assert archive.cached_for("mio") == 0
