"""Undoing A9's episode merge and the procedure forgetting through `undo` on the real stores, embedded (DuckDB,
qdrant-edge, ladybug) and server mode (PostgreSQL): the preview names the merge the maintenance run then makes;
undoing it by a folded memory's id brings the folded memory back in every tier and the survivor as it was, without
the merge's derived_from relation, and a merge whose survivor was folded later undoes the later merge too; `undo
--step merge` and `--step procedure` through the command; raw-turn retention (policy A or B) leaves no undo entry
holding the text it removed; an erased user leaves no merge or procedure entry."""

from __future__ import annotations

import json

import pytest

from lumina_memory.graphs.maintenance_graph import run_maintenance
from lumina_memory.nodes.lifecycle.forget_preview import forget_preview
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle
from lumina_memory.nodes.lifecycle.undo import undo_forgetting
from lumina_memory.nodes.retention import enforce_retention
from lumina_memory.nodes.services import open_services
from tests.conftest import make_settings
from tests.pg_server import pg_server, pg_uri  # noqa: F401 - fixtures
from tests.test_capacity import _memories
from tests.test_merge_episodes import DAY, T0, _fill
from tests.test_procedure_prune_engines import _version

pytestmark = pytest.mark.slow  # replays conversations and runs maintenance on every engine

SECRET = "undo-merge-test-secret-0123456789abcdef"
A9 = LifecycleParams(ratio_min_memories=100, low_activity_unused_days=2, low_activity_enabled=True)


@pytest.fixture(params=["duckdb", "postgres"])
def server(request) -> dict:
    return {"database_url": request.getfixturevalue("pg_uri"), "secret_key": SECRET} if request.param == "postgres" else {}


def test_a_merge_previewed_then_undone_by_a_folded_id_comes_back_everywhere(server, memory_factory):
    mem = memory_factory(lifecycle=A9, **server)
    services = mem.services
    table = services.stores.archive.memories
    ids = _fill(mem, "saki")
    run_lifecycle(services, now=T0 + DAY)
    table.mark_recalled("saki", [ids["recalled"]], T0 + 1.5 * DAY, deliberate=True)
    run_lifecycle(services, now=T0 + 3 * DAY)
    before = {m["memory_id"]: m for m in list_memories(services, "saki")}
    relations_before = sorted((r["src"], r["dst"], r["kind"]) for r in table.relations("saki"))
    preview = forget_preview(services, "saki", now=T0 + 3 * DAY + 1800)
    assert [(set([m["survivor"], *m["folded"]])) for m in preview["merges"]] == [{ids["nap"], ids["sofa"]}]
    assert table.undo.entries("saki", step="merge") == []  # the preview wrote nothing

    report = run_maintenance(services, now=T0 + 3 * DAY + 3600, user_id="saki")["lifecycle_merge_episodes"]
    assert report["merged"] == 1
    survivor, (folded,) = preview["merges"][0]["survivor"], list(preview["merges"][0]["folded"])
    assert folded not in {m["memory_id"] for m in list_memories(services, "saki")}
    assert services.stores.vectors.get("saki", [folded]) == []
    assert sorted(e["target_id"] for e in table.undo.entries("saki", step="merge")) == sorted([survivor, folded])

    # `--memory` puts a memory back as it was before its first logged step (here the batch that compressed the
    # folded one); the merge is undone whole, so the survivor is as it was just before the merge.
    first = table.undo.entries("saki", folded)[0]["prior"]
    undone = undo_forgetting(services, "saki", memory_id=folded, now=T0 + 3 * DAY + 7200)
    assert sorted(m["memory_id"] for m in undone["memories"]) == sorted([survivor, folded])
    back = {m["memory_id"]: m for m in list_memories(services, "saki")}
    assert set(back) == set(before)
    for field in ("text", "trigger", "content", "tags", "created", "level"):
        assert back[survivor][field] == before[survivor][field], field
    assert back[folded]["level"] == first["level"] and back[folded]["trigger"] == first["trigger"]
    assert table.undo.entries("saki", folded) == []
    assert sorted((r["src"], r["dst"], r["kind"]) for r in table.relations("saki")) == relations_before
    assert table.forgotten("saki", [folded]) == set()
    assert services.stores.vectors.get("saki", [folded])  # the long-term tier holds it again
    assert table.undo.entries("saki", step="merge") == []


def test_undo_step_merge_and_procedure_through_the_command(cli_factory):
    run = cli_factory(in_process=True)
    services = open_services(make_settings(run.data_dir))
    try:
        ids = _memories(services, "carol", [1, 1, 1])
        memories = services.stores.archive.memories
        memories.merge_into("carol", ids[0], {ids[1]: 0.9}, {
            "retention": 70.0, "intensity": 70.0, "tags": ["猫"], "created": T0 - 10, "text": "合わせた / 二つ",
            "trigger": None, "content": None}, day=T0 // DAY, now=T0 + 60)
        procedures = services.stores.archive.procedures
        procedures.upsert([_version("carol", "cake", 1, 1), _version("dave", "pie", 1, 1)])
        assert procedures.forget_unreliable("carol", 0.2, 3, now=T0 + 60) == ["cake"]
    finally:
        services.close()
    merged = json.loads(run("undo", "--user", "carol", "--step", "merge", "--now", "2026-01-02T05:00+00:00",
                            "--json").stdout)
    assert sorted(m["memory_id"] for m in merged["memories"]) == ids[:2] and merged["procedures"] == []
    listed = json.loads(run("memories", "--user", "carol", "--json").stdout)
    assert sorted(m["memory_id"] for m in listed) == ids
    assert {m["memory_id"]: m["tags"] for m in listed}[ids[0]] == []  # the survivor's row as it was
    out = run("undo", "--user", "carol", "--step", "procedure", "--now", "2026-01-02T05:00+00:00").stdout
    assert "procedure cake: back with its versions and outcomes" in out
    services = open_services(make_settings(run.data_dir))
    try:
        assert [r["procedure_id"] for r in services.stores.archive.procedures.procedures("carol")] == ["cake-v1"]
        assert services.stores.archive.procedures.count("dave") == 1
        assert services.stores.archive.memories.undo.count("carol") == 0
    finally:
        services.close()


@pytest.mark.parametrize("policy", ["A", "B"])
def test_raw_turn_retention_leaves_no_undo_entry_holding_deleted_text(server, memory_factory, policy, tmp_path):
    extra = {"storage_policy_b_location": str(tmp_path / "cold")} if policy == "B" else {}
    mem = memory_factory(lifecycle=LifecycleParams(), storage_policy=policy, retention_raw_turns_days=30, **extra,
                         **server)
    services = mem.services
    table = services.stores.archive.memories
    _fill(mem, "saki")
    _fill(mem, "kei")
    run_lifecycle(services, now=T0 + DAY)
    entries = table.undo.entries("saki")
    assert entries, "the first batch compresses or archives under the ratios"
    texts = [t.text for t in services.stores.archive.turns_since("saki")[0]]
    assert any(text[:12] in json.dumps(e["prior"], ensure_ascii=False) for e in entries for text in texts)
    assert table.undo.count("kei")
    enforce_retention(services, now=T0 + 5 * DAY)  # nothing is 30 days old yet: entries stay
    assert table.undo.count("saki") == len(entries)
    report = enforce_retention(services, now=T0 + 40 * DAY)["raw_turns"]
    assert report["turns"] and report["segments_stripped"]
    assert table.undo.count("saki") == 0 and table.undo.count("kei") == 0  # every segment's turns went


def test_an_erased_user_leaves_no_merge_or_procedure_entry(server, memory_factory):
    from lumina_memory.graphs.erase import erase_plan, erase_user

    services = memory_factory(**server).services
    for user in ("carol", "dave"):
        ids = _memories(services, user, [1, 1])
        services.stores.archive.memories.merge_into(user, ids[0], {ids[1]: 0.9}, {
            "retention": 70.0, "intensity": 70.0, "tags": [], "created": T0, "text": "合わせた", "trigger": None,
            "content": None}, day=T0 // DAY, now=T0 + 60)
        services.stores.archive.procedures.upsert([_version(user, f"cake-{user[0]}", 1, 1)])
        services.stores.archive.procedures.forget_unreliable(user, 0.2, 3, now=T0 + 60)
    undo = services.stores.archive.memories.undo
    assert {e["step"] for e in undo.entries("carol")} == {"merge", "procedure"} and undo.count("dave") == 3
    erase_user(services, "carol", erase_plan(services, "carol")["token"])
    assert undo.count("carol") == 0 and undo.count("dave") == 3


def test_undoing_a_chained_merge_undoes_every_merge_it_leads_to(server, memory_factory):
    services = memory_factory(**server).services
    table = services.stores.archive.memories
    a, b, c, d = _memories(services, "carol", [1, 1, 1, 1])
    before = {m["memory_id"]: m for m in list_memories(services, "carol")}
    merged = {"retention": 70.0, "intensity": 70.0, "tags": ["猫"], "created": T0 - 10, "trigger": None, "content": None}
    table.merge_into("carol", a, {b: 0.9}, {**merged, "text": "a / b"}, day=T0 // DAY, now=T0 + 60)
    table.merge_into("carol", c, {a: 0.9}, {**merged, "text": "c / a / b"}, day=T0 // DAY, now=T0 + 120)
    table.merge_into("carol", d, {c: 0.9}, {**merged, "text": "d / c / a / b"}, day=T0 // DAY, now=T0 + 180)
    assert [m["memory_id"] for m in list_memories(services, "carol")] == [d]
    undone = undo_forgetting(services, "carol", memory_id=b, now=T0 + 300)  # b's merge leads to a's, then c's
    assert sorted(m["memory_id"] for m in undone["memories"]) == sorted([a, b, c, d])
    back = {m["memory_id"]: m for m in list_memories(services, "carol")}
    assert set(back) == set(before)
    for memory_id, row in before.items():
        assert (back[memory_id]["text"], back[memory_id]["tags"]) == (row["text"], row["tags"]), memory_id
    assert [r for r in table.relations("carol") if r["kind"] == "derived_from"] == []
    assert table.undo.count("carol") == 0 and table.forgotten("carol", [a, b, c]) == set()
