"""A5's resolution propagation on the real stores: an open item a user mentions is recorded when its segment
becomes a memory, and a later segment that says it is done marks it resolved (``issue_resolved`` in the activity
log, naming both segments); an unrelated "done" resolves nothing, 「まだ直ってない」 resolves nothing, and one user's
items never touch another's."""

from __future__ import annotations

from datetime import datetime

import pytest

from lumina_memory.nodes.activity import recent_activity
from lumina_memory.nodes.issues import open_issues, opens_item, resolved_issues, resolves_item

T0 = datetime.fromisoformat("2026-04-01T20:00+09:00").timestamp()


def _say(memory, user: str, texts: list[str], start: float) -> None:
    config = {"configurable": {"thread_id": f"issues-{user}"}}
    for i, text in enumerate(texts):
        speaker = "user" if i % 2 == 0 else "lumina"
        memory.graph.invoke({"turn": {"speaker": speaker, "text": text, "ts": start + i * 30}}, config,
                            context={"user_id": user, "respond": False})
    memory.graph.invoke({"flush": True}, config, context={"user_id": user, "respond": False})


def test_cues_open_and_resolve_items_and_a_negated_fix_stays_open():
    assert opens_item("パソコンのWi-Fiが壊れて困ってる") and not resolves_item("パソコンのWi-Fiが壊れて困ってる")
    assert resolves_item("Wi-Fi直ったよ！") and not opens_item("Wi-Fi直ったよ！")
    assert opens_item("Wi-Fiはまだ直ってない") and not resolves_item("Wi-Fiはまだ直ってない")
    assert opens_item("I still need to fix the bike's flat tire") and resolves_item("Fixed the bike today")
    assert not opens_item("今日はいい天気だね") and not resolves_item("今日はいい天気だね")


@pytest.mark.slow
def test_a_later_segment_resolves_the_item_an_earlier_one_opened(memory):
    _say(memory, "yui", ["パソコンのWi-Fiが壊れて困ってる", "それは大変ですね、再起動は試しましたか？"], T0)
    _say(memory, "yui", ["図書館の本を返さなきゃ", "期限はいつまでですか？"], T0 + 3600)
    _say(memory, "kai", ["Wi-Fiが壊れて困ってる", "ルーターを見てみましょう"], T0)
    items = open_issues(memory.services, "yui")
    assert [i["text"] for i in items] == ["パソコンのWi-Fiが壊れて困ってる", "図書館の本を返さなきゃ"]
    opened_in = items[0]["segment_id"]

    _say(memory, "yui", ["Wi-Fiはまだ直ってない", "困りましたね"], T0 + 86_400)  # not a resolution, nor a new item
    assert resolved_issues(memory.services, "yui") == [] and len(open_issues(memory.services, "yui")) == 2
    _say(memory, "yui", ["洗濯が終わった", "お疲れさまです"], T0 + 2 * 86_400)  # done, but no open item of it
    assert resolved_issues(memory.services, "yui") == []
    _say(memory, "yui", ["やっとWi-Fi直ったよ！", "よかったですね！"], T0 + 3 * 86_400)

    resolved = resolved_issues(memory.services, "yui")
    assert [r["text"] for r in resolved] == ["パソコンのWi-Fiが壊れて困ってる"]
    assert resolved[0]["segment_id"] == opened_in and resolved[0]["resolved_segment"] != opened_in
    assert resolved[0]["resolved_text"] == "やっとWi-Fi直ったよ！"
    assert [i["text"] for i in open_issues(memory.services, "yui")] == ["図書館の本を返さなきゃ"]
    events = recent_activity(memory.services, "yui", 100, ("issue_resolved",))
    assert len(events) == 1 and events[0]["opened_segment"] == opened_in
    from lumina_memory.nodes.priming.channels import recent_channel
    from lumina_memory.nodes.priming.presets import preset_named

    primed = recent_channel(memory.services, "yui", "おはよう", "greeting", preset_named("default"), None)
    assert [i["text"].split("] ", 1)[1] for i in primed if i["origin"] == "activity"] == ["resolved: やっとWi-Fi直ったよ！"]
    kai = recent_channel(memory.services, "kai", "おはよう", "greeting", preset_named("default"), None)
    assert not any("resolved" in i["text"] for i in kai)
    assert [i["text"] for i in open_issues(memory.services, "kai")] == ["Wi-Fiが壊れて困ってる"]  # kai's stays open
    assert resolved_issues(memory.services, "kai") == []


@pytest.mark.slow
def test_encoding_the_same_segment_again_records_nothing_twice(memory):
    from lumina_memory.nodes.issues import track_issues

    _say(memory, "rio", ["車のエンジンが動かない", "修理に出しましょう"], T0)
    record = memory.services.stores.archive.segments("rio")[0]
    turns = memory.services.stores.archive.get_turns("rio", list(record.turn_ids))
    rows = [t.model_dump() for t in turns]
    assert any(r["speaker"] == "user" and opens_item(r["text"]) for r in rows)  # the item is there to be seen again
    again = track_issues(memory.services, "rio", [(record, rows)])
    assert again == {"opened": 0, "resolved": 0}
    assert len(open_issues(memory.services, "rio")) == 1
