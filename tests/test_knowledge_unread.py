"""A later statement about the same subject and attribute that no rule reads puts the current fact under review:
it stays stored and current (nothing was learnt to replace it) but is said to be uncertain, in the archive and in
recall, instead of being served as plain current. Invented sentences, the real archive."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lumina_memory.nodes.knowledge.learn import learn_segments
from lumina_memory.nodes.knowledge.recall_items import knowledge_hits
from lumina_memory.nodes.knowledge.unread import REVIEW_CONFIDENCE, needs_review

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
