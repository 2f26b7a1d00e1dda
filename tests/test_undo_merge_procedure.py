"""The undo log's merge and procedure entries on both engines, an embedded DuckDB file and a real PostgreSQL:
A9's ``merge_into`` keeps the survivor's and each folded memory's row (relations included) in its own
transaction, and a restore brings the folded ones back, the survivor as it was and without the merge's
derived_from relations; the monthly procedure forgetting keeps every version of a forgotten lineage (outcomes and
use counts too) and a restore brings them back; retention's procedure forgetting keeps nothing and drops what was
kept; one user's entries are never another's."""

from __future__ import annotations

import pytest

from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.undo_steps import FOLDED, MERGED_INTO
from tests.archive_engines import ENGINES, open_archive
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from tests.test_lifecycle_tables_engines import ALICE, BOB, _fill
from tests.test_procedure_prune_engines import _version

pytestmark = pytest.mark.slow  # the PostgreSQL side starts a private server


@pytest.fixture(params=ENGINES)
def archive(request, tmp_path):
    store = open_archive(request, tmp_path)
    try:
        yield store
    finally:
        store.close()


MERGED = {"retention": 0.9, "intensity": 0.8, "tags": ["映画", "猫"], "created": 900.0,
          "text": "合わせた記憶 / もう一つ", "trigger": None, "content": None}


def test_a_merge_is_logged_whole_and_a_restore_undoes_it(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 4)
    bob = _fill(archive, BOB, 1)
    table.add_relations(ALICE, [(ids[1], ids[2], "continues", 0.7), (ids[2], ids[3], "continues", 0.6)], day=1)
    before = {r["memory_id"]: r for r in table.rows(ALICE)}
    table.merge_into(ALICE, ids[0], {ids[1]: 0.9, ids[2]: 0.85}, MERGED, day=20, now=5000.0)
    assert {r["memory_id"] for r in table.rows(ALICE)} == {ids[0], ids[3]}
    entries = table.undo.entries(ALICE, step="merge")
    assert sorted(e["target_id"] for e in entries) == [ids[0], ids[1], ids[2]]
    assert {e["ts"] for e in entries} == {5000.0} and {e["day"] for e in entries} == {20}
    prior = {e["target_id"]: e["prior"] for e in entries}
    assert prior[ids[0]][FOLDED] == [ids[1], ids[2]] and prior[ids[0]]["retention"] == before[ids[0]]["retention"]
    assert prior[ids[1]][MERGED_INTO] == ids[0] and prior[ids[2]][MERGED_INTO] == ids[0]
    assert [r[:3] for r in prior[ids[2]]["relations"]] == [[ids[1], ids[2], "continues"], [ids[2], ids[3], "continues"]]
    assert table.undo.entries(BOB) == [] and table.undo.entries(ALICE, bob[0]) == []
    with pytest.raises(InvalidInput, match="another user"):
        table.undo.restore_memories(BOB, [prior[ids[1]]], [], {})

    restored = table.undo.restore_memories(ALICE, [prior[m] for m in ids[:3]], [e["undo_id"] for e in entries], {})
    assert restored == ids[:3] and table.forgotten(ALICE, ids) == set()
    after = {r["memory_id"]: r for r in table.rows(ALICE)}
    for memory_id in ids:
        for field in ("retention", "intensity", "tags", "created", "text", "level"):
            assert after[memory_id][field] == before[memory_id][field], (memory_id, field)
    assert sorted((r["src"], r["dst"], r["kind"]) for r in table.relations(ALICE)) == [
        (ids[1], ids[2], "continues"), (ids[2], ids[3], "continues")]  # the merge's derived_from ones gone
    assert table.undo.entries(ALICE) == [] and len(table.rows(BOB)) == 1


def test_a_refused_merge_logs_nothing(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 2)
    bob = _fill(archive, BOB, 1)
    with pytest.raises(InvalidInput):
        table.merge_into(ALICE, ids[0], {bob[0]: 0.9}, MERGED, day=20, now=5000.0)
    assert table.undo.count() == 0


def test_forgotten_procedures_are_logged_with_versions_and_outcomes_and_come_back(archive):
    table = archive.procedures
    cake = [_version(ALICE, "cake", v, 2) for v in (1, 2)]
    cake[1].update(success_count=1, failure_count=4, outcome_ids=["o:1", "o:2"], last_outcome_at=3.0)
    table.upsert([*cake, _version(ALICE, "pie", 1, 1), _version(BOB, "tart", 1, 1)])
    table.mark_accessed(ALICE, ["pie-v1"], 2.0)
    before = {r["procedure_id"]: r for r in table.procedures(ALICE, history=True)}
    assert table.forget_unreliable(ALICE, 0.2, 3, now=7000.0) == ["cake", "pie"]
    assert table.procedures(ALICE, history=True) == []
    entries = archive.memories.undo.entries(ALICE, step="procedure")
    assert [(e["target_id"], e["ts"]) for e in entries] == [("cake", 7000.0), ("pie", 7000.0)]
    assert [v["procedure_id"] for v in entries[0]["prior"]["versions"]] == ["cake-v1", "cake-v2"]
    assert archive.memories.undo.entries(BOB) == []
    with pytest.raises(InvalidInput, match="another user"):
        table.restore_lineages(BOB, entries[:1], 8000.0)

    assert table.restore_lineages(ALICE, entries[:1], 8000.0) == ["cake"]
    back = {r["procedure_id"]: r for r in table.procedures(ALICE, history=True)}
    assert back == {k: v for k, v in before.items() if k.startswith("cake")}  # outcomes and versions as they were
    assert [e["target_id"] for e in archive.memories.undo.entries(ALICE)] == ["pie"]
    assert table.restore_lineages(ALICE, entries[:1], 8000.0) == []  # already back: nothing doubled
    assert table.count(BOB) == 1
    # Counted as used by the undo: the disuse rule (idle 2 hours, under 99 uses) does not take it straight back.
    assert table.forget_unused(ALICE, 8000.0 + 3600, 2 / 24, 99, 99) == []
    assert table.forget_unused(ALICE, 8000.0 + 3 * 86_400, 1.0, 99, 99) == ["cake"]


def test_retention_forgets_procedures_for_good_and_drops_their_entries(archive):
    table = archive.procedures
    table.upsert([_version(ALICE, "cake", 1, 1), _version(ALICE, "pie", 1, 1)])
    assert table.forget_unreliable(ALICE, 0.2, 3, now=7000.0) == ["cake", "pie"]
    assert table.restore_lineages(ALICE, archive.memories.undo.entries(ALICE, "pie"), 8000.0) == ["pie"]
    assert table.forget_unused(ALICE, 10_000_000.0, 30.0, 2**31 - 1, 2**31 - 1, undoable=False) == ["pie"]
    assert table.forget_unused(ALICE, 10_000_000.0, 30.0, 2**31 - 1, 2**31 - 1) == []
    assert [e["target_id"] for e in archive.memories.undo.entries(ALICE)] == ["cake"]
    archive.memories.undo.forget(ALICE, ["cake"])
    assert archive.memories.undo.count(ALICE) == 0


def test_forgetting_a_memory_takes_the_entries_that_would_bring_its_text_back(archive):
    table = archive.memories
    ids = _fill(archive, ALICE, 3)
    table.merge_into(ALICE, ids[0], {ids[1]: 0.9}, MERGED, day=20, now=5000.0)
    procedures = archive.procedures
    taught = _version(ALICE, "cake", 1, 1)
    taught["episode_ids"] = [ids[2]]
    procedures.upsert([taught, _version(ALICE, "pie", 1, 1), _version(BOB, "tart", 1, 1)])
    procedures.upsert([{**_version(BOB, "tart2", 1, 1), "episode_ids": [ids[2]]}])
    assert procedures.forget_unreliable(ALICE, 0.2, 3, now=7000.0) == ["cake", "pie"]
    assert procedures.forget_unreliable(BOB, 0.2, 3, now=7000.0) == ["tart", "tart2"]
    # The survivor forgotten on purpose: the folded memory's entry (its text) goes too, not only the survivor's.
    table.delete(ALICE, ids[0])
    assert table.undo.entries(ALICE, step="merge") == []
    # A memory that taught a forgotten procedure: that procedure's entry goes; another user's is untouched.
    table.delete(ALICE, ids[2])
    assert [e["target_id"] for e in table.undo.entries(ALICE)] == ["pie"]
    assert [e["target_id"] for e in table.undo.entries(BOB)] == ["tart", "tart2"]
