"""Knowledge items on the real archive (DuckDB): history kept, isolation, hostile ids, erasure, episodes forgotten."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.learn import item_of, learn_segments
from lumina_memory.stores.archive_duckdb import DuckDBArchive
from lumina_memory.nodes.knowledge.manage import JSON_FIELDS as KNOWLEDGE_FIELDS
from lumina_memory.stores.errors import InvalidInput

from .test_cli import cli  # noqa: F401 - the fixture

DAY = 86_400.0
MAY = 1_778_000_000.0  # 2026-05


def _turn(turn_id: str, text: str, ts: float, speaker: str = "user") -> dict:
    return {"turn_id": turn_id, "speaker": speaker, "text": text, "ts": ts, "source_id": f"src-{turn_id}"}


def _services(archive):
    return SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace())


@pytest.fixture
def archive(tmp_path):
    store = DuckDBArchive(tmp_path / "archive.duckdb")
    yield store
    store._db.close()


def _learn(archive, user, segment_id, turns):
    return learn_segments(_services(archive), user, [(SimpleNamespace(segment_id=segment_id), turns)])


def test_coffee_then_tea_keeps_the_history(archive):
    _learn(archive, "mika", "seg-may", [_turn("t1", "コーヒーが大好き！", MAY), _turn("t2", "いいね", MAY + 5, "nox")])
    counts = _learn(archive, "mika", "seg-sep", [_turn("t9", "最近コーヒーやめて紅茶にしたの", MAY + 120 * DAY)])
    assert counts.get("supersede", 0) + counts.get("add", 0) >= 1
    current = archive.knowledge.items("mika")
    history = archive.knowledge.items("mika", history=True)
    assert any("紅茶" in r["value"] for r in current)
    assert not any("コーヒー" in r["value"] and r["polarity"] == "positive" for r in current)
    old = [r for r in history if "コーヒー" in r["value"] and r["polarity"] == "positive"]
    assert old and old[0]["valid_to"] is not None and old[0]["status"] == "superseded"
    assert old[0]["episode_ids"] == ["seg-may"] and old[0]["source_turn_ids"] == ["t1"]
    assert all(r["confidence"] == pytest.approx(0.9) and r["method"] == "offline" for r in history)
    # the model round-trips from the stored row
    assert item_of(old[0]).item_id == old[0]["item_id"]


def test_a_replay_changes_nothing_and_a_restatement_merges(archive):
    turns = [_turn("a1", "I moved to Fukuoka last month.", MAY)]
    _learn(archive, "ken", "seg-1", turns)
    before = archive.knowledge.items("ken", history=True)
    assert _learn(archive, "ken", "seg-1", turns).get("unchanged", 0) >= 1
    assert archive.knowledge.items("ken", history=True) == before
    _learn(archive, "ken", "seg-2", [_turn("b1", "I live in Fukuoka now.", MAY + 3 * DAY)])
    current = [r for r in archive.knowledge.items("ken") if r["attribute"] == "lives_in"]
    assert len(current) == 1 and set(current[0]["episode_ids"]) == {"seg-1", "seg-2"}


def test_users_are_isolated_and_hostile_ids_refused(archive):
    _learn(archive, "alice", "seg-a", [_turn("x1", "モカっていう猫を飼ってる", MAY)])
    assert archive.knowledge.items("bob") == [] and archive.knowledge.count("alice") >= 1
    row = archive.knowledge.items("alice")[0]
    with pytest.raises(InvalidInput):
        archive.knowledge.upsert([{**row, "user_id": "bob"}])  # another user's item id
    for hostile in ("../etc", "x' OR '1'='1", "a) DETACH DELETE (n"):
        with pytest.raises(InvalidInput):
            archive.knowledge.items(hostile)
        with pytest.raises(InvalidInput):
            archive.knowledge.upsert([{**row, "item_id": hostile}])
    assert archive.knowledge.items("alice") == [row]


def test_forgetting_an_episode_takes_only_the_items_it_alone_supports(archive):
    _learn(archive, "rin", "seg-1", [_turn("r1", "I love jazz.", MAY)])
    _learn(archive, "rin", "seg-2", [_turn("r2", "I love jazz, honestly.", MAY + DAY), _turn("r3", "I hate mornings.", MAY + DAY)])
    assert archive.knowledge.forget_episodes("rin", ["seg-2"]) >= 1
    left = archive.knowledge.items("rin", history=True)
    assert not any("morning" in r["value"] for r in left)
    assert any(r["value_key"].startswith("jazz") and r["episode_ids"] == ["seg-1"] for r in left)


def test_through_the_graph_recall_and_the_cli(cli, tmp_path):  # noqa: F811
    """Ingested chat → knowledge at archive time → `knowledge --json` and `recall --json` know what is current."""
    file = tmp_path / "chat.jsonl"
    lines = []
    for n, (day, text) in enumerate((("2026-05-02", "コーヒーが大好き！毎朝飲んでるよ"), ("2026-09-10", "最近コーヒーやめて紅茶にしたの"))):
        for i, (speaker, line) in enumerate((("user", text), ("lumina", "そうなんだ"), ("user", "うん、そうなの"))):
            lines.append({"user_id": "mika", "speaker": speaker, "source_id": f"d{n}:{i}", "text": line,
                          "ts": f"{day}T10:0{i}:00+09:00"})
    file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    cli("ingest", str(file))
    current = json.loads(cli("knowledge", "--user", "mika", "--json").stdout)
    assert current and set(KNOWLEDGE_FIELDS) <= set(current[0])
    assert any("紅茶" in k["value"] and k["status"] in ("current", "coexisting") and k["source_ids"] == ["d1:0"]
               for k in current)
    history = json.loads(cli("knowledge", "--user", "mika", "--all", "--json").stdout)
    old = [k for k in history if "コーヒー" in k["value"] and k["polarity"] == "positive"]
    assert old and all(k["status"] == "superseded" and k["valid_to"] for k in old)
    assert json.loads(cli("knowledge", "--user", "nobody", "--json").stdout) == []
    now_items = json.loads(cli("recall", "--user", "mika", "今好きな飲み物は？", "--json").stdout)
    facts = [i for i in now_items if i["kind"] == "knowledge"]
    assert facts and "紅茶" in facts[0]["text"] and facts[0]["status"] != "superseded"
    assert all(i["kind"] in ("knowledge", "episode") for i in now_items)
    past_items = json.loads(cli("recall", "--user", "mika", "前は何が好きだった？飲み物は？", "--json").stdout)
    past_facts = [i for i in past_items if i["kind"] == "knowledge"]
    assert past_facts and past_facts[0]["status"] == "superseded" and "コーヒー" in past_facts[0]["text"]
    profile = json.loads(cli("profile", "--user", "mika", "--json").stdout)
    assert {"topics", "characters", "facts", "updated_at"} <= set(profile)
    assert any("紅茶" in f["value"] for f in profile["facts"]) and profile["characters"]["lumina"]["turns"] == 2
