"""What names an open item (nodes.issues.item_terms): its nouns without time words and cue words, so a later
"done" about something else said on the same kind of day (「来月の予定決まった」, "Finished the report for next week")
resolves nothing, while the item's own resolution still does."""

from __future__ import annotations

from types import SimpleNamespace

from lumina_memory.nodes.issues import item_terms, open_issues, resolved_issues, track_issues
from lumina_memory.stores import ids
from lumina_memory.stores.models import SegmentRecord
from tests.conftest import make_settings


def test_time_words_and_cue_words_do_not_name_an_item():
    assert item_terms("I have to move to Osaka next month") == ["move", "osaka"]
    assert item_terms("来月大阪に引っ越す予定") == ["大阪"]
    assert item_terms("I need to fix my bike today") == ["bike"]
    assert item_terms("Finished the report for next week") == ["report"]
    assert item_terms("来週の発表の準備終わった") == ["発表", "準備"]
    assert item_terms("I still need to renew my passport before the trip") == ["renew", "passport", "trip"]


def test_a_done_about_something_else_on_the_same_day_resolves_nothing(tmp_path):
    services = SimpleNamespace(settings=make_settings(tmp_path / "data"))  # the activity log in the data dir
    user = "mio"

    def said(n: int, text: str) -> None:
        record = SegmentRecord(segment_id=ids.segment_id(user, f"s{n}"), user_id=user, turn_ids=[f"t{n}"],
                               source_ids=[f"t{n}"], start_ts=float(n), end_ts=float(n) + 1, summary=text)
        turn = {"turn_id": f"t{n}", "speaker": "user", "text": text, "ts": float(n)}
        track_issues(services, user, [(record, [turn])])

    said(1, "I have to move to Osaka next month")
    said(2, "来月大阪に引っ越す予定")  # a second item: "osaka" and 「大阪」 are two nouns
    said(3, "I need to fix my bike today")
    said(4, "Finished the report for next week")
    said(5, "来月の予定決まった")
    said(6, "Fixed it today!")
    assert resolved_issues(services, user) == []
    assert len(open_issues(services, user)) == 3
    said(7, "Fixed the bike!")
    assert [r["text"] for r in resolved_issues(services, user)] == ["I need to fix my bike today"]


def test_an_illness_a_worry_and_a_task_said_with_naito_open_an_item_and_a_recovery_resolves_it():
    from lumina_memory.nodes.issues import opens_item, resolves_item

    for text in ("風邪をひいた", "熱が出てつらい", "猫のモカが病気で心配", "来週歯医者に行かないと", "図書館の本を返さないと。",
                 "I caught a cold", "I'm sick today", "I'm worried about my exam"):
        assert opens_item(text) and not resolves_item(text), text
    for text in ("心配ないよ", "知らないと思う", "今日はいい天気だね", "I'm not worried"):
        assert not opens_item(text), text
    for text in ("風邪治った！", "I recovered from my cold", "Feeling better now"):
        assert resolves_item(text) and not opens_item(text), text
    assert set(item_terms("風邪をひいた")) & set(item_terms("風邪治った！"))
    assert set(item_terms("I caught a cold")) & set(item_terms("I recovered from my cold"))
    assert item_terms("I'm sick today") == ["sick"]  # named by the illness when nothing else names it
