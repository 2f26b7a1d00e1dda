"""Time pointers: priming heads a segment's lines of a day with ``[YYYY-MM-DDTHH:MM]``, the minute its first line
was said, and read_memory opens the conversation at that minute — one user's only, several segments when the topic
changed within it, nothing for a minute no one spoke, and a clear error for a time no calendar has."""

from __future__ import annotations

import pytest

from lumina_memory.nodes.tools.memory_tools import create_memory_tools
from lumina_memory.nodes.tools.pointers import parse_pointer, time_pointer, time_span
from lumina_memory.nodes.tools.reading import TIME_SEGMENTS, open_pointer
from lumina_memory.stores import ids
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.models import SegmentRecord, Turn

from .test_memory_tools import call

ZONE = "Asia/Tokyo"  # the memory fixture's clock (LUMINA_TIMEZONE's default): pointers are its minutes
MINUTE = 1_772_427_600.0  # 2026-03-02T14:00:00 Asia/Tokyo (05:00 UTC)


def test_a_time_pointer_is_read_with_or_without_its_brackets():
    for text in ("2026-03-02T14:00", "[2026-03-02T14:00]", " [2026-03-02T14:00] "):
        pointer = parse_pointer(text)
        assert (pointer.kind, pointer.id, str(pointer), pointer.abbreviated) == ("time", "2026-03-02T14:00",
                                                                                "2026-03-02T14:00", False)
    assert time_span(parse_pointer("2026-03-02T14:00"), ZONE) == (MINUTE, MINUTE + 60)
    assert time_pointer(MINUTE + 59.9, ZONE) == "2026-03-02T14:00" and time_pointer(MINUTE + 60, ZONE) == "2026-03-02T14:01"


@pytest.mark.parametrize("bad", ["2026-02-30T14:00", "2026-03-02T25:00", "[2026-03-02T14:61]", "0000-01-01T00:00"])
def test_a_time_no_calendar_has_is_refused(bad):
    with pytest.raises(InvalidInput, match="no time"):
        parse_pointer(bad)


def _segment(memory, user: str, name: str, texts: list[tuple[float, str]]) -> str:
    """One stored segment of ``texts`` (written straight to the archive: the boundary detector is not what is
    tested here, only a minute holding two segments' messages)."""
    archive = memory.services.stores.archive
    turns = [Turn(turn_id=ids.turn_id(user, f"{name}-{n}"), source_id=f"{name}-{n}", user_id=user, speaker="user",
                  text=text, ts=ts, segment_id=ids.segment_id(user, ids.turn_id(user, f"{name}-0")))
             for n, (ts, text) in enumerate(texts)]
    segment_id = turns[0].segment_id
    archive.put_turns(turns)
    archive.put_segment(SegmentRecord(segment_id=segment_id, user_id=user, turn_ids=[t.turn_id for t in turns],
                                      source_ids=[t.source_id for t in turns], start_ts=turns[0].ts,
                                      end_ts=turns[-1].ts, summary=texts[0][1][:60], text="\n".join(t for _, t in texts)))
    return segment_id


def test_the_conversation_at_a_minute_opens_for_its_user_only(memory):
    tea = _segment(memory, "aoi", "tea", [(MINUTE - 90, "I switched from coffee to green tea"), (MINUTE + 10, "Sencha, mostly")])
    bike = _segment(memory, "aoi", "bike", [(MINUTE + 40, "By the way, my bike got a flat tyre"), (MINUTE + 200, "Fixed it")])
    _segment(memory, "ren", "cat", [(MINUTE + 20, "My cat Tama sleeps all day")])
    _, read = create_memory_tools(memory.services, "aoi")

    one = call(read, {"id": "[2026-03-02T13:58]"})  # only the tea segment spoke then
    assert one.status == "success" and one.artifact["details"]["segment_id"] == tea and "green tea" in one.content
    both = call(read, {"id": "2026-03-02T14:00"})  # the topic changed within the minute: both, oldest first
    assert both.status == "success" and "2 conversations at that minute" in both.content
    assert [s["segment_id"] for s in both.artifact["details"]["segments"]] == [tea, bike]
    assert "Tama" not in both.content  # ren spoke in that minute too; aoi never sees it
    nothing = call(read, {"id": "2026-03-02T15:00"})
    assert nothing.status == "error" and "no memory" in nothing.content
    ren = open_pointer(memory.services, "ren", parse_pointer("2026-03-02T14:00"))
    assert ren is not None and "Tama" in ren.text and "tea" not in ren.text and bike not in ren.text


def test_a_minute_of_many_segments_opens_a_few_and_says_so(memory):
    made = [_segment(memory, "kai", f"s{n}", [(MINUTE + n, f"topic number {n}")]) for n in range(TIME_SEGMENTS + 2)]
    opened = open_pointer(memory.services, "kai", parse_pointer("2026-03-02T14:00"))
    assert [s["segment_id"] for s in opened.details["segments"]] == made[:TIME_SEGMENTS]
    assert f"more than {TIME_SEGMENTS}" in opened.text and "seg:" in opened.text


@pytest.mark.parametrize("hostile", ["2026-03-02T14:00' OR 1=1 --", "../2026-03-02T14:00", "2026-03-02T14:00}) MATCH (n) DETACH DELETE n"])
def test_hostile_text_around_a_time_opens_nothing(memory, hostile):
    _segment(memory, "aoi", "tea", [(MINUTE, "green tea")])
    _, read = create_memory_tools(memory.services, "aoi")
    result = call(read, {"id": hostile})
    assert result.status == "error" and "green tea" not in result.content
    assert ("invalid id" in result.content or "no memory" in result.content), result.content


def test_a_minutes_messages_open_whole_and_the_others_cut(memory):
    from lumina_memory.nodes.tools.reading import SEGMENT_MESSAGE_CHARS

    long_text = " ".join(f"Step {n}: set the staging port to 15{n:03d} and restart." for n in range(80))
    assert len(long_text) > 2 * SEGMENT_MESSAGE_CHARS
    _segment(memory, "aoi", "ops", [(MINUTE, long_text), (MINUTE + 120, "Thanks"), (MINUTE + 240, long_text)])
    opened = open_pointer(memory.services, "aoi", parse_pointer("2026-03-02T14:04"))
    assert opened.text.count("Step 79") == 1  # the message said then, whole; the first one cut
    assert opened.text.count("for the whole message") == 1


def test_a_long_replys_excerpt_is_headed_by_its_own_time_which_opens_the_reply_whole(memory):
    from lumina_memory.graphs.replay import replay
    from lumina_memory.nodes.priming import prime

    t0 = 1_790_000_000
    reply = " ".join([f"Item {n} of the checklist is about the garden fence and the paint colour." for n in range(40)]
                     + ["The spare key is hidden under the blue flowerpot by the back door."]
                     + [f"Item {n} of the checklist is about the kitchen tiles and the grout." for n in range(40, 80)])
    rows = [{"speaker": "user", "text": "Can you write me a house checklist before my trip?", "ts": t0},
            {"speaker": "lumina", "text": reply, "ts": t0 + 60},
            {"speaker": "user", "text": "Thanks, that helps a lot.", "ts": t0 + 180}]
    replay(memory.graph, "mio", rows)
    primed = prime(memory.services, "mio", "Where is the spare key hidden?", message_type="question", budget=200)
    excerpts = [i for i in primed.section("episodes").items if "flowerpot" in i.text]
    assert excerpts and excerpts[0].segment_id is None, primed.text  # an excerpt: a header of its own
    entry = excerpts[0]
    assert parse_pointer(entry.shown).kind == "time" and f"\n[{entry.shown}]\n" in primed.text
    assert len(entry.text) < len(reply) / 4  # the line quotes the passage, not the reply
    _, read = create_memory_tools(memory.services, "mio")
    opened = call(read, {"id": entry.shown})
    assert opened.status == "success" and "Item 79 of the checklist" in opened.content and "flowerpot" in opened.content
