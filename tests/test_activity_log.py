"""A10: the activity log records what happened per user, rotates, and is a UserDataPlace."""

from __future__ import annotations

import os
import stat

from langchain_core.messages import HumanMessage

from lumina_memory.nodes.activity import activity_log, recent_activity
from lumina_memory.stores.activity_log import ActivityLog
from lumina_memory.stores.ids import user_file_stem


def test_turns_segments_recalls_and_replies_are_recorded(memory):
    config = {"configurable": {"thread_id": "act"}}
    ctx = {"user_id": "ann@example.com", "respond": False}
    for i, text in enumerate(["うちの猫のモカは3歳なんだ", "茶トラでかわいいよ"]):
        memory.graph.invoke({"turn": {"speaker": "user", "text": text, "ts": 1_790_000_000 + i}}, config, context=ctx)
    memory.graph.invoke({"flush": True}, config, context=ctx)
    memory.graph.invoke({"messages": [HumanMessage("モカって何歳だっけ？ 連絡先は090-1234-5678")]}, config,
                        context={"user_id": "ann@example.com"})
    events = recent_activity(memory.services, "ann@example.com", limit=50)
    kinds = [e["event"] for e in events]
    assert kinds == ["turns", "turns", "segment_closed", "turns", "recall", "reply"]
    closed = events[2]
    segment = memory.services.stores.archive.segments("ann@example.com")[0]
    assert closed["segment_id"] == segment.segment_id and closed["turns"] == 2
    recall = events[4]
    assert recall["query"].startswith("モカって何歳") and "[電話番号]" in recall["query"]  # redacted text only
    assert recall["items"] >= 1 and "090-1234-5678" not in str(events)
    assert recent_activity(memory.services, "ann@example.com", limit=2, events=("recall", "reply")) == events[4:]
    # another user sees none of it; file names are hashes, never the id
    assert recent_activity(memory.services, "bob", limit=50) == []
    log = activity_log(memory.settings)
    names = [p.name for p in log.folder.iterdir()]
    assert names == [f"{user_file_stem('ann@example.com')}.jsonl"] and "ann" not in names[0]
    assert stat.S_IMODE(os.stat(log.folder / names[0]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(log.folder).st_mode) == 0o700


def test_rotation_keeps_the_newest_files(tmp_path):
    log = ActivityLog(tmp_path / "activity", max_bytes=10_000, keep=2)
    for i in range(600):
        log.append("u1", "turns", count=i, first="x" * 40)
    log.append("u2", "turns", count=0)
    files = log.files_of("u1")
    assert [f.name.split(".", 1)[1] for f in files] == ["jsonl", "1.jsonl", "2.jsonl"]
    kept = [e["count"] for e in log.events("u1")]
    assert kept == list(range(kept[0], 600)) and kept[0] > 0  # the oldest were rotated out, in order
    assert all(f.stat().st_size < 10_000 + 200 for f in files)
    assert [e["count"] for e in log.recent("u1", 3)] == [597, 598, 599]
    assert log.count("u2") == 1


def test_torn_lines_are_skipped_and_the_place_erases_exports_restores(tmp_path):
    log = ActivityLog(tmp_path / "activity")
    for user in ("alice", "alice2", "bob"):
        log.append(user, "turns", count=1)
        log.append(user, "recall", items=2)
    with log.path_of("alice").open("ab") as handle:
        handle.write(b'{"at": 1, "event": "tu')  # a crash mid-write
    assert [e["event"] for e in log.recent("alice", 10)] == ["turns", "recall"]
    ActivityLog(tmp_path / "activity").append("alice", "reply", chars=3)  # a new process after the crash
    assert [e["event"] for e in log.recent("alice", 10)] == ["turns", "recall", "reply"]
    backup = tmp_path / "backup"
    assert log.export(backup) == 7
    assert log.erase("alice") == 3 and log.count("alice") == 0
    assert log.count("alice2") == 2 and log.count("bob") == 2  # a prefix of another id is another user
    assert log.forget_in_export(backup, "bob") == 2
    fresh = ActivityLog(tmp_path / "restored")
    assert fresh.restore(backup, lambda user: user == "alice") == 2
    assert fresh.count("alice") == 0 and fresh.count("alice2") == 2 and fresh.count("bob") == 0


def test_retention_prunes_old_events(tmp_path):
    log = ActivityLog(tmp_path / "activity")
    for at in (100.0, 200.0, 300.0):
        log.append("u", "turns", at=at)
    log.append("v", "turns", at=50.0)
    assert log.prune(older_than=250.0) == 3
    assert [e["at"] for e in log.events("u")] == [300.0]
    assert log.count("v") == 0 and not log.path_of("v").exists()
