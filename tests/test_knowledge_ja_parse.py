"""Japanese facts read by dependency parse (GiNZA, ``nodes.knowledge.ja_parse``) next to the hand rules.

Each structure below is one the rules do not read (the test shows it: with the parse off the fact is missing);
with the parse on it is read, with negation and change, and a sentence the parse cannot place yields nothing
rather than a wrong fact. The sentences are invented for these tests.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from lumina_memory.nodes.knowledge import extract_items, ja_parse

NOW = datetime(2024, 9, 10, 12, 0, tzinfo=ZoneInfo("Asia/Tokyo")).timestamp()
U, P, N = "user", "positive", "negative"


def facts(text: str, mode: str) -> set[tuple[str, str, str, str]]:
    previous = ja_parse.use(mode)
    try:
        items = extract_items([{"turn_id": "t1", "source_id": "s1", "speaker": "user", "text": text, "ts": NOW}])
    finally:
        ja_parse.use(previous)
    return {(i.subject, i.attribute, i.value, i.polarity) for i in items}


MISSED_BY_RULES = [
    # words between the place and the verb
    ("金沢に家族と一緒に住んでるよ", (U, "lives_in", "金沢", P)),
    ("高松に先月やっと引っ越しました", (U, "lives_in", "高松", P)),
    # a サ変 noun as predicate, with で
    ("今は神戸で一人暮らししてる", (U, "lives_in", "神戸", P)),
    # として between the workplace and 働く
    ("今はニトリで店長として働いてる", (U, "works_at", "ニトリ", P)),
    ("パン屋で職人として毎日働いてる", (U, "job", "職人", P)),
    # しか…ない states what one has
    ("原付しか持ってないんだよね", (U, "has", "原付", P)),
    # an object with a companion between it and 始める
    ("ボルダリングを同僚と始めたよ", (U, "habit", "ボルダリング", P)),
    # a drink had every day
    ("最近は毎朝ほうじ茶を飲んでる", (U, "drink", "ほうじ茶", P)),
]


@pytest.mark.parametrize(("text", "fact"), MISSED_BY_RULES)
def test_parse_reads_a_structure_the_rules_miss(text, fact):
    assert fact not in facts(text, "off")
    assert fact in facts(text, "union")


def test_negation_no_longer_ends_a_drink():
    said = facts("ジャスミン茶はもう飲んでないんだ", "union")
    assert (U, "drink", "ジャスミン茶", N) in said
    assert not any(f[3] == P and f[2] == "ジャスミン茶" for f in said)


def test_plain_negation_without_no_longer_states_nothing():
    assert facts("ジャスミン茶は飲まない", "parse") == set()


def test_change_of_residence_needs_the_past():
    assert (U, "lives_in", "高松", P) in facts("高松に引っ越した", "parse")
    assert facts("高松に引っ越したいな", "parse") == set()  # a wish
    assert facts("来年高松に引っ越すかも", "parse") == set()  # not done yet


def test_past_state_is_not_current():
    assert facts("昔は松江に住んでいた", "parse") == set()


def test_taking_up_an_activity_is_a_habit():
    assert (U, "habit", "ピラティス", P) in facts("ピラティスを友達と始めた", "parse")


def test_someone_else_or_a_described_noun_yields_nothing():
    assert facts("金沢に住んでる友達がいる", "parse") == set()  # the predicate describes the friend
    assert facts("隣の家族が高松に引っ越した", "parse") == set()  # someone else moved
    assert (U, "lives_in", "高松", P) not in facts("兄が高松に引っ越した", "parse")  # the brother did


def test_a_sentence_the_parse_cannot_place_yields_nothing():
    assert facts("住めば都って言うけどね", "parse") == set()
    assert facts("薬を毎日飲んでる", "parse") == set()  # 飲む without a drink


def test_union_keeps_the_rules_facts():
    assert facts("コーヒーが大好き", "off") <= facts("コーヒーが大好き", "union")


def test_unknown_mode_is_a_named_error_and_changes_nothing():
    before = ja_parse.mode()
    with pytest.raises(ja_parse.UnknownParseMode):
        ja_parse.use("both")
    assert ja_parse.mode() == before


def test_the_model_is_loaded_once():
    facts("金沢に住んでるよ", "parse")
    first = ja_parse._parser()
    facts("神戸に住んでるよ", "parse")
    assert ja_parse._parser() is first
