"""The forgetting lifecycle end to end on the embedded defaults (issue 17), on a simulated clock:
revival (F5) from deliberate recall to priming, auto-delete (off by default, the notes' AND/OR conditions)
from every tier while the record keeps the turns, manual deletion through the CLI, and crash recovery that
must not undo compression.

Every test ingests the same five conversations and runs the daily batch one simulated day at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
import numpy as np
import pytest

from lumina_memory.graphs.context import RunContext
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.lifecycle.manage import list_memories, set_protected
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle, today_of
from lumina_memory.nodes.recovery import recover, rederive
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieve_context import retrieve_context
from lumina_memory.nodes.services import open_services

from .conftest import make_settings

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC = 09:00 in Tokyo, the default LUMINA_TIMEZONE
USER = "alice"
TOPICS = {
    "joy": "昨日ついに転職の面接に受かった！本当に嬉しい！ずっと頑張ってきたから最高の気分",
    "cat": "猫のムギが最近よく寝ている。今日は雨で少し退屈だった",
    "jog": "来月から朝のジョギングを始めることにした。決めたからにはやる",
    "mother": "覚えておいて、母の誕生日は三月十二日でチューリップが好き",  # F8: protected at encoding
    "cat2": "猫のムギが今日もよく寝ていた。雨の日は少し退屈だね",
}
REPLIES = ("そうなんだ、もっと聞かせて", "なるほどね", "それでどうなったの？")
CAT_QUESTION = "猫のムギはよく寝てる？"


def conversation(user: str) -> list[dict]:
    """Five conversations three hours apart on 1 January (each its own segment, hence its own memory)."""
    rows = []
    for n, text in enumerate(TOPICS.values()):
        for i in range(6):
            speaker = "user" if i % 2 == 0 else "lumina"
            body = text if i == 0 else (f"{text[:12]}、その{i}" if speaker == "user" else REPLIES[i // 2])
            rows.append({"speaker": speaker, "text": body, "ts": T0 + n * 3 * 3600 + i * 60, "user_id": user})
    return rows


def ingest(memory_factory, user: str = USER, **params):
    mem = memory_factory(lifecycle=LifecycleParams(**params))
    replay(mem.graph, user, conversation(user))
    assert len(memory_ids(mem.services, user)) == len(TOPICS)  # one memory per conversation
    return mem


def memory_ids(services, user: str = USER) -> dict[str, str]:
    """Topic name -> memory id of the memories there are now, found by their segment's first line (a
    compressed memory's own text no longer has it)."""
    found = {}
    for row in services.stores.archive.memories.rows(user):
        for name, text in TOPICS.items():
            if text in (row["segment_text"] or ""):
                found[name] = row["memory_id"]
    return found


def memory(services, memory_id: str, user: str = USER) -> dict | None:
    return next((m for m in list_memories(services, user) if m["memory_id"] == memory_id), None)


def run_day(services, day: int, user: str | None = None) -> dict:
    """The batch as the maintenance run does it, at 09:00 Tokyo on 1 January + ``day``."""
    return run_lifecycle(services, now=T0 + day * DAY, user_id=user)


def run_days(services, first: int, last: int) -> None:
    for day in range(first, last + 1):
        run_day(services, day)


def run_until(services, memory_id: str, level: int, last: int, first: int = 1) -> int:
    """Days one at a time until the memory reaches ``level`` (or is deleted); returns that day."""
    for day in range(first, last + 1):
        run_day(services, day)
        now = memory(services, memory_id)
        if now is None or now["level"] == level:
            return day
    raise AssertionError(f"{memory_id} never reached level {level} by day {last}")


def payload(services, memory_id: str, user: str = USER) -> dict | None:
    hits = services.stores.vectors.get(user, [memory_id])
    return hits[0].payload if hits else None


def primed(services, question: str, now: float, user: str = USER) -> list[dict]:
    """What retrieve_context (the node a reply runs) gives the character for ``question``."""
    turn = {"turn_id": f"q-{now:.0f}", "source_id": f"q-{now:.0f}", "speaker": "user", "text": question, "ts": now}
    out = retrieve_context({"turns": [turn]}, RunContext(user_id=user, purpose="talking"), services)
    return out["recalled"]


def memories_in(items: list[dict]) -> dict[str, dict]:
    """Recall items of memories (episodes) by memory id. Knowledge items (issue 18: facts, grounded in the
    segments they came from) are not memories the lifecycle acts on."""
    return {i["segment_id"]: i for i in items if i.get("segment_id") and i.get("kind") != "knowledge"}


def graph_mentions(services, segment_id: str) -> list[tuple[str, dict]]:
    """Every graph node or edge (by kind) that names the segment."""
    return [(kind, row) for kind, rows in services.stores.graph.dump().items() for row in rows
            if segment_id in row.values()]


def revival_score(row: dict, today: int, params: LifecycleParams) -> float:
    """F5 as the notes write it: intensity × 0.995^days archived, at least level3_threshold + margin."""
    archived_days = today - int(row["archived_on"])
    return max(float(row["intensity"]) * params.revival_decay_per_day ** archived_days,
               params.level3_threshold + params.revival_min_margin)


# --- F5 revival --------------------------------------------------------------------------------------
def test_an_archived_memory_recalled_on_purpose_is_revived_at_level_3_and_primed_again(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100)  # thresholds alone: level 3 has room
    services, params = mem.services, mem.settings.lifecycle
    cat = memory_ids(services)["cat"]
    archived_day = run_until(services, cat, 4, last=30)
    assert payload(services, cat)["level"] == 4

    # Priming never shows an archived memory, whatever the question.
    assert cat not in memories_in(recall(services, USER, CAT_QUESTION, purpose="talking"))
    assert cat not in memories_in(primed(services, CAT_QUESTION, T0 + archived_day * DAY + 60))

    # Deliberate recall reaches it, says it is archived and from the record, and flags it.
    asked = memories_in(recall(services, USER, CAT_QUESTION, purpose="question", limit=10))
    assert cat in asked and asked[cat]["archived"] is True and asked[cat]["level"] == 4
    assert asked[cat]["from_record"] is True
    flagged = memory(services, cat)
    assert flagged["revival_requested"] is True and flagged["level"] == 4

    revival_day = archived_day + 1
    row = services.stores.archive.memories.rows(USER, [cat])[0]
    expected = revival_score(row, today_of(services, T0 + revival_day * DAY), params)
    report = run_day(services, revival_day)
    assert report["revived"] >= 1
    revived = memory(services, cat)
    assert revived["level"] == 3 and not revived["archived"] and not revived["revival_requested"]
    assert revived["retention"] == pytest.approx(expected, abs=1e-4)
    assert revived["text"] and len(revived["text"]) < len(row["segment_text"])  # its level-3 text
    # The long-term tier says so too, and priming may show it again, as it stands at level 3.
    point = payload(services, cat)
    assert point["level"] == 3 and point["retention"] == pytest.approx(expected, abs=1e-4)
    again = memories_in(primed(services, CAT_QUESTION, T0 + revival_day * DAY + 60))
    assert cat in again and again[cat]["level"] == 3 and again[cat]["archived"] is False
    assert again[cat]["text"] == revived["text"]


def test_revival_is_refused_while_level_3_is_full_and_granted_once_the_ratio_leaves_room(memory_factory):
    # The notes' ratios from the first memory: of the four unprotected memories at most floor(0.35 × 4) = 1
    # stays at level 3, and the two with the lowest retention go to the archive at the first batch.
    mem = ingest(memory_factory)
    services, params = mem.services, mem.settings.lifecycle
    ids = memory_ids(services)
    run_day(services, 1)
    levels = {name: memory(services, mid)["level"] for name, mid in ids.items()}
    assert levels["cat"] == 4 and levels["mother"] == 1  # protected: outside the ratios
    assert list(levels.values()).count(3) == int(params.level3_ratio * 4)

    asked = memories_in(recall(services, USER, CAT_QUESTION, purpose="question", limit=10))
    assert asked[ids["cat"]]["archived"] is True and memory(services, ids["cat"])["revival_requested"]
    report = run_day(services, 2)
    refused = memory(services, ids["cat"])
    assert refused["level"] == 4 and refused["revival_requested"] is False  # the request is cleared
    assert report["revived"] == 0 and payload(services, ids["cat"])["level"] == 4
    assert ids["cat"] not in memories_in(primed(services, CAT_QUESTION, T0 + 2 * DAY + 60))

    # An operator gives level 3 more room (55 %: two of four); the next deliberate recall is granted.
    roomier = LifecycleParams(level1_ratio=0.15, level2_ratio=0.30, level3_ratio=0.55, delete_ratio=0.0)
    services = reopen(mem, roomier)
    recall(services, USER, CAT_QUESTION, purpose="question", limit=10)
    assert memory(services, ids["cat"])["revival_requested"]
    row = services.stores.archive.memories.rows(USER, [ids["cat"]])[0]
    expected = revival_score(row, today_of(services, T0 + 3 * DAY), roomier)
    report = run_day(services, 3)
    revived = memory(services, ids["cat"])
    assert revived["level"] == 3 and revived["retention"] == pytest.approx(expected, abs=1e-4)
    assert report["revived"] >= 1 and payload(services, ids["cat"])["level"] == 3


def reopen(mem, params: LifecycleParams):
    """The same data directory opened again with other lifecycle settings (an operator's change)."""
    mem.services.close()
    mem.settings = make_settings(mem.settings.data_dir, lifecycle=params)
    mem.services = open_services(mem.settings)
    return mem.services


# --- auto-delete -------------------------------------------------------------------------------------
def tiers(services, memory_id: str, user: str = USER) -> dict[str, bool]:
    """Where a memory is: its lifecycle row, relations (archive and graph), long-term point, mid-term
    record, graph nodes/edges."""
    table = services.stores.archive.memories
    return {
        "memory row": bool(table.rows(user, [memory_id])),
        "archive relations": bool(table.relations(user, [memory_id])),
        "long-term": bool(services.stores.vectors.get(user, [memory_id])),
        "mid-term": services.stores.midterm.get_segment(user, memory_id) is not None,
        "graph": bool(graph_mentions(services, memory_id)),
        "graph relations": bool(services.stores.graph.relations(user, [memory_id])),
    }


def test_auto_delete_is_off_by_default(memory_factory):
    assert LifecycleParams().auto_delete_enabled is False
    assert make_settings(Path("unused")).lifecycle.auto_delete_enabled is False
    # Conditions that would delete both cat memories once 10 days archived, but the switch stays off.
    mem = ingest(memory_factory, archive_retention_days=10, delete_max_intensity=40)
    services = mem.services
    ids = memory_ids(services)
    before = {memory_id: tiers(services, memory_id) for memory_id in ids.values()}
    run_day(services, 1)
    report = run_day(services, 400)  # catch-up: 399 days, one at a time
    assert report["days"] == 399 and report["deleted"] == 0
    assert memory_ids(services) == ids
    assert {ids["cat"], ids["cat2"]} <= {m["memory_id"] for m in list_memories(services, USER) if m["archived"]}
    after = {memory_id: tiers(services, memory_id) for memory_id in ids.values()}
    for memory_id, where in before.items():  # relations come and go; the memory stays wherever it was
        for tier in ("memory row", "long-term", "mid-term", "graph"):
            assert after[memory_id][tier] == where[tier], (memory_id, tier)


def test_auto_delete_removes_a_memory_from_every_tier_keeps_its_turns_and_spares_the_protected(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100, auto_delete_enabled=True, archive_retention_days=10,
                 delete_max_intensity=40)
    services = mem.services
    ids = memory_ids(services)
    doomed, twin = ids["cat"], ids["cat2"]  # the first went long-term at ingest; the near-copy did not
    archived_day = run_until(services, doomed, 4, last=30)
    assert memory(services, twin)["level"] == 4  # the twin went the same day
    # The user protects the twin once archived (F8: never deleted), and an archived memory keeps a relation
    # it points from (F6: frozen with it): the deletion must take that relation too.
    set_protected(services, USER, twin, True)
    table = services.stores.archive.memories
    assert table.add_relations(USER, [(doomed, ids["joy"], "references", 0.9)], today_of(services, T0)) == 1
    run_day(services, archived_day + 1)
    present = tiers(services, doomed)
    assert all(present.values()), present  # every tier holds it, its relation mirrored in the graph
    segment = services.stores.archive.get_segment(USER, doomed)
    turns_before = services.stores.archive.get_turns(USER, segment.turn_ids)

    deleted_on, report = None, {}
    for day in range(archived_day + 2, archived_day + 20):
        report = run_day(services, day)
        if report["deleted"]:
            deleted_on = day
            break
    retention_days = mem.settings.lifecycle.archive_retention_days
    assert deleted_on == archived_day + retention_days + 1  # the first day it was archived MORE than 10 days
    assert report["deleted"] == 1 and report["transitions"][3][4] == 1  # level 4 -> deleted

    gone = tiers(services, doomed)
    assert not any(gone.values()), gone
    assert all(doomed not in (r["src"], r["dst"]) for r in table.relations(USER))
    assert all(doomed not in r[:2] for r in services.stores.graph.relations(USER))
    assert all(doomed != r["memory_id"] for m in list_memories(services, USER) for r in m["relations"])
    # Forgetting changes what is remembered, not what is recorded: the turns, and their index for recall.
    assert services.stores.archive.get_segment(USER, doomed) is not None
    assert services.stores.archive.get_turns(USER, segment.turn_ids) == turns_before
    assert len(services.stores.turns.vectors_of(USER, segment.turn_ids)) == len(segment.turn_ids)
    # The protected twin stays, archived, wherever it was; so do the memories the conditions do not meet.
    run_days(services, deleted_on + 1, deleted_on + 30)
    kept = tiers(services, twin)
    assert kept["memory row"] and kept["mid-term"] and kept["graph"], kept
    assert memory(services, twin)["level"] == 4 and memory(services, twin)["protected"]
    assert set(memory_ids(services)) == {"joy", "jog", "mother", "cat2"}


@pytest.mark.parametrize("mode,retention_days,max_intensity,zero_recall,deleted", [
    ("AND", 10, 40, True, True),  # archived > 10 days, intensity 32 < 40, never recalled: all three hold
    ("AND", 1000, 40, True, False),  # not archived long enough
    ("AND", 10, 20, True, False),  # too intense to go
    ("OR", 1000, 40, False, True),  # intensity alone is enough
    ("OR", 1000, 20, False, False),  # neither holds
    ("OR", 10, 20, False, True),  # age alone is enough
])
def test_auto_delete_conditions_and_or(memory_factory, mode, retention_days, max_intensity, zero_recall, deleted):
    mem = ingest(memory_factory, ratio_min_memories=100, auto_delete_enabled=True, delete_condition_mode=mode,
                 archive_retention_days=retention_days, delete_max_intensity=max_intensity,
                 delete_require_zero_recall=zero_recall)
    services = mem.services
    ids = memory_ids(services)
    run_days(services, 1, 25)  # the cats are archived on day 7 (retention below 5)
    left = set(memory_ids_now(services))
    cats = {ids["cat"], ids["cat2"]}
    assert (not (cats & left)) is deleted
    assert {ids["joy"], ids["mother"], ids["jog"]} <= left  # not archived: never candidates


def test_a_fact_learned_from_auto_deleted_memories_stays_in_every_knowledge_tier(memory_factory):
    """Defect: the lifecycle's deletion removed the graph's Knowledge node of a fact only those memories
    supported, while the archive and the knowledge vectors kept it (the tiers disagreed)."""
    mem = ingest(memory_factory, ratio_min_memories=100, auto_delete_enabled=True, delete_condition_mode="OR",
                 archive_retention_days=1000, delete_max_intensity=40, delete_require_zero_recall=False)
    services = mem.services
    ids = memory_ids(services)
    cats = {ids["cat"], ids["cat2"]}
    pet = [r for r in services.stores.archive.knowledge.items(USER) if (r["attribute"], r["value"]) == ("pet", "ムギ")]
    assert len(pet) == 1 and set(pet[0]["episode_ids"]) <= cats, pet  # only the cat memories told it
    item_id = pet[0]["item_id"]
    run_days(services, 1, 25)
    assert not cats & set(memory_ids_now(services))  # both forgotten
    assert [r["item_id"] for r in services.stores.archive.knowledge.items(USER, item_ids=[item_id])] == [item_id]
    assert item_id in services.stores.knowledge.items_of(USER, [item_id])
    in_graph = {k["item_id"]: k for k in services.stores.graph.knowledge(USER)}
    assert item_id in in_graph and in_graph[item_id]["value"] == "ムギ"
    assert not set(in_graph[item_id]["episode_ids"]) & cats  # the memories' Segment nodes went, the fact did not


def test_a_recalled_memory_is_kept_when_the_conditions_require_zero_recalls(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100, auto_delete_enabled=True, archive_retention_days=10,
                 delete_max_intensity=40)
    services = mem.services
    ids = memory_ids(services)
    run_day(services, 1)
    services.stores.archive.memories.mark_recalled(USER, [ids["cat"]], T0 + DAY + 60, deliberate=False)
    archived_day = run_until(services, ids["cat"], 4, first=2, last=40)
    run_days(services, archived_day + 1, archived_day + 30)
    left = set(memory_ids_now(services))
    assert memory(services, ids["cat"])["recall_count"] == 1 and ids["cat"] in left
    assert ids["cat2"] not in left  # its never-recalled twin went


def memory_ids_now(services, user: str = USER) -> list[str]:
    return [m["memory_id"] for m in list_memories(services, user)]


def test_priming_never_shows_a_deleted_memory_and_deliberate_recall_says_it_comes_from_the_record(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100, auto_delete_enabled=True, archive_retention_days=10,
                 delete_max_intensity=40)
    services = mem.services
    ids = memory_ids(services)
    run_days(services, 1, 25)
    cats = {ids["cat"], ids["cat2"]}
    assert not cats & set(memory_ids_now(services))
    assert not cats & set(memories_in(primed(services, CAT_QUESTION, T0 + 25 * DAY + 60)))
    reached = memories_in(recall(services, USER, CAT_QUESTION, purpose="question", limit=10))
    asked = [item for memory_id, item in reached.items() if memory_id in cats]
    assert asked, "deliberate recall still reaches the record's turns"
    assert all(i.get("from_record") is True for i in asked)


def test_a_rederive_after_auto_delete_does_not_bring_the_memory_back(memory_factory):
    """Doctor's repair (rederive) rebuilds derived tiers from the archive's segments; a memory the lifecycle
    deleted keeps its segment in the record, and must stay forgotten in the derived tiers."""
    mem = ingest(memory_factory, ratio_min_memories=100, auto_delete_enabled=True, archive_retention_days=10,
                 delete_max_intensity=40)
    services = mem.services
    ids = memory_ids(services)
    run_days(services, 1, 25)
    cats = (ids["cat"], ids["cat2"])
    assert not any(any(tiers(services, memory_id).values()) for memory_id in cats)
    rederive(services, USER)
    for memory_id in cats:
        where = tiers(services, memory_id)
        assert not any(where.values()), (memory_id, where)


# --- crash recovery keeps the lifecycle's level state (defect: payload reset to level 1) -------------------
def test_a_recovery_reupsert_keeps_the_compressed_level_payload_and_vector(memory_factory):
    mem = ingest(memory_factory, ratio_min_memories=100)
    services = mem.services
    ids = memory_ids(services)
    run_until(services, ids["cat"], 3, last=10)
    set_protected(services, USER, ids["joy"], True)
    row = services.stores.archive.memories.rows(USER, [ids["cat"]])[0]
    assert row["text"] and payload(services, ids["cat"])["level"] == 3 and payload(services, ids["joy"])["protected"]
    assert_level_state(services, USER, [ids["cat"]])

    # The outbox says the long-term write is owed (a process killed after the archive commit, Qdrant down
    # at the time): start-up recovery re-upserts the segments from the archive.
    archive = services.stores.archive
    archive.put_outbox([(USER, ids["cat"], ["qdrant"], "promoted"), (USER, ids["joy"], ["qdrant"], "promoted")])
    report = recover(services, reason="test")
    assert report["completed long-term"] == 2 and report["still owed"] == 0
    assert_level_state(services, USER, [ids["cat"], ids["joy"]])
    assert payload(services, ids["joy"])["protected"] is True

    # Doctor's repair re-derives every segment: the same holds for all of them.
    run_days(services, 11, 60)
    rederive(services, USER)
    assert_level_state(services, USER, memory_ids_now(services))


def _cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_level_state(services, user: str, memory_ids: list[str]) -> None:
    """Each memory's long-term point says its level, retention and protection as the archive holds them;
    its vector stays the recorded segment's, and a compressed memory carries its compressed text's vector
    as ``memory_vector``."""
    rows = {r["memory_id"]: r for r in services.stores.archive.memories.rows(user, memory_ids)}
    recorded = {r.segment_id: r.embedding for r in services.stores.archive.segments(user)}
    for memory_id, row in rows.items():
        point = payload(services, memory_id, user)
        if point is None:  # not promoted to long-term
            continue
        assert point.get("level") == int(row["level"]), (memory_id, point.get("level"), row["level"])
        assert point.get("retention") == pytest.approx(float(row["retention"]), abs=1e-4)
        assert point.get("protected") == bool(row["protected"])
        hit = services.stores.vectors.search(user, list(map(float, recorded[memory_id])), 1)[0]
        assert hit.payload["segment_id"] == memory_id and hit.score == pytest.approx(1.0, abs=1e-3)
        if int(row["level"]) > 1:
            vector = services.embedder.embed([row["text"]])[0]
            assert _cosine(point["memory_vector"], vector) == pytest.approx(1.0, abs=1e-3), memory_id
            assert _cosine(point["memory_vector"], recorded[memory_id]) < 0.999  # the text changed


# --- the CLI, as a user would: recall --json, maintain --now, memories --json, forget ----------------------
@pytest.fixture
def cli(cli_factory):
    """``main`` called in this process: what the commands do is the subject, not the process boundary."""
    return cli_factory(in_process=True, LUMINA_LIFECYCLE__RATIO_MIN_MEMORIES="100")


def test_revival_and_forget_through_the_cli(cli, tmp_path):
    file = tmp_path / "chat.jsonl"
    lines = [{**row, "source_id": f"c{n}"} for n, row in enumerate(conversation("kana"))]
    file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    cli("ingest", str(file))

    def memories() -> dict[str, dict]:
        return {m["memory_id"]: m for m in json.loads(cli("memories", "--user", "kana", "--json").stdout)}

    cat = next(m for m in memories().values() if TOPICS["cat"] in m["text"])["memory_id"]
    report = json.loads(cli("maintain", "--user", "kana", "--now", "2026-01-02T09:00+09:00", "--json").stdout)
    assert report["lifecycle"]["days"] == 1
    report = json.loads(cli("maintain", "--user", "kana", "--now", "2026-01-20T09:00+09:00", "--json").stdout)
    assert report["lifecycle"]["days"] == 18
    assert memories()[cat]["archived"] is True

    items = json.loads(cli("recall", "--user", "kana", CAT_QUESTION, "--json", "--limit", "10").stdout)
    reached = memories_in(items).get(cat)
    assert reached and reached["archived"] is True and reached["level"] == 4
    assert memories()[cat]["revival_requested"] is True
    report = json.loads(cli("maintain", "--user", "kana", "--now", "2026-01-21T09:00+09:00", "--json").stdout)
    assert report["lifecycle"]["revived"] >= 1
    revived = memories()[cat]
    assert revived["level"] == 3 and revived["archived"] is False and revived["revival_requested"] is False

    turn_ids = revived["source_turn_ids"]
    forgotten = json.loads(cli("forget", "--user", "kana", cat, "--json").stdout)
    assert forgotten["lifecycle"] == 1 and forgotten["segment"] == 1 and forgotten["turns"] == len(turn_ids)
    assert cat not in memories()
    items = json.loads(cli("recall", "--user", "kana", CAT_QUESTION, "--json", "--limit", "10").stdout)
    assert cat not in memories_in(items)
    assert cli("forget", "--user", "kana", cat, check=False).returncode == 2  # gone: not found

    # Every tier, read in-process once the CLI has let go of the data directory.
    settings = make_settings(cli.data_dir)
    services = open_services(settings)
    try:
        assert services.stores.vectors.get("kana", [cat]) == []
        assert services.stores.midterm.get_segment("kana", cat) is None
        assert not graph_mentions(services, cat)
        assert services.stores.archive.get_turns("kana", turn_ids) == []
        assert services.stores.turns.vectors_of("kana", turn_ids) == {}
        assert services.stores.archive.memories.relations("kana", [cat]) == []
    finally:
        services.close()

