"""A `transcript` batch (one graph run for many turns) leaves exactly the memories that sending the
same turns one at a time leaves, rejects bad input before writing, and ingests each turn once."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.stores.errors import InvalidInput

USER = "carol"
CONTEXT = {"user_id": USER, "respond": False}


def _memories(mem, user_id: str) -> dict:
    """Every tier's view of the user, in comparable form."""
    stores = mem.services.stores
    segments = stores.archive.segments(user_id, limit=1000)
    return {
        "segments": sorted(
            (s.segment_id, tuple(s.turn_ids), s.close_reason, s.summary, tuple(s.keywords), round(s.importance, 6))
            for s in segments
        ),
        "turns": [(t.turn_id, t.segment_id) for t in stores.archive.all_turns(user_id)],
        "associations": {s.segment_id: stores.graph.associated(user_id, [s.segment_id], 20) for s in segments},
        "long_term": sorted(h.payload["segment_id"] for h in stores.vectors.search(user_id, segments[0].embedding, 1000)),
        "mid_term": sorted((r.segment_id, round(float(r.importance), 6)) for r in stores.midterm.recent_signals(user_id, 1000)),
        "turn_vectors": sorted(stores.turns.vectors_of(user_id, [t.turn_id for t in stores.archive.all_turns(user_id)])),
    }


def test_batches_leave_the_memories_of_one_turn_at_a_time(memory_factory, demo_rows):
    one_by_one, batched = memory_factory(), memory_factory()
    replay(one_by_one.graph, USER, demo_rows, batch=1)
    replay(batched.graph, USER, demo_rows, batch=37)  # batch edges fall inside segments
    expected = _memories(one_by_one, USER)
    assert len(expected["segments"]) >= 10 and len(expected["long_term"]) >= 5
    assert any(expected["associations"].values())  # the comparison covers links, not just nodes
    assert len(expected["turn_vectors"]) == len(expected["turns"]) == len(demo_rows)
    assert _memories(batched, USER) == expected


def test_a_bad_row_rejects_the_batch_and_names_it(memory, demo_rows):
    rows = [{k: r[k] for k in ("speaker", "text", "ts")} for r in demo_rows[:5]]
    bad = [*rows, {"speaker": "user", "text": "  ", "ts": rows[-1]["ts"]}]
    config = thread_config(USER)
    with pytest.raises(InvalidInput) as caught:
        memory.graph.invoke({"transcript": bad}, config, context=CONTEXT)
    assert caught.value.field == "transcript[5].text"
    with pytest.raises(InvalidInput, match=r"transcript\[1\]\.speaker"):
        memory.graph.invoke({"transcript": [rows[0], {**rows[1], "speaker": "../admin"}]}, config, context=CONTEXT)
    with pytest.raises(InvalidInput, match="transcript"):
        memory.graph.invoke({"transcript": "not a list"}, config, context=CONTEXT)
    with pytest.raises(InvalidInput, match="either turn or transcript"):
        memory.graph.invoke({"transcript": rows, "turn": rows[0]}, config, context=CONTEXT)
    assert memory.services.stores.archive.counts(USER) == {"turns": 0, "segments": 0}
    assert not (memory.graph.get_state(config).values.get("turns") or [])
    # The same rows without the bad one go in.
    memory.graph.invoke({"transcript": rows, "flush": True}, config, context=CONTEXT)
    assert memory.services.stores.archive.counts(USER)["turns"] == 5


def test_a_batch_over_the_limit_is_refused(memory_factory, demo_rows):
    mem = memory_factory(max_batch_turns=4)
    rows = [{k: r[k] for k in ("speaker", "text", "ts")} for r in demo_rows[:5]]
    with pytest.raises(InvalidInput, match="at most 4"):
        mem.graph.invoke({"transcript": rows}, thread_config(USER), context=CONTEXT)
    assert replay(mem.graph, USER, rows, batch=4) == 5  # replay keeps its batches within the limit
    assert mem.services.stores.archive.counts(USER)["turns"] == 5


def test_replay_ingests_the_rows_before_a_bad_one(memory, demo_rows):
    rows = [*demo_rows[:6], {"speaker": "user", "text": "\ud800broken", "ts": demo_rows[5]["ts"]}, *demo_rows[6:9]]
    with pytest.raises(InvalidInput) as caught:
        replay(memory.graph, USER, rows, batch=64)
    assert caught.value.field == "text"  # the error a caller sending that turn alone gets
    state = memory.graph.get_state(thread_config(USER)).values
    placed = len(state.get("turns") or []) + memory.services.stores.archive.counts(USER)["turns"]
    assert placed == 6


def test_repeats_within_and_across_batches_are_ingested_once(memory, demo_rows):
    rows = demo_rows[:30]
    config = thread_config(USER)
    memory.graph.invoke({"transcript": rows[:20] + rows[5:10]}, config, context=CONTEXT)
    memory.graph.invoke({"transcript": rows[10:30], "flush": True}, config, context=CONTEXT)
    assert memory.services.stores.archive.counts(USER)["turns"] == 30
    result = memory.graph.invoke({"transcript": rows}, config, context=CONTEXT)
    assert result["boundary"]["reason"] == "duplicate"
    assert memory.services.stores.archive.counts(USER)["turns"] == 30
