"""The knowledge and procedure tables on both engines (issue 47's server mode): the same shared SQL on an embedded
DuckDB file and on a real private PostgreSQL; two connections on one PostgreSQL database share one memory."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.procedures import record_outcome
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.kb_duckdb import BASES, CHUNKS, DOCUMENTS, KBCatalog
from lumina_memory.stores.knowledge_duckdb import KNOWLEDGE, KnowledgeTable
from lumina_memory.stores.memories_duckdb import MemoryTable
from lumina_memory.stores.memories_schema import MEMORIES, NEW_COLUMNS
from lumina_memory.stores.procedures_duckdb import PROCEDURES, ProcedureTable

from .sql_engines import pg_server, sql_db, sql_pair  # noqa: F401 - fixtures

DAY = 86_400.0
MAY = 1_778_000_000.0  # 2026-05
HOSTILE = ("../etc", "x' OR '1'='1", "'; DROP TABLE knowledge_items; --", "a) DETACH DELETE (n", "", "a\ud800")


def item(user: str, item_id: str, episodes: list[str], said_at: float = MAY, **changes) -> dict:
    row = {"item_id": item_id, "user_id": user, "subject": "user", "attribute": "likes", "value": item_id,
           "value_key": item_id, "polarity": "positive", "detail": "", "context": "", "category": "preference",
           "event_date": None, "when_text": "", "text": f"I like {item_id}", "source_turn_ids": [f"t-{item_id}"],
           "source_ids": [f"src:{item_id}"], "episode_ids": episodes, "said_at": said_at, "valid_from": said_at,
           "valid_to": None, "superseded_by": None, "status": "current", "note": "", "confidence": 0.9,
           "method": "offline", "pattern": "", "updated_at": said_at}
    return {**row, **changes}


def version(user: str, lineage: str, n: int, episodes: list[str], **changes) -> dict:
    row = {"procedure_id": f"{lineage}-v{n}", "user_id": user, "lineage_id": lineage, "version": n,
           "title": f"how to {lineage}", "task_key": lineage, "description": "", "steps": ["first", "then"],
           "keywords": [lineage], "language": "en", "embedding": [0.25, -0.5, 0.125], "success_count": 0,
           "failure_count": 0, "confidence": 0.5, "status": "current", "superseded_by": None, "supersedes": None,
           "episode_ids": episodes, "source_turn_ids": [], "source_ids": [], "outcome_ids": [], "said_at": MAY + n,
           "last_outcome_at": None, "method": "offline", "note": "", "created_at": MAY + n, "updated_at": MAY + n}
    return {**row, **changes}


def protect(db, user: str, memory_id: str) -> None:
    """A memory the user protected (F8), through the memories table, as `lumina-memory protect` leaves it."""
    values = {"memory_id": memory_id, "user_id": user, "created": MAY, "category": "casual", "intensity": 0.5,
              "valence": "neutral", "valence_score": 0.0, "arousal": 0.1, "tags": [], "decay": 0.1,
              "memory_days": 1.0, "retention": 1.0, "level": 1, "protected": True, "recalled": False,
              "recall_count": 0, "unbatched": False, "idle_days": 0.0, "archived_on": -1, "archive_reason": 0,
              "revival_requested": False, "emotion_path": ""}
    MemoryTable(db)  # the memories' schema
    with db.tx(touches=(user,)) as con:  # the row as put_new writes it (its batched insert is the memories' test)
        con.execute(f"INSERT INTO {MEMORIES} ({', '.join(NEW_COLUMNS)}) VALUES "
                    f"({', '.join('?::VARCHAR[]' if c == 'tags' else '?' for c in NEW_COLUMNS)})",
                    [values[c] for c in NEW_COLUMNS])


def test_the_schemas_open_twice_and_record_one_step_each(sql_db):
    for _ in range(2):  # the second open finds every step applied
        KnowledgeTable(sql_db), ProcedureTable(sql_db), KBCatalog(sql_db)
    with sql_db.read() as con:
        steps = con.execute("SELECT component, step FROM lumina_migrations WHERE component IN "
                            "('knowledge', 'procedures', 'kb') ORDER BY component, step").fetchall()
        for table in (KNOWLEDGE, PROCEDURES, BASES, DOCUMENTS, CHUNKS):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert steps == [("kb", 1), ("knowledge", 1), ("knowledge", 2), ("procedures", 1)]  # knowledge 2: the links


# --- knowledge -------------------------------------------------------------------------------------------------
def _learn(table, user, segment_id, lines):
    services = SimpleNamespace(stores=SimpleNamespace(archive=SimpleNamespace(knowledge=table)), settings=SimpleNamespace())
    turns = [{"turn_id": f"{segment_id}-{i}", "speaker": "user", "text": text, "ts": ts, "source_id": f"{segment_id}:{i}"}
             for i, (text, ts) in enumerate(lines)]
    return learn_segments(services, user, [(SimpleNamespace(segment_id=segment_id), turns)])


def test_knowledge_history_superseded_and_merged(sql_db):
    table = KnowledgeTable(sql_db)
    _learn(table, "mika", "seg-may", [("コーヒーが大好き！", MAY)])
    _learn(table, "mika", "seg-sep", [("最近コーヒーやめて紅茶にしたの", MAY + 120 * DAY)])
    history = table.items("mika", history=True)
    old = [r for r in history if "コーヒー" in r["value"] and r["polarity"] == "positive"]
    assert old and old[0]["status"] == "superseded" and old[0]["valid_to"] is not None
    assert old[0]["superseded_by"] in {r["item_id"] for r in history}
    assert any("紅茶" in r["value"] for r in table.items("mika"))
    _learn(table, "ken", "seg-1", [("I moved to Fukuoka last month.", MAY)])
    _learn(table, "ken", "seg-2", [("I live in Fukuoka now.", MAY + 3 * DAY)])
    (lives,) = [r for r in table.items("ken") if r["attribute"] == "lives_in"]
    assert lives["episode_ids"] == ["seg-1", "seg-2"]  # merged: both episodes, in order
    assert table.items("nobody") == [] and table.count("ken") >= 1


def test_forgetting_episodes_keeps_items_with_other_sources_in_order(sql_db):
    table = KnowledgeTable(sql_db)
    table.upsert([item("rin", "jazz", ["s3", "s1", "s2"]), item("rin", "mornings", ["s1"]),
                  item("rin", "tea", ["s2", "s1"], said_at=MAY + 1), item("rin", "cats", ["s4"]),
                  item("sam", "jazz-sam", ["s1"])])
    assert [r["item_id"] for r in table.of_episodes("rin", ["s1", "zz"])] == ["jazz", "mornings", "tea"]
    table.mark_synced(table.unsynced())
    assert table.forget_episodes("rin", ["s1", "s2"]) == 2  # mornings, tea: nothing else supports them
    left = {r["item_id"]: r for r in table.items("rin", history=True)}
    assert set(left) == {"jazz", "cats"} and left["jazz"]["episode_ids"] == ["s3"]
    assert [r["item_id"] for r in table.unsynced()] == ["jazz"]  # its sources changed: owed to the tiers
    assert table.count("sam") == 1  # another user's item of the same episode id stays
    assert table.forget_episodes("rin", []) == 0 and table.of_episodes("rin", []) == []


def test_mark_synced_marks_only_rows_still_as_read(sql_db):
    table = KnowledgeTable(sql_db)
    table.upsert([item("ann", "a", ["s1"]), item("ann", "b", ["s1", "s2"], valid_to=MAY + 5, status="superseded",
                                                superseded_by="a"), item("ann", "c", [])])
    rows = table.unsynced("ann")
    assert table.unsynced_count() == 3 and table.unsynced(limit=2) == rows[:2] and table.unsynced("bob") == []
    stale = {**rows[0], "updated_at": rows[0]["updated_at"] - 1}
    moved = {**rows[1], "episode_ids": ["s1"]}
    assert table.mark_synced([stale, moved]) == 0
    assert table.mark_synced(rows) == 3 and table.unsynced_count("ann") == 0
    assert table.mark_synced(rows) == 0  # already marked
    table.upsert([{**rows[2], "note": "again"}])
    assert [r["item_id"] for r in table.unsynced()] == ["c"]
    assert table.mark_unsynced("ann") == 3 and table.unsynced_count() == 3


def test_forgetting_idle_items_spares_protected_ones_and_new_evidence_revives(sql_db):
    table = KnowledgeTable(sql_db)
    protect(sql_db, "lea", "mem-kept")
    table.upsert([item("lea", "idle", ["s1"]), item("lea", "used", ["s1"]), item("lea", "kept", ["mem-kept"]),
                  item("lea", "pet", ["s1"], subject="モカ"), item("max", "idle-max", ["s1"])])
    now = MAY + 40 * DAY
    assert table.mark_accessed("lea", ["used"], now - DAY) == 1
    marked = table.mark_low_activity(now, idle_days=30, min_accesses=1, protected_subjects=["モカ"], user_id="lea")
    assert marked == 1
    assert table.forget_idle(now + 31 * DAY, after_days=30, protected_subjects=["モカ"]) == [("lea", "idle")]
    assert [r["item_id"] for r in table.items("lea", history=True) if r["forgotten_at"]] == ["idle"]
    assert {r["item_id"] for r in table.recall_items("lea")} == {"used", "kept", "pet"}
    (idle,) = table.items("lea", item_ids=["idle"])
    table.upsert([{**idle, "status": "superseded"}])  # a change of status alone: still forgotten
    assert table.items("lea", item_ids=["idle"])[0]["forgotten_at"] is not None
    table.upsert([{**idle, "episode_ids": ["s1", "s9"]}])  # said again in another episode: remembered
    assert table.items("lea", item_ids=["idle"])[0]["forgotten_at"] is None
    assert table.items("max", history=True)[0]["forgotten_at"] is None  # another user's: untouched


def test_retention_expires_by_the_last_saying_and_deletes(sql_db):
    table = KnowledgeTable(sql_db)
    table.upsert([item("ivy", "old", ["s1"], said_at=MAY), item("ivy", "restated", ["s1"], said_at=MAY),
                  item("ivy", "again", ["s2"], said_at=MAY + 50 * DAY, status="merged", superseded_by="restated"),
                  item("ivy", "new", ["s3"], said_at=MAY + 60 * DAY)])
    assert table.expire_said_before(MAY + 10 * DAY, now=MAY + 70 * DAY) == {"ivy": ["old"]}
    assert table.delete_items("ivy", ["old", "zz"]) == 1 and table.count("ivy") == 3


def test_knowledge_refuses_hostile_ids_broken_text_and_other_users_items(sql_db):
    table = KnowledgeTable(sql_db)
    table.upsert([item("alice", "cat", ["s1"])])
    (row,) = table.items("alice")
    with pytest.raises(InvalidInput, match="another user"):
        table.upsert([{**row, "user_id": "bob"}])
    for hostile in HOSTILE:
        for call in (lambda: table.items(hostile), lambda: table.upsert([{**row, "item_id": hostile}]),
                     lambda: table.upsert([{**row, "episode_ids": [hostile]}]),
                     lambda: table.forget_episodes("alice", [hostile]), lambda: table.delete_items(hostile, ["cat"])):
            with pytest.raises(InvalidInput):
                call()
    with pytest.raises(InvalidInput, match="text"):
        table.upsert([{**row, "text": "broken \ud800 half"}])
    with pytest.raises(InvalidInput, match="source_ids"):
        table.upsert([{**row, "source_ids": ["ok", "\udfff"]}])
    huge = {**row, "text": "長" * 200_000, "source_ids": [f"s{i}" for i in range(2_000)]}
    table.upsert([huge])
    assert table.items("alice") == [{**huge, "forgotten_at": None}]
    assert table.delete_items("bob", ["cat"]) == 0 and table.items("bob", history=True) == []
    assert table.forget_episodes("bob", ["s1"]) == 0 and table.count("alice") == 1


def test_knowledge_written_by_one_connection_is_read_by_the_other(sql_pair):
    first, second = KnowledgeTable(sql_pair[0]), KnowledgeTable(sql_pair[1])
    assert second.recall_items("zoe") == []
    first.upsert([item("zoe", "tea", ["s1"])])
    assert [r["item_id"] for r in second.recall_items("zoe")] == ["tea"]  # its cache follows the shared stamp
    second.forget_episodes("zoe", ["s1"])
    assert first.recall_items("zoe") == [] and first.count("zoe") == 0


# --- procedures ------------------------------------------------------------------------------------------------
def test_procedure_versions_and_forgetting_the_newest_ones_episode(sql_db):
    table = ProcedureTable(sql_db)
    table.upsert([version("ann", "bake", 1, ["s1"], status="superseded", superseded_by="bake-v2"),
                  version("ann", "bake", 2, ["s2"], supersedes="bake-v1"), version("ann", "boil", 1, ["s1", "s3"])])
    assert [r["procedure_id"] for r in table.procedures("ann")] == ["boil-v1", "bake-v2"]  # oldest first
    history = table.procedures("ann", history=True)
    assert [r["procedure_id"] for r in history] == ["bake-v1", "boil-v1", "bake-v2"]
    assert history[0]["embedding"] == [0.25, -0.5, 0.125] and history[0]["steps"] == ["first", "then"]
    assert table.forget_episodes("ann", ["s2", "s1"]) == 2  # both of bake's versions; boil has s3 too
    left = {r["procedure_id"]: r for r in table.procedures("ann", history=True)}
    assert set(left) == {"boil-v1"} and left["boil-v1"]["episode_ids"] == ["s3"]


def test_a_version_whose_successor_went_is_current_again(sql_db):
    table = ProcedureTable(sql_db)
    table.upsert([version("ann", "bake", 1, ["s1"], status="superseded", superseded_by="bake-v2"),
                  version("ann", "bake", 2, ["s2"], supersedes="bake-v1")])
    assert table.forget_episodes("ann", ["s2"]) == 1
    (v1,) = table.current("ann")
    assert v1["procedure_id"] == "bake-v1" and v1["status"] == "current" and v1["superseded_by"] is None


def test_procedures_forgotten_when_unreliable_or_unused_but_not_protected(sql_db):
    table = ProcedureTable(sql_db)
    protect(sql_db, "ann", "mem-kept")
    table.upsert([version("ann", "bad", 1, ["s1"], success_count=1, failure_count=4, confidence=0.2),
                  version("ann", "idle", 1, ["s1"]), version("ann", "kept", 1, ["mem-kept"]),
                  version("ann", "used", 1, ["s1"]), version("ann", "mature", 5, ["s1"]),
                  version("bob", "idle", 1, ["s1"], procedure_id="idle-bob")])
    assert table.forget_unreliable("ann", below=0.3, min_outcomes=3) == ["bad"]
    table.mark_accessed("ann", ["used-v1"], MAY + 59 * DAY)
    assert table.forget_unused("ann", MAY + 60 * DAY, idle_days=30, min_uses=1, mature_version=5) == ["idle"]
    assert {r["lineage_id"] for r in table.procedures("ann")} == {"kept", "used", "mature"}
    assert table.count("bob") == 1


def test_procedures_refuse_hostile_ids_broken_text_and_other_users_ids(sql_db):
    table = ProcedureTable(sql_db)
    row = version("ann", "bake", 1, ["s1"])
    table.upsert([row])
    with pytest.raises(InvalidInput, match="another user"):
        table.upsert([{**row, "user_id": "bob"}])
    for hostile in HOSTILE:
        for call in (lambda: table.procedures(hostile), lambda: table.upsert([{**row, "lineage_id": hostile}]),
                     lambda: table.upsert([{**row, "procedure_id": hostile}]),
                     lambda: table.forget_episodes("ann", [hostile])):
            with pytest.raises(InvalidInput):
                call()
    with pytest.raises(InvalidInput, match="steps"):
        table.upsert([{**row, "steps": ["fine", "\ud800"]}])
    assert table.procedures("bob", history=True) == [] and table.forget_unreliable("bob", 1.0, 0) == []
    assert table.procedures("ann") == [row | {}]


def test_outcomes_counted_by_two_connections_at_once_are_all_counted(sql_pair):
    tables = [ProcedureTable(db) for db in sql_pair]
    tables[0].upsert([version("ann", "bake", 1, ["s1"])])
    services = [SimpleNamespace(stores=SimpleNamespace(archive=SimpleNamespace(procedures=t)), settings=SimpleNamespace())
                for t in tables]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def report(services, success: bool) -> None:
        try:
            start.wait()
            for _ in range(30):
                record_outcome(services, "ann", "bake-v1", success, now=MAY + DAY)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    workers = [threading.Thread(target=report, args=(s, i == 0)) for i, s in enumerate(services)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    (row,) = tables[1].procedures("ann")
    assert (row["success_count"], row["failure_count"]) == (30, 30)
