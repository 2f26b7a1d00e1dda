"""bench/knowledge.py on the tests' mini story set (tests/data/knowledge_mini.json, 6 stories per language) through
the real graph and stores: the report's figures are computed consistently — counts add up to the gold's, ratios are
their counts' ratios, a wrong gold or a tampered observation moves exactly the figures it should — and the CLI
writes its JSON and Markdown with the knowledge on/off LoCoMo comparison. No thresholds on quality here."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from pathlib import Path

import pytest

from bench import knowledge
from bench import knowledge_data as kd
from bench.knowledge_match import same_value
from bench.knowledge_records import ATTRIBUTES, MANY
from bench.knowledge_score import score_story

DATA = Path(__file__).parent / "data"
MINI = DATA / "knowledge_mini.json"
MINI_LOCOMO = DATA / "mini_locomo.json"


@pytest.fixture(scope="module")
def stories() -> list[kd.Story]:
    return kd.load_stories(MINI)


@pytest.fixture(scope="module")
def observed(stories, tmp_path_factory):
    observations, timing = knowledge.observe(stories, tmp_path_factory.mktemp("knowledge") / "data")
    assert timing["turns"] == sum(len(s.turns()) for s in stories)
    return observations


@pytest.fixture(scope="module")
def report(stories, observed):
    return knowledge.score(stories, observed)


def _mine(stories, language):
    return [s for s in stories if s.language == language]


def test_the_observation_holds_every_story_and_both_recalls_of_every_question(stories, observed):
    assert [o["story_id"] for o in observed] == [s.story_id for s in stories]
    for story, obs in zip(stories, observed):
        assert set(obs["recalls"]) == {q.question for q in story.questions}
        assert obs["items"], story.story_id  # every mini story teaches something
        for run in obs["recalls"].values():
            assert not any(i["kind"] == "knowledge" for i in run["off"])  # the switch is off
        assert any(i["kind"] == "knowledge" for run in obs["recalls"].values() for i in run["on"])


def test_recalled_facts_declare_the_tokens_the_budget_counts(observed):
    """Recall takes the facts' declared tokens out of the budget; counted otherwise (characters / 2) an English fact
    took ~2.5 times its words from the episodes and a Japanese one half its characters (over the budget)."""
    facts = [i for o in observed for run in o["recalls"].values() for i in run["on"] if i["kind"] == "knowledge"]
    assert {"ja", "en"} <= {o["story_id"][:2] for o in observed}
    assert facts and all(i["tokens"] == i["counted_tokens"] for i in facts)


def test_counts_add_up_to_the_gold(stories, report):
    assert set(report) == {"ja", "en"}
    for language, r in report.items():
        mine = _mine(stories, language)
        c = r["current_facts"]
        assert c["gold"] == sum(len(s.current_facts) for s in mine)
        assert c["found"] + sum(c["misses"].values()) == c["gold"]
        assert c["judged"] == c["extracted"] - sum(c["not_judged"].values())
        assert c["correct"] + sum(c["false_positives"].values()) == c["judged"]
        assert c["precision"] == pytest.approx(c["correct"] / c["judged"], abs=1e-4)
        assert c["recall"] == pytest.approx(c["found"] / c["gold"], abs=1e-4)
        o = r["over_invalidation"]
        assert o["accumulating"] == sum(len(s.accumulating_facts) for s in mine)
        assert o["kept"] + o["over_invalidated"] + o["not_extracted"] == o["accumulating"]
        assert o["stored"] == o["kept"] + o["over_invalidated"]
        s = r["superseded"]
        assert s["gold"] == sum(len(st.superseded_facts) for st in mine)
        assert s["stored_superseded"] + s["still_current"] + s["not_extracted"] == s["gold"]
        assert sum(b["gold"] for b in s["by_how"].values()) == s["gold"]
        assert s["link_checked"] <= s["by_how"]["supersede"]["stored_superseded"]
        d = r["distractors"]
        assert d["n"] == sum(len(st.distractors) for st in mine)
        assert sum(k["n"] for k in d["by_kind"].values()) == d["n"]
        assert sum(k["false_positives"] for k in d["by_kind"].values()) == d["false_positives"]
        assert r["evidence_recall"]["n"] == sum(len(st.questions) for st in mine)
        assert r["past_questions"]["n"] == sum(q.tense == "past" for st in mine for q in st.questions)
        pairs = sum(1 for st in mine for f in st.superseded_facts if f.how == "supersede"
                    and any(q.tense == "current" and q.attribute == f.attribute for q in st.questions))
        assert r["recall_order"]["n"] == pairs
        table = r["by_attribute"]
        assert sum(a["gold"] for a in table.values()) == c["gold"]
        assert sum(a["found"] for a in table.values()) == c["found"]
        assert sum(a["extracted"] for a in table.values()) == c["judged"]
        assert sum(a["correct"] for a in table.values()) == c["correct"]
        assert sum(a["over_invalidated"] for a in table.values()) == o["over_invalidated"]
        assert sum(a["below"] for a in table.values()) == r["recall_order"]["on"]["below"]
        ro, past = r["recall_order"], r["past_questions"]
        assert len(r["failures"]) == (c["gold"] - c["found"]) + (c["judged"] - c["correct"]) \
            + o["over_invalidated"] + s["still_current"] + d["false_positives"] + (ro["n"] - ro["on"]["below"]) \
            + (past["n"] - past["on"]["reached"])
        assert sum(g["count"] for g in r["worst"]) <= len(r["failures"])
        assert set(r["targets"]) == {"precision", "recall", "over_invalidation"}
        assert r["targets"]["precision"]["met"] == (c["precision"] >= 0.9)


def test_scoring_is_deterministic(stories, observed, report):
    assert knowledge.score(stories, copy.deepcopy(observed)) == report


def test_a_wrong_gold_lowers_precision_and_recall(stories, observed, report):
    wrong = copy.deepcopy(stories)
    for story in wrong:
        for n, fact in enumerate(story.current_facts):
            if n % 2 == 0:  # half of the facts now hold a value nobody said
                fact.value, fact.aliases = f"zq{n}never said", []
    wrong_report = knowledge.score(wrong, observed)
    for language in ("ja", "en"):
        right, bad = report[language]["current_facts"], wrong_report[language]["current_facts"]
        assert bad["gold"] == right["gold"] and bad["judged"] == right["judged"]
        assert bad["precision"] < right["precision"]
        assert bad["recall"] < right["recall"]
        assert bad["correct"] < right["correct"]


def _kept_accumulating(stories, observed, report_language="ja"):
    """A story and one of its stored items stating a gold accumulating fact that is held (kept)."""
    from bench.knowledge_match import is_current, states

    for story, obs in zip(stories, observed):
        if story.language != report_language:
            continue
        for fact in story.accumulating_facts:
            rows = [r for r in obs["items"] if states(r, fact.attribute, [fact.value, *fact.aliases], set())
                    and is_current(r)]
            if len(rows) == 1:
                return story, obs, rows[0]
    raise AssertionError("no kept accumulating fact in the mini set")


def test_ending_a_held_accumulating_fact_counts_as_over_invalidation(stories, observed, report):
    story, obs, row = _kept_accumulating(stories, observed)
    tampered = copy.deepcopy(observed)
    target = next(o for o in tampered if o["story_id"] == story.story_id)
    for r in target["items"]:
        if r["item_id"] == row["item_id"]:
            r.update(status="superseded", valid_to=1.0)
    after = knowledge.score(stories, tampered)["ja"]
    before = report["ja"]
    assert after["over_invalidation"]["over_invalidated"] == before["over_invalidation"]["over_invalidated"] + 1
    assert after["current_facts"]["found"] == before["current_facts"]["found"] - 1
    assert after["current_facts"]["misses"]["ended"] == before["current_facts"]["misses"]["ended"] + 1
    assert after["current_facts"]["judged"] == before["current_facts"]["judged"] - 1


def test_a_distractor_made_a_current_user_fact_is_a_false_positive(stories, observed, report):
    story = next(s for s in stories if s.language == "en" and s.distractors)
    distractor = story.distractors[0]
    tampered = copy.deepcopy(observed)
    target = next(o for o in tampered if o["story_id"] == story.story_id)
    fake = {**target["items"][0], "item_id": "fake-distractor", "subject": "user", "attribute": distractor.attribute,
            "value": distractor.value, "value_key": distractor.value, "polarity": "positive", "status": "current",
            "valid_to": None, "superseded_by": None, "source_ids": [distractor.turn_id]}
    target["items"].append(fake)
    after, before = knowledge.score(stories, tampered)["en"], report["en"]
    assert after["distractors"]["false_positives"] == before["distractors"]["false_positives"] + 1
    assert after["current_facts"]["judged"] == before["current_facts"]["judged"] + 1
    assert after["current_facts"]["false_positives"]["distractor"] == \
        before["current_facts"]["false_positives"]["distractor"] + 1
    assert after["current_facts"]["precision"] < before["current_facts"]["precision"]


def test_a_species_kept_is_not_judged_but_a_made_up_pet_name_is_wrong(stories, observed, report):
    story = next(s for s in stories if s.language == "ja")
    tampered = copy.deepcopy(observed)
    target = next(o for o in tampered if o["story_id"] == story.story_id)
    base = {**target["items"][0], "subject": "user", "attribute": "pet", "polarity": "positive", "status": "current",
            "valid_to": None, "superseded_by": None}
    target["items"].append({**base, "item_id": "fake-species", "value": "猫", "value_key": "猫"})
    after, before = knowledge.score(stories, tampered)["ja"]["current_facts"], report["ja"]["current_facts"]
    assert after["not_judged"]["pet_species"] == before["not_judged"]["pet_species"] + 1
    assert after["precision"] == before["precision"] and after["extracted"] == before["extracted"] + 1
    target["items"].append({**base, "item_id": "fake-name", "value": "ポンタ", "value_key": "ポンタ"})
    after = knowledge.score(stories, tampered)["ja"]["current_facts"]
    assert after["false_positives"]["unsupported"] == before["false_positives"]["unsupported"] + 1
    assert after["precision"] < before["precision"]


def test_recall_order_is_read_from_the_recalled_items(stories, observed):
    story = next(s for s in stories if any(f.how == "supersede" for f in s.superseded_facts)
                 and any(q.tense == "current" for q in s.questions))
    old = next(f for f in story.superseded_facts if f.how == "supersede"
               and any(q.tense == "current" and q.attribute == f.attribute for q in story.questions))
    new = next(f for f in story.current_facts if f.attribute == old.attribute)
    question = next(q for q in story.questions if q.tense == "current" and q.attribute == old.attribute)
    episode = lambda fact: {"kind": "episode", "source_ids": list(fact.evidence), "text": "", "tokens": 1}  # noqa: E731

    def judged(items):
        tampered = copy.deepcopy(next(o for o in observed if o["story_id"] == story.story_id))
        tampered["recalls"][question.question]["on"] = items
        row = next(r for r in score_story(story, tampered)["order"] if r["old"] == old.value)
        assert row["new"] == new.value
        return row["on"]

    assert judged([episode(new), episode(old)]) == {"old_at": 1, "new_at": 0, "below": True}
    assert judged([episode(old), episode(new)]) == {"old_at": 0, "new_at": 1, "below": False}
    assert judged([episode(new)]) == {"old_at": None, "new_at": 0, "below": True}
    assert judged([episode(old)]) == {"old_at": 0, "new_at": None, "below": False}


@pytest.mark.parametrize("said, gold, same", [
    ("olives 😣", "olives", True), ("the city library", "city library", True), ("sauna", "saunas", True),
    ("go", "Glasgow", False), ("千と千尋", "千と千尋の神隠し", True), ("寿司", "お寿司", True), ("茶", "紅茶", False),
    ("6歳", "6", True), ("16", "6", False), ("『天気の子』", "天気の子", True), ("K-POPのライブ", "K-POP", True),
])
def test_the_matching_rule(said, gold, same):
    assert same_value(said, gold) is same


def test_the_gold_vocabulary_is_scored_whole(report):
    """Every attribute the stories hold appears in the per-attribute table of some language."""
    seen = {a for r in report.values() for a, row in r["by_attribute"].items() if row["gold"]}
    used = {f.attribute for s in kd.load_stories(MINI) for f in s.current_facts}
    assert used <= seen
    assert any(ATTRIBUTES[a] == MANY for a in seen)


def test_the_cli_writes_json_and_markdown_with_the_locomo_comparison(stories, tmp_path):
    subset = tmp_path / "two.json"
    kd.write_stories(subset, [stories[0], stories[-1]])  # one Japanese, one English
    out = tmp_path / "report.json"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = knowledge.main(["--data", str(subset), "--quick", "--locomo", str(MINI_LOCOMO), "--out", str(out),
                               "--quiet"])
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["languages"]) == {"ja", "en"} and data["stories"] == 2 and data["offline"] is True
    markdown = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "## Targets" in markdown and "## LoCoMo" in markdown and "## Worst misses" in markdown
    lines = buffer.getvalue().strip().splitlines()
    results = [line for line in lines if line.startswith("RESULT ")]
    assert [line.split()[1] for line in results] == ["ja", "en"]
    for line in results:
        lang = line.split()[1]
        precision = float(re.search(r"precision=(\S+)", line)[1])
        assert precision == pytest.approx(data["languages"][lang]["current_facts"]["precision"], abs=1e-4)
    locomo = data["locomo"]
    assert len(locomo["conversations"]) == 1  # --quick
    for budget in map(str, locomo["budgets"]):
        every = locomo["results"]["all"][budget]
        assert every["on"]["n"] == every["off"]["n"] == locomo["questions"]
        assert every["recall_delta"] == pytest.approx(every["on"]["recall"] - every["off"]["recall"], abs=1e-4)
        assert locomo["results"]["knowledge_recalled"][budget]["on"]["n"] <= every["on"]["n"]
    assert lines[-1].startswith("LOCOMO knowledge_on=")
