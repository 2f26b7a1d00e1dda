"""Replays change nothing; one user's memories never reach another."""

from __future__ import annotations

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall


def _snapshot(mem, user_id):
    stats = tier_stats(mem.services, user_id)
    stats.pop("paths")
    stats.pop("costs")  # what the operations cost: this process's own records, not the memory's
    return stats


def test_same_transcript_twice_leaves_every_tier_unchanged(memory, demo_rows):
    rows = demo_rows[:40]
    replay(memory.graph, "alice", rows)
    first = _snapshot(memory, "alice")
    # the same thread again (turns are recognised as already ingested) ...
    replay(memory.graph, "alice", rows)
    assert _snapshot(memory, "alice") == first
    # ... and a fresh checkpoint thread: same deterministic ids, same records
    memory.graph.checkpointer.delete_thread("user:alice")
    replay(memory.graph, "alice", rows)
    assert _snapshot(memory, "alice") == first


def test_another_users_memories_never_come_back(memory, demo_rows):
    secret = [
        {"speaker": "user", "text": "私の銀行の暗証番号は4321で、秘密の合言葉はペンギンです", "ts": 1_790_000_000},
        {"speaker": "nox", "text": "ペンギンの合言葉、誰にも言わないよ", "ts": 1_790_000_030},
    ]
    replay(memory.graph, "alice", secret)
    replay(memory.graph, "bob", demo_rows[:30])
    services = memory.services
    for question in ("暗証番号は？", "ペンギンの合言葉", "猫の名前", "4321"):
        for purpose in ("question", "talking", "reflection"):
            for item in recall(services, "bob", question, purpose=purpose, limit=50):
                assert "ペンギン" not in item["text"] and "4321" not in item["text"]
    stores = services.stores
    alice_turns = {t.turn_id for t in stores.archive.all_turns("alice")}
    assert alice_turns and not alice_turns & {t.turn_id for t in stores.archive.all_turns("bob")}
    assert all(r.user_id == "bob" for r in stores.midterm.recent_segments("bob", 100))
    assert all(s.user_id == "bob" for s in stores.archive.segments("bob"))
    vec = services.embedder.embed(["ペンギンの合言葉"])[0].tolist()
    assert all(h.payload["user_id"] == "bob" for h in stores.vectors.search("bob", vec, 100))
    alice_segments = {s.segment_id for s in stores.archive.segments("alice")}
    bob_graph = stores.graph.segments_for_concepts("bob", ["ペンギン", "合言葉", "暗証番号"], 100)
    assert not alice_segments & {s for s, _ in bob_graph}
    assert stores.vectors.get("bob", list(alice_segments)) == []
    assert stores.graph.counts("bob").nodes["Segment"] == len(stores.archive.segments("bob"))
