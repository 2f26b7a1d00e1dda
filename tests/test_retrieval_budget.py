"""The token counter, the budget packer and temporal cues of nodes.retrieval."""

from __future__ import annotations

from datetime import datetime, timezone

from lumina_memory.nodes.retrieval.budget import count_tokens, pack
from lumina_memory.nodes.retrieval.temporal import date_label, time_window


def test_tokens_count_cjk_chars_and_english_words():
    assert count_tokens("Hello there, my friend!") == 4
    assert count_tokens("猫の名前は？") == 6
    assert count_tokens("ｶﾀｶﾅ") == 4  # half-width kana count too
    assert count_tokens("東京駅 at 9 am") == 3 + 3
    assert count_tokens("") == 0


def test_pack_takes_items_in_rank_order_until_the_budget_is_full():
    items = [
        {"text": "one two three", "source_ids": ["a"]},
        {"text": "four five six seven eight", "source_ids": ["b", "c"]},
        {"text": "nine", "source_ids": ["d"]},
    ]
    packed, covered, used = pack(items, 5)
    assert [i["source_ids"] for i in packed] == [["a"], ["d"]] and covered == {"a", "d"} and used == 4
    packed, covered, used = pack(items, 5, allow_partial=True)
    assert covered == {"a"} and used == 3


def test_time_windows_on_the_conversations_clock():
    now = datetime(2023, 7, 20, tzinfo=timezone.utc).timestamp()
    day = lambda ts: datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")  # noqa: E731
    start, end = time_window("What did I do last week?", now)
    # About a week ago, and the previous Monday-to-Sunday (10–16 July) with a day of slack.
    assert day(start) == "2023-07-06" and day(end) == "2023-07-18"
    start, end = time_window("先月どこに行った？", now)
    assert "2023-05" <= day(start) <= "2023-06" and day(end) < "2023-07-20"
    start, end = time_window("What happened in May 2023?", now)
    assert (day(start), day(end)) == ("2023-05-01", "2023-06-01")
    assert time_window("May I ask you something?", now) is None
    assert time_window("猫の名前は？", now) is None


def test_time_windows_read_counts_in_words_and_the_day_before_yesterday():
    now = datetime(2024, 5, 15, 12, tzinfo=timezone.utc).timestamp()
    day = lambda ts: datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")  # noqa: E731

    def span(query: str) -> tuple[str, str]:
        window = time_window(query, now)
        assert window is not None, query
        return day(window[0]), day(window[1])

    # Words and digits, English and Japanese, point at the same days.
    assert span("two weeks ago") == span("2 weeks ago") == span("二週間前") == span("2週間前")
    assert span("three days ago") == span("三日前") == span("3日前") == ("2024-05-11", "2024-05-13")
    assert span("a week ago") == span("1 week ago") and span("a few days ago") == span("数日前")
    # Compound kanji numerals: 二十日前 is twenty days back, not ten.
    assert span("二十日前") == span("20日前") == span("20 days ago")
    assert span("十五日前") == span("15日前") and span("二十三年前") == span("23年前")
    assert span("十日前") == span("10日前") != span("二十日前")
    # 一昨日 contains 昨日 but is the day before it; おととい is the same day in kana.
    assert span("一昨日の夕飯は？") == span("おとといの夕飯は？") == span("the day before yesterday") == ("2024-05-12", "2024-05-14")
    assert span("昨日の話") == ("2024-05-13", "2024-05-15")
    assert time_window("She called an hour ago", now) is None  # hours are not a day-level cue
    assert time_window("何年前に引っ越したの？", now) is None  # asks how long ago: no window to look in


def test_date_labels_are_the_utc_day_including_day_edges_and_before_1970():
    for ts in (0.0, -0.5, -86_400.0, 86_399.999, 86_400.0, 1_700_000_000.25, 951_782_400.0):  # 951782400 = 2000-02-29
        assert date_label(ts) == datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d"), ts
    assert date_label(951_782_400.0) == "2000-02-29" and date_label(-0.5) == "1969-12-31"


def test_time_windows_of_named_days_ranges_and_yearless_months():
    now = datetime(2024, 1, 10, 12, tzinfo=timezone.utc).timestamp()
    day = lambda ts: datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")  # noqa: E731

    def span(query: str) -> tuple[str, str] | None:
        window = time_window(query, now)
        return None if window is None else (day(window[0]), day(window[1]))

    # A named day, written any of the usual ways, in English or Japanese: that day and its neighbours.
    may7 = ("2023-05-06", "2023-05-09")
    assert span("What did he do on May 7, 2023?") == span("on 7 May, 2023") == span("May 7th 2023") == may7
    assert span("2023年5月7日に何をした？") == span("2023-05-07") == span("2023/5/7") == may7
    # A named date beats a relative cue in the same question ("lately, as she said on 3 June, 2023").
    assert span("What did Ines take up lately, as she said on 3 June, 2023?") == ("2023-06-02", "2023-06-05")
    # A range between two days; the year said once covers both.
    assert span("Where did Omar stay between August 11 and August 15 2023?") == ("2023-08-10", "2023-08-17")
    # Without a year, a month or a day is the most recent one, not next year's.
    # (A week of a month is its seven days, two days of slack each side: tests/test_temporal_cues.py.)
    assert span("the second week of November") == ("2023-11-06", "2023-11-17")
    assert span("what happened in November?") == ("2023-11-01", "2023-12-01")
    assert span("5月7日に何をした？") == may7
    assert span("on January 9") == ("2024-01-08", "2024-01-11")
    # Not dates: the verb "may", a clock time, a day that does not exist falls back to its month.
    assert span("May 7 people come?") is None
    assert span("June 31, 2023") == ("2023-06-01", "2023-07-01")


def test_the_parts_of_a_long_message_joined_by_an_ellipsis_are_charged_for_it():
    """Two adjacent parts of one chunked message (S3) packed together read as one text; when either is an
    excerpt they are joined by " … ", a word the packer must pay for, or the items exceed the budget
    (seen on the Japanese long-reply set: 2,049 tokens packed into 2,048)."""
    from lumina_memory.nodes.retrieval.budget import count_tokens
    from lumina_memory.nodes.retrieval.packing import pack_turns
    from lumina_memory.nodes.retrieval.turn_index import UserTurns
    from lumina_memory.stores.models import Turn
    from lumina_memory.stores.settings import LuminaSettings

    sentence = "The staging database listens on port {k} and the worker restarts at night."
    long_text = "Assistant: " + " ".join(sentence.format(k=k) for k in range(40))
    turns = [Turn(turn_id=f"t{k}", source_id=f"msg:part{k}", user_id="u", speaker="lumina", text=long_text, ts=100.0 + k,
                  segment_id="s") for k in range(2)]
    index = UserTurns.build(turns)
    settings = LuminaSettings()
    ranked = [(1.0, 0, 1.0, 1.0), (0.9, 1, 1.0, 1.0)]
    for budget in range(20, 120):
        items = pack_turns(ranked, index.turns, {}, budget, None, settings, 10, ["port", "staging"], index.token_counts)
        assert sum(count_tokens(i["text"]) for i in items) <= budget, budget
    both = pack_turns(ranked, index.turns, {}, 200, None, settings, 10, ["port", "staging"], index.token_counts)
    assert len(both) == 1 and " … " in both[0]["text"] and both[0]["source_ids"] == ["msg"]
