"""Undoing forgetting (issue 49) on the real stores, embedded (DuckDB, qdrant-edge, ladybug) and server mode
(PostgreSQL, pgvector, the PostgreSQL graph): a batch's compression, archiving and auto-deletion, and knowledge
forgetting, put back by `undo` within the window and refused after it; an erased user leaves no undo entry."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.forgetting import forget_idle
from lumina_memory.nodes.lifecycle.manage import forget_memory, list_memories
from lumina_memory.nodes.lifecycle.memory_vector import MEMORY_VECTOR_FIELD
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle
from lumina_memory.nodes.lifecycle.undo import undo_forgetting
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.stores.errors import InvalidInput
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow  # replays conversations and runs batches on every engine

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC
SECRET = "undo-test-secret-0123456789abcdef0123"
TOPICS = (
    "ZEBRAMARK 昨日ついに転職の面接に受かった！本当に嬉しい！ずっと頑張ってきたから最高の気分",
    "OKAPIMARK 猫のムギが最近よく寝ている。今日は雨で少し退屈だった",
    "TAPIRMARK 来月から朝のジョギングを始めることにした。決めたからにはやる",
    "LLAMAMARK 週末に友だちと海までドライブして、夕日がとてもきれいだった",
)


def _rows(user: str) -> list[dict]:
    rows = []
    for topic, text in enumerate(TOPICS):
        for i in range(6):
            body = text if i == 0 else f"{text[:20]}の話の続き、その{i}"
            rows.append({"speaker": "user" if i % 2 == 0 else "lumina", "text": body,
                         "ts": T0 + topic * 3 * 3600 + i * 60, "user_id": user})
    return rows


@pytest.fixture(params=["duckdb", "postgres"])
def server(request) -> dict:
    """The settings of one engine: the embedded data dir, or server mode on a database of the test's own
    (requested before ``memory_factory``, so the database outlives the services using it)."""
    return {"database_url": request.getfixturevalue("pg_uri"), "secret_key": SECRET} if request.param == "postgres" else {}


@pytest.fixture
def mem(server, memory_factory):
    """Alice's and Bob's conversations on one engine. The notes' ratios (15/30/35 %) push most of four memories
    down at the first batch, so one batch day compresses and archives."""
    made = memory_factory(lifecycle=LifecycleParams(), **server)
    replay(made.graph, "alice", _rows("alice"))
    replay(made.graph, "bob", _rows("bob")[:12])
    return made


def _episodes(items: list[dict]) -> dict[str, dict]:
    """Recall items of memories by memory id (knowledge items aside)."""
    return {i["segment_id"]: i for i in items if i.get("segment_id") and i.get("kind") != "knowledge"}


def _levels(services, user: str) -> dict[str, int]:
    return {m["memory_id"]: m["level"] for m in list_memories(services, user)}


def _texts(services, user: str) -> dict[str, str]:
    return {m["memory_id"]: m["text"] for m in list_memories(services, user)}


def test_a_compression_undone_brings_back_text_level_vector_and_recall(mem):
    services = mem.services
    before = list_memories(services, "alice")
    assert {m["level"] for m in before} == {1}
    full = {m["memory_id"]: m["text"] for m in before}
    run_lifecycle(services, now=T0 + DAY)
    after = _levels(services, "alice")
    compressed = sorted(m for m, level in after.items() if level in (2, 3))
    assert compressed, after
    target = compressed[0]
    entries = services.stores.archive.memories.undo.entries("alice", target)
    assert [e["step"] for e in entries] == ["compress"] and entries[0]["prior"]["level"] == 1
    point = services.stores.vectors.get("alice", [target])
    assert point and point[0].payload[MEMORY_VECTOR_FIELD] is not None  # the compressed text's vector

    query = full[target].splitlines()[0].partition(": ")[2]
    faded = _episodes(recall(services, "alice", query, purpose="talking", limit=10))
    assert target not in faded or faded[target]["level"] in (2, 3)  # shown as its summary or keywords, if at all

    report = undo_forgetting(services, "alice", memory_id=target, now=T0 + DAY + 60)
    assert report["memories"] == [{"memory_id": target, "step": "compress", "level": 1}]
    assert _texts(services, "alice")[target] == full[target]
    restored = [m for m in list_memories(services, "alice") if m["memory_id"] == target][0]
    assert restored["level"] == 1 and restored["retention"] == pytest.approx(
        [m for m in before if m["memory_id"] == target][0]["retention"], abs=1e-4)
    payload = services.stores.vectors.get("alice", [target])[0].payload
    assert payload["level"] == 1 and payload.get(MEMORY_VECTOR_FIELD) is None  # ranked by its recorded text again
    # Recall for a reply shows the memory as remembered: its full turns again, at level 1.
    shown = _episodes(recall(services, "alice", query, purpose="talking", limit=10))
    assert target in shown and shown[target]["level"] == 1 and shown[target]["from_record"] is False
    assert query[:30] in shown[target]["text"]
    assert services.stores.archive.memories.undo.entries("alice", target) == []  # used up
    with pytest.raises(InvalidInput, match="nothing to undo"):
        undo_forgetting(services, "alice", memory_id=target, now=T0 + DAY + 120)
    # The next batch counts the undo as a recall: reinforced, it is not compressed again by the same decay.
    run_lifecycle(services, now=T0 + 2 * DAY)
    again = [m for m in list_memories(services, "alice") if m["memory_id"] == target][0]
    assert again["recall_count"] == restored["recall_count"] + 1


def test_an_archived_memory_undone_is_active_again_and_bob_is_untouched(mem):
    services = mem.services
    run_lifecycle(services, now=T0 + DAY)
    bob_before = _levels(services, "bob")
    archived = [m for m, level in _levels(services, "alice").items() if level == 4]
    assert archived
    report = undo_forgetting(services, "alice", step="archive", now=T0 + DAY + 60)
    assert {m["memory_id"] for m in report["memories"]} == set(archived)
    assert all(m["level"] in (1, 2, 3) for m in report["memories"])
    assert _levels(services, "bob") == bob_before
    with pytest.raises(InvalidInput, match="nothing to undo"):
        undo_forgetting(services, "bob", memory_id=archived[0], now=T0 + DAY + 60)  # alice's id, through bob


def test_an_auto_deletion_undone_comes_back_in_every_tier(server, memory_factory):
    mem = memory_factory(lifecycle=LifecycleParams(auto_delete_enabled=True, archive_retention_days=0, delete_max_intensity=100,
                                                   delete_require_zero_recall=False), **server)
    services = mem.services
    replay(mem.graph, "alice", _rows("alice"))
    run_lifecycle(services, now=T0 + DAY)  # archives by the ratios
    run_lifecycle(services, now=T0 + 3 * DAY)  # archived more than 0 days ago: deleted
    table = services.stores.archive.memories
    deleted = sorted(e["target_id"] for e in table.undo.entries("alice", step="delete"))
    assert deleted
    assert table.forgotten("alice", deleted) == set(deleted)
    assert not services.stores.vectors.get("alice", deleted)
    report = undo_forgetting(services, "alice", step="delete", now=T0 + 3 * DAY + 60)
    assert sorted(m["memory_id"] for m in report["memories"]) == deleted
    assert all(m["level"] == 4 for m in report["memories"])  # archived again, its archive clock restarted
    assert table.forgotten("alice", deleted) == set()
    rows = {r["memory_id"]: r for r in table.rows("alice", deleted)}
    assert set(rows) == set(deleted)
    assert {int(r["archived_on"]) for r in rows.values()} == {run_today(services, T0 + 3 * DAY + 60)}
    points = services.stores.vectors.get("alice", deleted)
    assert points and all(p.payload["level"] == 4 for p in points)


def run_today(services, now: float) -> int:
    from lumina_memory.nodes.lifecycle.run import today_of

    return today_of(services, now)


def test_the_window_expires_and_undo_refuses_then_maintenance_purges(mem):
    services = mem.services
    run_lifecycle(services, now=T0 + DAY)
    table = services.stores.archive.memories
    held = table.undo.count("alice")
    assert held > 0
    late = T0 + DAY + 31 * DAY
    with pytest.raises(InvalidInput, match=r"undo window has passed.*30 days.*UNDO_WINDOW_DAYS"):
        undo_forgetting(services, "alice", step="compress", now=late)
    assert table.undo.count("alice") == held  # refused: nothing used up
    report = run_lifecycle(services, now=late)
    assert report["undo_purged"] >= held
    assert all(e["ts"] >= late - 30 * DAY for e in table.undo.entries("alice"))


def test_knowledge_forgetting_undone(mem):
    services = mem.services
    knowledge = services.stores.archive.knowledge
    items = knowledge.items("alice")
    assert items, "the replay taught no fact"
    params = services.settings.knowledge
    later = max(i["said_at"] for i in items) + (params.forget_idle_days + 1) * DAY
    assert knowledge.mark_low_activity(later, params.forget_idle_days, params.forget_min_accesses, []) > 0
    forgotten_at = later + (params.forget_after_low_activity_days + 1) * DAY
    gone = forget_idle(services, forgotten_at, "alice")
    assert gone and all(u == "alice" for u, _ in gone)
    ids = [i for _u, i in gone]
    assert not {i["item_id"] for i in knowledge.items("alice")} & set(ids)
    assert [e["step"] for e in services.stores.archive.memories.undo.entries("alice", ids[0])] == ["knowledge"]
    report = undo_forgetting(services, "alice", step="knowledge", now=forgotten_at + 60)
    assert sorted(report["facts"]) == sorted(ids)
    back = {i["item_id"]: i for i in knowledge.items("alice", item_ids=ids)}
    assert all(back[i]["forgotten_at"] is None for i in ids)
    assert set(ids) <= {i["item_id"] for i in knowledge.items("alice", history=True, remembered=True)}


def test_erasure_leaves_no_undo_entry(mem):
    services = mem.services
    run_lifecycle(services, now=T0 + DAY)
    table = services.stores.archive.memories
    assert table.undo.count("alice") > 0 and table.undo.count("bob") > 0
    plan = erase_plan(services, "alice")
    assert plan["counts"]["archive.memory_undo"] == table.undo.count("alice")
    erase_user(services, "alice", plan["token"], actor="test")
    assert table.undo.count("alice") == 0 and table.undo.entries("alice") == []
    assert table.undo.count("bob") > 0
    with pytest.raises(InvalidInput, match="nothing to undo"):
        undo_forgetting(services, "alice", now=T0 + DAY + 60)


def test_a_backup_carries_the_undo_log_and_the_restored_copy_can_undo(memory_factory, tmp_path):
    mem = memory_factory(lifecycle=LifecycleParams())
    replay(mem.graph, "alice", _rows("alice"))
    run_lifecycle(mem.services, now=T0 + DAY)
    held = mem.services.stores.archive.memories.undo.entries("alice")
    assert held
    backup_now(mem.services, str(tmp_path / "backups"))
    copy = memory_factory(lifecycle=LifecycleParams())
    restore_from(copy.services, str(tmp_path / "backups"))
    table = copy.services.stores.archive.memories
    assert [(e["target_id"], e["step"], e["prior"]) for e in table.undo.entries("alice")] == [
        (e["target_id"], e["step"], e["prior"]) for e in held]
    report = undo_forgetting(copy.services, "alice", step="compress", now=T0 + DAY + 60)
    assert report["memories"] and all(m["level"] == 1 for m in report["memories"])


def test_undoing_an_archiving_also_undoes_the_deletion_that_followed(server, memory_factory):
    mem = memory_factory(lifecycle=LifecycleParams(auto_delete_enabled=True, archive_retention_days=0,
                                                   delete_max_intensity=100, delete_require_zero_recall=False), **server)
    services = mem.services
    replay(mem.graph, "alice", _rows("alice"))
    run_lifecycle(services, now=T0 + DAY)
    run_lifecycle(services, now=T0 + 3 * DAY)
    table = services.stores.archive.memories
    deleted = {e["target_id"] for e in table.undo.entries("alice", step="delete")}
    archived = {e["target_id"] for e in table.undo.entries("alice", step="archive")}
    assert deleted and deleted <= archived
    report = undo_forgetting(services, "alice", step="archive", now=T0 + 3 * DAY + 60)
    assert {m["memory_id"] for m in report["memories"]} == archived
    assert all(m["level"] in (1, 2, 3) for m in report["memories"])  # back before the archiving, so active
    assert table.forgotten("alice", sorted(deleted)) == set()
    points = services.stores.vectors.get("alice", sorted(deleted))
    assert len(points) == len(deleted) and all(p.payload["level"] < 4 for p in points)
    assert table.undo.entries("alice", step="delete") == []  # used up with the archiving they followed


def test_a_memory_forgotten_on_purpose_takes_its_undo_entries_with_it(mem):
    """`forget` (and retention, through the same delete) is never undoable: the undo log must not keep a copy
    of the memory's text after the memory is gone."""
    services = mem.services
    run_lifecycle(services, now=T0 + DAY)
    table = services.stores.archive.memories
    target = next(e["target_id"] for e in table.undo.entries("alice") if e["step"] == "compress")
    forget_memory(services, "alice", target)
    assert table.undo.entries("alice", target) == []
    with pytest.raises(InvalidInput, match="nothing to undo"):
        undo_forgetting(services, "alice", memory_id=target, now=T0 + DAY + 60)
    assert table.undo.entries("alice")  # the others' entries stay
