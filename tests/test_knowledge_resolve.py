"""Update resolution (issue 18, A7): supersede, merge, coexist — with history kept — on a simulated clock.

Every story goes through the real chain: extract from the user's turns, ground them (A6), resolve them
against what was known (A7). Which attributes are single-valued is data (``KnowledgeParams.policy``).
"""

from __future__ import annotations

from datetime import datetime
from itertools import count
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from lumina_memory.nodes.knowledge import (
    KnowledgeItem, KnowledgeParams, current_facts, extract_items, history, resolve, resolve_all, validate_items,
)
from lumina_memory.nodes.knowledge.params import DEFAULT_POLICY

TOKYO = ZoneInfo("Asia/Tokyo")
_ids = count()


def at(year: int, month: int, day: int = 1) -> float:
    return datetime(year, month, day, 20, 0, tzinfo=TOKYO).timestamp()


def said(text: str, when: float, known: dict | None = None) -> list[KnowledgeItem]:
    """What the user's turn at ``when`` adds, grounded."""
    turn = {"turn_id": f"turn-{next(_ids)}", "speaker": "user", "text": text, "ts": when}
    result = validate_items(extract_items([turn], known_names=known), [turn])
    assert result.rejected == []
    return result.kept


def conversation(*lines: tuple[str, float], params: KnowledgeParams | None = None) -> list[KnowledgeItem]:
    """Fold each line's items into the knowledge, one line at a time (as daily batches would)."""
    items: list[KnowledgeItem] = []
    known: dict[str, tuple[str, str]] = {}
    for text, when in lines:
        new = said(text, when, known)
        for i in new:
            if i.attribute in ("pet", "sibling", "friend", "partner", "parent", "child") and i.detail:
                known[i.value] = (i.attribute, i.detail)
        items, _ = resolve_all(items, new, params)
    return items


def now(items, attribute: str, subject: str = "user") -> list[str]:
    return sorted(i.value for i in current_facts(items) if i.attribute == attribute and i.subject == subject)


def only(items, **where) -> KnowledgeItem:
    found = [i for i in items if all(getattr(i, k) == v for k, v in where.items())]
    assert len(found) == 1, found
    return found[0]


# --- the coffee → tea story -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("may", "september", "coffee", "tea"), [
    ("コーヒーが大好き", "最近コーヒーやめて紅茶にしたの", "コーヒー", "紅茶"),
    ("I absolutely love coffee.", "I recently gave up coffee and switched to tea.", "coffee", "tea"),
])
def test_coffee_to_tea(may, september, coffee, tea):
    items = conversation((may, at(2024, 5, 3)), (september, at(2024, 9, 3)))
    assert now(items, "drink") == [tea]
    assert coffee not in now(items, "likes")  # no longer a current fact
    old = only(items, attribute="likes", value=coffee, polarity="positive")
    ended_by = only(items, attribute="likes", value=coffee, polarity="negative")
    assert old.status == "superseded" and old.valid_to == at(2024, 9, 3) and old.superseded_by == ended_by.item_id
    assert ended_by.status == "current" and ended_by.valid_to is None
    assert [(i.value, i.polarity, i.status) for i in history(items, "user", "likes")] == [
        (coffee, "positive", "superseded"), (coffee, "negative", "current"),
    ]


def test_favourite_drink_is_superseded_by_the_switch():
    items = conversation(("好きな飲み物はコーヒーです", at(2024, 5, 3)), ("最近コーヒーやめて紅茶にしたの", at(2024, 9, 3)))
    old = only(items, attribute="drink", value="コーヒー")
    new = only(items, attribute="drink", value="紅茶")
    assert (old.status, old.valid_to, old.superseded_by) == ("superseded", at(2024, 9, 3), new.item_id)
    assert new.is_current and old.note.startswith("superseded by 紅茶")


# --- single-valued attributes: supersede --------------------------------------------------------------------------

@pytest.mark.parametrize("lines", [
    (("大阪に住んでる", at(2023, 4)), ("東京に引っ越した", at(2024, 6)), ("大阪", "東京")),
    (("I live in Osaka", at(2023, 4)), ("I moved to Tokyo last month", at(2024, 6)), ("Osaka", "Tokyo")),
])
def test_a_move_between_cities(lines):
    first, second, (old_city, new_city) = lines
    items = conversation(first, second)
    assert now(items, "lives_in") == [new_city]
    old = only(items, attribute="lives_in", value=old_city)
    assert old.status == "superseded" and old.valid_to == second[1]
    assert [i.value for i in history(items, "user", "lives_in")] == [old_city, new_city]


def test_a_pets_age_changes_every_year():
    items = conversation(
        ("猫のモカは3歳", at(2022, 5)), ("モカ4歳になった！", at(2023, 5)), ("モカは5歳になったよ", at(2024, 5)),
    )
    assert now(items, "age", subject="モカ") == ["5"]
    ages = history(items, "モカ", "age")
    assert [(i.value, i.status) for i in ages] == [("3", "superseded"), ("4", "superseded"), ("5", "current")]
    assert ages[0].valid_to == ages[1].valid_from and ages[1].valid_to == ages[2].valid_from
    assert ages[0].superseded_by == ages[1].item_id and ages[1].superseded_by == ages[2].item_id
    assert now(items, "pet") == ["モカ"]


def test_english_pet_age_across_years():
    items = conversation(("Our dog Rex is 3", at(2022, 5)), ("Rex turned 4 today!", at(2023, 5)))
    assert now(items, "age", subject="Rex") == ["4"]
    assert only(items, subject="Rex", value="3").superseded_by == only(items, subject="Rex", value="4").item_id


def test_a_partner_is_single_valued():
    items = conversation(("彼氏のタケシがね", at(2023, 1)), ("彼氏のケンと旅行した", at(2024, 1)))
    assert now(items, "partner") == ["ケン"]


# --- accumulating attributes: coexist unless negated ----------------------------------------------------------------

def test_accumulating_likes_never_supersede_each_other():
    items = conversation(
        ("I love coffee", at(2024, 1)), ("I love tea", at(2024, 2)), ("猫が大好き", at(2024, 3)),
        ("I'm into hiking", at(2024, 4)), ("最近キャンプにハマってる", at(2024, 5)), ("I like cats and dogs", at(2024, 6)),
    )
    assert now(items, "likes") == sorted(["coffee", "tea", "猫", "hiking", "キャンプ", "cats", "dogs"])
    assert not [i for i in items if i.status == "superseded"]  # over-invalidation: none


def test_people_and_pets_accumulate_and_restatements_merge():
    items = conversation(
        ("My sister Emma loves cheesecake", at(2024, 1)), ("my sister Lily is visiting", at(2024, 2)),
        ("妹の美咲がね", at(2024, 3)), ("妹の美咲と買い物した", at(2024, 4)), ("犬を飼ってる", at(2024, 5)),
        ("猫のモカが可愛い", at(2024, 6)),
    )
    assert now(items, "sibling") == ["Emma", "Lily", "美咲"]
    assert now(items, "pet") == ["モカ", "犬"]
    misaki = only(items, attribute="sibling", value="美咲", status="current")
    assert len(misaki.source_turn_ids) == 2
    assert now(items, "likes", subject="Emma") == ["cheesecake"]


def test_negation_ends_a_like_and_a_reaffirmation_ends_the_negation():
    items = conversation(
        ("I love sushi", at(2024, 1)), ("I don't like sushi anymore", at(2024, 3)), ("I love sushi again", at(2024, 8)),
    )
    first, negation, again = history(items, "user", "likes")
    assert (first.polarity, first.status, first.valid_to) == ("positive", "superseded", at(2024, 3))
    assert (negation.polarity, negation.status, negation.valid_to) == ("negative", "superseded", at(2024, 8))
    assert again.is_current and now(items, "likes") == ["sushi"]


def test_a_negation_that_ends_nothing_adds_no_false_positive():
    items = conversation(("I love coffee", at(2024, 1)), ("I don't like natto anymore", at(2024, 2)))
    assert now(items, "likes") == ["coffee"]
    natto = only(items, value="natto")
    assert natto.polarity == "negative" and natto.is_current  # what she said, never a like


def test_japanese_negation():
    items = conversation(("納豆が好き", at(2024, 1)), ("もう納豆は好きじゃない", at(2024, 4)), ("猫が好き", at(2024, 5)))
    assert now(items, "likes") == ["猫"]
    assert only(items, value="納豆", polarity="positive").valid_to == at(2024, 4)


def test_dislike_ends_the_same_like():
    items = conversation(("I love natto", at(2024, 1)), ("I hate natto", at(2024, 6)))
    assert now(items, "likes") == [] and now(items, "dislikes") == ["natto"]
    assert only(items, attribute="likes").superseded_by == only(items, attribute="dislikes").item_id


def test_quitting_ends_a_habit():
    items = conversation(("毎朝コーヒーを飲んでる", at(2024, 1)), ("コーヒーやめた", at(2024, 6)))
    habit = only(items, attribute="habit", polarity="positive")
    assert habit.value == "コーヒーを飲む" and habit.status == "superseded" and habit.valid_to == at(2024, 6)
    assert now(items, "habit") == []


# --- merge and coexist -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("first", "second", "attribute"), [
    ("東京に住んでる", "東京在住です", "lives_in"),
    ("I love cats", "I'm a big fan of cats", "likes"),
    ("ネコが好き", "猫が大好き", "likes"),
])
def test_the_same_fact_in_other_words_is_merged(first, second, attribute):
    items = conversation((first, at(2024, 1)), (second, at(2024, 2)))
    kept = [i for i in items if i.attribute == attribute and i.is_current]
    assert len(kept) == 1 and len(kept[0].source_turn_ids) == 2 and kept[0].said_at == at(2024, 1)
    merged = only(items, attribute=attribute, status="merged")
    assert merged.superseded_by == kept[0].item_id and merged.text != kept[0].text  # both wordings kept


def test_facts_in_different_contexts_coexist_and_a_general_one_replaces_them():
    items = conversation(("平日は東京に住んでる", at(2024, 1)), ("週末は実家に住んでる", at(2024, 2)))
    both = [i for i in items if i.attribute == "lives_in"]
    assert {(i.value, i.context, i.status) for i in both} == {("東京", "平日", "coexisting"), ("実家", "週末", "coexisting")}
    assert all(i.note.startswith("coexists with") for i in both)
    assert now(items, "lives_in") == ["実家", "東京"]
    items, steps = resolve_all(items, said("大阪に引っ越した", at(2024, 9)))
    assert steps[0].action == "supersede" and now(items, "lives_in") == ["大阪"]


# --- the function itself ----------------------------------------------------------------------------------------

def test_an_older_statement_joins_the_history():
    newer = said("I live in Tokyo", at(2024, 6))
    older = said("I live in Osaka", at(2023, 1))
    items, steps = resolve_all(newer, [])
    step = resolve(items, older[0])
    assert step.action == "supersede" and step.updated == ()
    assert step.item.status == "superseded" and step.item.superseded_by == newer[0].item_id
    assert step.item.valid_to == newer[0].valid_from


def test_resolution_is_idempotent():
    lines = [("I love coffee", at(2024, 1)), ("I switched from coffee to tea", at(2024, 5)), ("I live in Osaka", at(2024, 6))]
    new = [i for text, when in lines for i in said(text, when)]
    items, _ = resolve_all([], new)
    again, steps = resolve_all(items, new)
    assert {s.action for s in steps} == {"unchanged"}
    assert sorted(again, key=lambda i: i.item_id) == sorted(items, key=lambda i: i.item_id)


def test_resolve_ignores_other_subjects_and_attributes():
    items = conversation(("I live in Osaka", at(2024, 1)), ("My sister Emma loves cheesecake", at(2024, 2)))
    step = resolve(items, said("I love cheesecake", at(2024, 3))[0])
    assert step.action == "add" and step.updated == ()


def test_which_attributes_supersede_is_data():
    lines = [("I love coffee", at(2024, 1)), ("I love tea", at(2024, 2))]
    assert now(conversation(*lines), "likes") == ["coffee", "tea"]
    single_likes = KnowledgeParams(policy={**DEFAULT_POLICY, "likes": "single", "dislikes": "single"}, opposites={})
    assert now(conversation(*lines, params=single_likes), "likes") == ["tea"]
    accumulate_homes = KnowledgeParams(policy={**DEFAULT_POLICY, "lives_in": "accumulate"})
    homes = conversation(("I live in Osaka", at(2024, 1)), ("I live in Kyoto", at(2024, 2)), params=accumulate_homes)
    assert now(homes, "lives_in") == ["Kyoto", "Osaka"]


@pytest.mark.parametrize(("settings", "message"), [
    ({"policy": {"likes": "single"}}, "must accumulate"),  # a partial policy overrides the defaults it names
    ({"policy": {**DEFAULT_POLICY, "mood": "single"}}, "unknown"),
    ({"opposites": {"likes": "dislikes"}}, "symmetric"),
    ({"opposites": {"likes": "likes"}}, "distinct"),
    ({"policy": {**DEFAULT_POLICY, "likes": "single"}}, "must accumulate"),
    ({"relations": {"妹": "sister"}}, "unknown attributes"),
    ({"timezone": "Mars/Olympus"}, "IANA"),
    ({"confidence_offline": 1.5}, "less than or equal"),
])
def test_settings_are_validated(settings, message):
    with pytest.raises(ValidationError, match=message):
        KnowledgeParams(**settings)


def test_a_partial_policy_keeps_the_other_defaults():
    params = KnowledgeParams(policy={"has": "single"})
    assert params.policy == {**DEFAULT_POLICY, "has": "single"}


def test_plans_accumulate_by_day():
    items = conversation(
        ("12月5日に京都に行くんだ", at(2024, 9, 10)), ("12月5日に京都に行く予定", at(2024, 9, 20)),
        ("来週の土曜日に京都に行く", at(2024, 9, 10)),
    )
    kyoto = [i for i in current_facts(items) if i.attribute == "plan"]
    assert sorted(str(i.event_date) for i in kyoto) == ["2024-09-21", "2024-12-05"]
    assert only(items, attribute="plan", status="merged").event_date.isoformat() == "2024-12-05"
