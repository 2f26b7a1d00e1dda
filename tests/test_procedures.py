"""Procedural memory (issue 18, A8/S5) on real engines: distilled from the demo's cheesecake lesson, used, failed,
re-consolidated; near-duplicates merged; an English how-to through the CLI; chat that teaches nothing; users
isolated; erased with the user."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from itertools import groupby
from types import SimpleNamespace

import pytest

from lumina_memory.graphs.erase import backup_now, erase_plan, erase_user, restore_from
from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.knowledge.procedure_detect import distill
from lumina_memory.nodes.knowledge.procedure_models import confidence_of
from lumina_memory.nodes.knowledge.procedure_outcomes import verdict_of
from lumina_memory.nodes.knowledge.procedures import (
    JSON_FIELDS, learn_procedures, list_procedures, match_procedures, record_outcome,
)
from lumina_memory.stores.errors import InvalidInput

from .test_cli import cli  # noqa: F401 - the fixture

DAY = 86_400.0
T0 = 1_790_000_000.0  # 2026-09


def _rows(user: str, start: str, lines: list[tuple[str, str]], minutes: int = 1) -> list[dict]:
    at = datetime.fromisoformat(start)
    return [{"user_id": user, "speaker": speaker, "text": text, "ts": (at + timedelta(minutes=minutes * i)).isoformat()}
            for i, (speaker, text) in enumerate(lines)]


def _turns(prefix: str, lines: list[tuple[str, str]], ts: float) -> list[dict]:
    return [{"turn_id": f"{prefix}-{i}", "source_id": f"{prefix}:{i}", "speaker": speaker, "text": text, "ts": ts + 60 * i}
            for i, (speaker, text) in enumerate(lines)]


def _learn(services, user: str, segment_id: str, turns: list[dict]) -> dict:
    return learn_procedures(services, user, [(SimpleNamespace(segment_id=segment_id), turns)])


CHEESECAKE = [
    ("user", "クラリス、チーズケーキのレシピ教えて"),
    ("clarisse", "クリームチーズ200g、砂糖60g、卵2個を順番に混ぜます。170度のオーブンで40分焼いて、一晩冷やしてください"),
    ("user", "ありがとう、やってみる"),
]
CHEESECAKE_AGAIN = [
    ("user", "チーズケーキのレシピ、もう一回教えて"),
    ("clarisse", "はい。クリームチーズ200g、砂糖60g、卵2個を順番に混ぜます。170度のオーブンで40分焼いて、一晩冷やしてください"),
]
PASTA = [
    ("user", "パスタの茹で方を教えて"),
    ("clarisse", "お湯1リットルに塩10gを入れてから、パスタを入れて8分茹でてください。"),
]


# --- detection alone (pure functions) -------------------------------------------------------------------------

def test_the_demo_teaches_one_procedure_the_cheesecake(demo_rows):
    by_topic = [(topic, list(rows)) for topic, rows in groupby(demo_rows, key=lambda r: r["topic"])]
    drafts = {}
    for n, (topic, rows) in enumerate(by_topic):
        turns = [{**r, "turn_id": f"d{n}-{i}", "ts": float(i)} for i, r in enumerate(rows)]
        drafts[topic] = distill(turns)
    assert {t for t, d in drafts.items() if d is not None} == {"cooking"}  # the other talk teaches nothing
    cake = drafts["cooking"]
    assert cake.title == "チーズケーキ" and cake.description == "チーズケーキのレシピ" and cake.language == "ja"
    steps = cake.step_texts
    assert steps[0].startswith("クリームチーズ200g") and any("170度のオーブンで40分" in s for s in steps)
    assert any("溶かしバター30g" in s for s in steps) and any("グラハムクラッカー" in s for s in steps)
    # in the order taught, and only what was said: every step is a clause of a turn
    said = "".join(r["text"] for r in dict(by_topic)["cooking"])
    assert all(s in said for s in steps) and steps.index(next(s for s in steps if "170度" in s)) < len(steps) - 1
    assert not any("失敗したら" in s or "?" in s or "？" in s for s in steps)  # a wish and questions are no steps


@pytest.mark.parametrize("lines", [
    [("user", "今日はまず朝ごはん食べて、次に買い物行って、最後に映画観た"), ("lumina", "充実してたね！")],
    [("user", "Yesterday I first went to the gym, then I had lunch with Sam, and finally watched a movie."),
     ("nox", "busy day")],
    [("user", "I ran 5 km this morning in 30 minutes!"), ("lumina", "Wow, great job!"), ("user", "Then I took a nap.")],
    [("user", "明日は10時に起きて、映画を観に行く予定"), ("lumina", "いいね！何を観るの？"), ("user", "3時間くらいの長いやつがいいな")],
    [("user", "レシピ通り170度で40分焼いたら、きれいなきつね色になった！")],  # what she did, not how to
])
def test_ordinary_chat_and_narration_are_no_procedure(lines):
    assert distill(_turns("c", lines, T0)) is None


def test_sequences_numbered_steps_and_english_how_tos():
    order = distill(_turns("o", [("nox", "まず電源を切って、次にケーブルを抜いて、最後に10秒待ってから電源を入れ直してみな")], T0))
    assert order is not None and order.step_texts[0] == "まず電源を切って" and len(order.steps) == 4
    tekara = distill(_turns("p", PASTA, T0))
    assert tekara.title == "パスタ" and tekara.step_texts == ["お湯1リットルに塩10gを入れてから", "パスタを入れて8分茹でてください。"]
    numbered = distill(_turns("n", [("user", "what are the steps to fix a flat bike tire?"),
                                    ("nox", "1. Remove the wheel. 2. Take out the tube and find the hole. 3. Patch it.")], T0))
    assert numbered.title == "flat bike tire" and [s[:2] for s in numbered.step_texts] == ["1.", "2.", "3."]
    own_way = distill(_turns("b", [("user", "what's your recipe for banana bread?"),
                                   ("clarisse", "I usually mash 3 bananas with 100g of butter. "
                                                "Then I add 200g of flour and bake it for 50 minutes at 180 degrees.")], T0))
    assert own_way.title == "banana bread" and len(own_way.steps) == 2  # a teacher's "I usually…" still teaches
    circled = distill(_turns("m", [("user", "【カレー】メモ ①玉ねぎを炒める②肉を入れる③水600mlで20分煮込む")], T0))
    assert circled.title == "カレー" and len(circled.steps) == 3


@pytest.mark.parametrize("text, verdict", [
    ("チーズケーキ大成功だった！", "success"), ("うまくいった！", "success"), ("ちゃんとできたよ", "success"),
    ("また焼いたけど失敗した…", "failure"), ("うまくいかなかった", "failure"), ("失敗しちゃった", "failure"),
    ("最初は失敗したけど、二回目はうまくいった", "success"),
    ("It worked!", "success"), ("it turned out great", "success"), ("the pancakes didn't work, they burned", "failure"),
    ("失敗したらなぐさめてね", None), ("うまくいったらいいな", None), ("うまくいった？", None), ("京都に行った", None),
    ("If it doesn't work, tell me", None), ("成功したいな", None),
])
def test_outcome_reports_and_what_is_not_one(text, verdict):
    assert verdict_of(text) == verdict


def test_confidence_is_the_notes_formula():
    assert confidence_of(0, 0) == 0 and confidence_of(1, 1) == 0.5 and confidence_of(3, 1) == 0.75


# --- on the stores ----------------------------------------------------------------------------------------------

def test_the_demo_recipe_used_failed_and_reconsolidated(memory_factory, demo_rows):
    """The demo through the graph: Clarisse's recipe becomes a procedure; the birthday report 「大成功」 counts a
    success; a later 「失敗した」 a failure; a recipe with other temperatures and times makes version 2."""
    mem = memory_factory()
    replay(mem.graph, "demo-user", demo_rows)
    services = mem.services
    (cake,) = list_procedures(services, "demo-user")
    assert set(JSON_FIELDS) <= set(cake) and "embedding" not in cake
    assert cake["title"] == "チーズケーキ" and cake["version"] == 1 and cake["status"] == "current"
    assert any("170度のオーブンで40分" in s for s in cake["steps"]) and len(cake["steps"]) >= 4
    assert cake["success_count"] == 1 and cake["failure_count"] == 0 and cake["confidence"] == 1.0  # 「大成功だった」
    assert len(cake["episode_ids"]) == 1 and len(cake["outcome_ids"]) == 1 and cake["source_turn_ids"]
    assert cake["said_at"] == datetime.fromisoformat("2026-10-12T20:25:30+09:00").timestamp()

    # used again, failed: a failure, confidence s / (s + f)
    replay(mem.graph, "demo-user", _rows("demo-user", "2026-12-01T19:00:00+09:00", [
        ("user", "チーズケーキ、また焼いてみたんだけど今回は失敗した…真ん中が生焼けだった"),
        ("clarisse", "まあ、残念でしたね。オーブンによって焼き時間が変わることもありますよ"),
    ]))
    (cake,) = list_procedures(services, "demo-user")
    assert (cake["success_count"], cake["failure_count"], cake["confidence"]) == (1, 1, 0.5)

    # a later lesson changes the amounts: re-consolidated, the old version kept
    replay(mem.graph, "demo-user", _rows("demo-user", "2026-12-03T19:00:00+09:00", [
        ("user", "クラリス、チーズケーキのレシピ、焼き方を見直したいな"),
        ("clarisse", "では改良版です。クリームチーズ200g、砂糖60g、卵2個を順番に混ぜます。160度のオーブンで50分焼いてください。"
                     "焼けたらオーブンの中で1時間冷まして、一晩冷やすと割れにくいですよ"),
        ("user", "ありがとう、次はそれでやってみる"),
    ]))
    history = list_procedures(services, "demo-user", history=True)
    old, new = sorted(history, key=lambda p: p["version"])
    assert (old["version"], new["version"]) == (1, 2) and old["lineage_id"] == new["lineage_id"] == old["procedure_id"]
    assert old["status"] == "superseded" and old["superseded_by"] == new["procedure_id"]
    assert (old["success_count"], old["failure_count"]) == (1, 1)  # its record stays with it
    assert new["status"] == "current" and new["supersedes"] == old["procedure_id"]
    assert (new["success_count"], new["failure_count"], new["confidence"]) == (0, 0, 0.5)
    assert any("160度のオーブンで50分" in s for s in new["steps"]) and "170" in old["note"] and "160" in new["note"]
    assert [p["procedure_id"] for p in list_procedures(services, "demo-user")] == [new["procedure_id"]]

    # the API: outcomes go on the current version, the superseded one is refused with the way out
    with pytest.raises(InvalidInput, match="superseded"):
        record_outcome(services, "demo-user", old["procedure_id"], True)
    assert record_outcome(services, "demo-user", new["procedure_id"], True)["confidence"] == 1.0
    # matching: a bracket keyword, content words, and nothing for unrelated chat
    assert [(m["procedure_id"], m["stage"]) for m in match_procedures(services, "demo-user", "【チーズケーキ】")] == \
        [(new["procedure_id"], "bracket")]
    assert match_procedures(services, "demo-user", "クリームチーズと砂糖ってどれくらいだっけ")[0]["stage"] == "words"
    assert match_procedures(services, "demo-user", "今夜は流れ星が見えるかな") == []


def test_near_duplicates_replays_isolation_and_the_api(memory):
    services = memory.services
    assert _learn(services, "alice", "seg-1", _turns("a1", CHEESECAKE, T0)) == {"add": 1}
    # the same recipe taught again: one procedure with both episodes, nothing new
    assert _learn(services, "alice", "seg-2", _turns("a2", CHEESECAKE_AGAIN, T0 + 3 * DAY)) == {"merge": 1}
    (cake,) = list_procedures(services, "alice", history=True)
    assert cake["episode_ids"] == ["seg-1", "seg-2"] and cake["source_ids"] == ["a1:1", "a2:1"]
    assert cake["confidence"] == 0.4 and cake["version"] == 1
    # a replayed segment changes nothing
    before = list_procedures(services, "alice", history=True)
    assert _learn(services, "alice", "seg-1", _turns("a1", CHEESECAKE, T0)) == {"unchanged": 1}
    assert list_procedures(services, "alice", history=True) == before
    # another task is another procedure
    assert _learn(services, "alice", "seg-3", _turns("a3", PASTA, T0 + 4 * DAY)) == {"add": 1}
    assert {p["title"] for p in list_procedures(services, "alice")} == {"チーズケーキ", "パスタ"}
    # a report counts once, on the procedure it is about, even when its segment is archived again
    report = _turns("a4", [("user", "パスタ、言われた通りに茹でたらうまくいった！")], T0 + 5 * DAY)
    assert _learn(services, "alice", "seg-4", report) == {"success": 1}
    assert _learn(services, "alice", "seg-4", report) == {"outcome_unchanged": 1}
    pasta = next(p for p in list_procedures(services, "alice") if p["title"] == "パスタ")
    assert (pasta["success_count"], pasta["confidence"], pasta["outcome_ids"]) == (1, 1.0, ["seg-4"])
    # the API: an outcome id is counted once; an unknown id is not found
    once = record_outcome(services, "alice", pasta["procedure_id"], False, outcome_id="req-1")
    assert record_outcome(services, "alice", pasta["procedure_id"], False, outcome_id="req-1") == once
    assert (once["failure_count"], once["confidence"]) == (1, 0.5)
    with pytest.raises(InvalidInput, match="not found"):
        record_outcome(services, "alice", "no-such-procedure", True)

    # isolation: bob sees none of alice's procedures, cannot count on them nor take their ids
    assert list_procedures(services, "bob", history=True) == [] and match_procedures(services, "bob", "【パスタ】") == []
    with pytest.raises(InvalidInput, match="not found"):
        record_outcome(services, "bob", pasta["procedure_id"], True)
    table = services.stores.archive.procedures
    (row,) = table.procedures("alice", procedure_ids=[pasta["procedure_id"]])
    with pytest.raises(InvalidInput):
        table.upsert([{**row, "user_id": "bob"}])
    for hostile in ("../etc", "x' OR '1'='1"):
        with pytest.raises(InvalidInput):
            table.procedures(hostile)
    # bob's own report does not touch alice's pasta
    assert _learn(services, "bob", "seg-b", _turns("b1", [("user", "パスタ失敗した")], T0 + 6 * DAY)) == {}
    assert table.procedures("alice", procedure_ids=[pasta["procedure_id"]])[0]["failure_count"] == 1

    # erased with the user: the procedures table is one of the archive's user tables
    _learn(services, "bob", "seg-b2", _turns("b2", CHEESECAKE, T0 + 7 * DAY))
    plan = erase_plan(services, "alice")
    assert plan["counts"]["archive.procedures"] == 2
    report = erase_user(services, "alice", plan["token"])
    assert report["removed"]["archive.procedures"] == 2
    assert table.count("alice") == 0 and list_procedures(services, "bob")[0]["title"] == "チーズケーキ"


def test_an_english_how_to_through_the_cli(cli, tmp_path):  # noqa: F811
    """Ingested chat → a procedure at archive time → `procedures --json`, a reported success, `outcome`."""
    rows = _rows("sam", "2026-09-01T18:00:00+00:00", [
        ("user", "How do I make pancakes?"),
        ("clarisse", "First, whisk 200g of flour with 2 eggs and 300ml of milk. Then heat a pan with a little butter."),
        ("user", "okay, and then?"),
        ("clarisse", "Pour a ladle of batter and cook for 2 minutes on each side. Finally, serve with maple syrup."),
    ]) + _rows("sam", "2026-09-06T09:00:00+00:00", [
        ("user", "I made the pancakes this morning and it worked!"), ("lumina", "Yay, so happy for you!"),
    ])
    file = tmp_path / "chat.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cli("ingest", str(file))
    (pancakes,) = json.loads(cli("procedures", "--user", "sam", "--json").stdout)
    assert set(JSON_FIELDS) <= set(pancakes)
    assert pancakes["title"] == "pancakes" and pancakes["description"] == "how to make pancakes"
    assert pancakes["steps"][0].startswith("First, whisk 200g") and pancakes["steps"][-1].startswith("Finally, serve")
    assert (pancakes["success_count"], pancakes["failure_count"], pancakes["confidence"]) == (1, 0, 1.0)
    after = json.loads(cli("outcome", "--user", "sam", pancakes["procedure_id"], "failure", "--json").stdout)
    assert (after["success_count"], after["failure_count"], after["confidence"]) == (1, 1, 0.5)
    assert "pancakes" in cli("procedures", "--user", "sam").stdout
    assert json.loads(cli("procedures", "--user", "nobody", "--all", "--json").stdout) == []
    refused = cli("outcome", "--user", "nobody", pancakes["procedure_id"], "success", check=False)
    assert refused.returncode == 2 and "not found" in refused.stdout


def test_backed_up_and_restored_with_the_archive(memory_factory, tmp_path):
    """A procedure's versions, counts and vector come back from a backup into a new data directory."""
    source = memory_factory()
    _learn(source.services, "rin", "seg-1", _turns("r1", CHEESECAKE, T0))
    _learn(source.services, "rin", "seg-2", _turns("r2", [("user", "チーズケーキ失敗した")], T0 + DAY))
    _learn(source.services, "rin", "seg-3", _turns("r3", [
        ("user", "チーズケーキのレシピ、見直して"),
        ("clarisse", "クリームチーズ200g、砂糖60g、卵2個を順番に混ぜます。160度のオーブンで50分焼いて、一晩冷やしてください")],
        T0 + 2 * DAY))
    table = source.services.stores.archive.procedures
    before = table.procedures("rin", history=True)
    assert [p["version"] for p in before] == [1, 2] and before[0]["failure_count"] == 1
    manifest = backup_now(source.services, str(tmp_path / "backups"))
    assert manifest["places"]["archive.procedures"]["count"] == 2
    target = memory_factory()
    restore_from(target.services, str(tmp_path / "backups"), manifest["id"])
    after = target.services.stores.archive.procedures.procedures("rin", history=True)
    assert [{**p, "embedding": None} for p in after] == [{**p, "embedding": None} for p in before]
    assert all(a["embedding"] == pytest.approx(b["embedding"]) for a, b in zip(after, before))
    assert match_procedures(target.services, "rin", "【チーズケーキ】")[0]["version"] == 2


def test_another_task_with_other_amounts_is_a_new_procedure_not_a_version(memory):
    services = memory.services
    _learn(services, "kai", "seg-1", _turns("k1", CHEESECAKE, T0))
    rare = [("user", "レアチーズケーキのレシピも教えて"),
            ("clarisse", "クリームチーズ200g、砂糖50g、生クリーム200mlを順番に混ぜます。冷蔵庫で3時間冷やしてください")]
    assert _learn(services, "kai", "seg-2", _turns("k2", rare, T0 + DAY)) == {"add": 1}
    current = list_procedures(services, "kai")
    assert {p["title"] for p in current} == {"チーズケーキ", "レアチーズケーキ"}
    assert all(p["version"] == 1 and p["status"] == "current" for p in current)


def test_a_how_question_recalls_the_procedure_with_its_steps(demo_memory):
    from lumina_memory.nodes.retrieval.recall import recall

    items = recall(demo_memory.services, "demo-user", "クラリスに教わったチーズケーキの作り方、何度で何分焼くんだっけ？",
                   purpose="question", limit=5)
    kinds = [i["kind"] for i in items]
    assert "procedure" in kinds and set(kinds) <= {"knowledge", "procedure", "episode"}
    proc = next(i for i in items if i["kind"] == "procedure")
    assert "170度" in proc["text"] and proc["turn_ids"] and proc["version"] == 1
    chat = recall(demo_memory.services, "demo-user", "モカは元気？", purpose="question", limit=5)
    assert "procedure" not in [i["kind"] for i in chat]  # not a how-question, no procedure named
    off = recall(demo_memory.services, "demo-user", "チーズケーキの作り方は？", purpose="question", limit=5,
                 disabled=["procedures"])
    assert "procedure" not in [i["kind"] for i in off]


def test_the_monthly_step_forgets_a_procedure_that_keeps_failing(memory):
    from lumina_memory.graphs.maintenance_knowledge import knowledge_monthly

    services = memory.services
    _learn(services, "alice", "seg-1", _turns("a1", CHEESECAKE, T0))
    _learn(services, "alice", "seg-3", _turns("a3", PASTA, T0 + DAY))
    pasta = next(p for p in list_procedures(services, "alice") if p["title"] == "パスタ")
    cake = next(p for p in list_procedures(services, "alice") if p["title"] == "チーズケーキ")
    record_outcome(services, "alice", pasta["procedure_id"], True)
    for _ in range(4):
        record_outcome(services, "alice", pasta["procedure_id"], False)  # 1 / 5 = 0.2: not below the threshold
    record_outcome(services, "alice", cake["procedure_id"], False)  # one failure: too few outcomes to judge
    state = {"now": T0 + 30 * DAY, "user_id": "alice"}
    assert knowledge_monthly(state, services)["report"]["knowledge_monthly"]["procedures_forgotten"] == 0
    record_outcome(services, "alice", pasta["procedure_id"], False)  # 1 / 6 < 0.2
    assert knowledge_monthly(state, services)["report"]["knowledge_monthly"]["procedures_forgotten"] == 1
    assert [p["title"] for p in list_procedures(services, "alice", history=True)] == ["チーズケーキ"]


def test_the_monthly_step_forgets_a_procedure_nobody_uses_and_keeps_a_recalled_one(memory):
    """The notes' procedures threshold: neither recalled nor reported on for 180 days and used fewer than 3
    times → forgotten with its versions; each recall of it (a how-question) is a use."""
    from lumina_memory.graphs.maintenance_knowledge import knowledge_monthly
    from lumina_memory.nodes.retrieval.recall import recall

    services = memory.services
    _learn(services, "alice", "seg-1", _turns("a1", CHEESECAKE, T0))
    _learn(services, "alice", "seg-3", _turns("a3", PASTA, T0 + DAY))
    assert {p["title"] for p in list_procedures(services, "alice")} == {"チーズケーキ", "パスタ"}
    asked = recall(services, "alice", "チーズケーキの作り方は？", purpose="question", limit=5, now_ts=T0 + 100 * DAY)
    assert any(i["kind"] == "procedure" and "170度" in i["text"] for i in asked)

    def month(day: int) -> int:
        state = {"now": T0 + day * DAY, "user_id": "alice"}
        return knowledge_monthly(state, services)["report"]["knowledge_monthly"]["procedures_forgotten"]

    assert month(150) == 0  # the pasta is 149 days idle: not yet
    assert month(250) == 1  # 249 days: the pasta goes; the cheesecake was recalled on day 100
    assert [p["title"] for p in list_procedures(services, "alice", history=True)] == ["チーズケーキ"]
    assert month(279) == 0
    assert month(281) == 1  # 181 days since its one recall
    assert list_procedures(services, "alice", history=True) == []


def test_a_mature_procedure_is_never_forgotten_for_disuse(memory):
    from lumina_memory.graphs.maintenance_knowledge import knowledge_monthly
    from lumina_memory.stores.procedures_duckdb import PROCEDURES

    services = memory.services
    _learn(services, "alice", "seg-1", _turns("a1", CHEESECAKE, T0))
    [cake] = list_procedures(services, "alice")
    with services.stores.archive.procedures.db.tx() as con:  # as if re-consolidated twice since
        con.execute(f"UPDATE {PROCEDURES} SET version = 3 WHERE procedure_id = ?", [cake["procedure_id"]])
    report = knowledge_monthly({"now": T0 + 400 * DAY, "user_id": "alice"}, services)["report"]["knowledge_monthly"]
    assert report["procedures_forgotten"] == 0 and len(list_procedures(services, "alice")) == 1


def test_a_procedure_taught_by_a_protected_memory_is_never_forgotten_for_disuse(memory):
    from lumina_memory.graphs.maintenance_knowledge import knowledge_monthly
    from lumina_memory.stores.memories_duckdb import MEMORIES

    services = memory.services
    _learn(services, "alice", "seg-1", _turns("a1", CHEESECAKE, T0))
    _learn(services, "bob", "seg-1b", _turns("b1", CHEESECAKE, T0))
    archive = services.stores.archive
    with archive.memories.db.tx() as con:  # the lifecycle's rows for the teaching episodes; alice protects hers
        for user, memory_id, protected in (("alice", "seg-1", True), ("bob", "seg-1b", False)):
            con.execute(f"INSERT INTO {MEMORIES} (memory_id, user_id, created, category, intensity, valence, "
                        "valence_score, arousal, tags, decay, memory_days, retention, level, protected, recalled, "
                        "recall_count, unbatched, idle_days, archived_on, archive_reason, revival_requested, text, "
                        "emotion_path) VALUES (?, ?, ?, 'casual', 30, 'neutral', 0, 0, [], 0.8, 0, 30, 1, ?, false, "
                        "0, false, 0, -1, 0, false, NULL, 'offline')", [memory_id, user, T0, protected])
    for user in ("alice", "bob"):
        knowledge_monthly({"now": T0 + 400 * DAY, "user_id": user}, services)
    assert len(list_procedures(services, "alice")) == 1  # protected: kept
    assert list_procedures(services, "bob") == []  # the same procedure, unprotected, unused: forgotten
