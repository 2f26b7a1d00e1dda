"""Bad input gets an error naming the field, and nothing is half-written."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.inspect import tier_stats
from lumina_memory.stores.errors import InvalidInput

GOOD = {"speaker": "user", "text": "こんにちは", "ts": "2026-10-01T10:00:00+09:00"}


def _counts(mem):
    stats = tier_stats(mem.services)
    return (stats["archive"]["turns"], stats["archive"]["segments"], stats["mid-term"]["segments"],
            stats["long-term"]["points"], stats["graph"]["nodes"]["Segment"])


@pytest.mark.parametrize(
    "turn, user_id, field",
    [
        ({**GOOD, "text": ""}, "u1", "text"),
        ({**GOOD, "text": "   \n "}, "u1", "text"),
        # over the limit is chunked (tests/test_long_input.py); over the hard bound (1M chars) refused
        ({**GOOD, "text": "あい" * 500_001}, "u1", "text"),
        ({**GOOD, "text": "broken \ud800 unicode"}, "u1", "text"),
        ({**GOOD, "text": "bell\x07 and \x1b[31m escape"}, "u1", "text"),
        ({**GOOD, "speaker": "mallory"}, "u1", "speaker"),
        ({**GOOD, "ts": "not a time"}, "u1", "ts"),
        ({**GOOD, "source_id": "../../etc/passwd"}, "u1", "source_id"),
        (GOOD, "../x", "user_id"),
        (GOOD, "x') DETACH DELETE n //", "user_id"),
        (GOOD, "x'; DROP TABLE turn_archive; --", "user_id"),
        (GOOD, "", "user_id"),
    ],
)
def test_rejected_with_the_field_named(memory, turn, user_id, field):
    config = {"configurable": {"thread_id": "bad"}}
    # a first good turn and a closed segment, so there is something to half-write into
    memory.graph.invoke({"turn": GOOD}, config, context={"user_id": "u1", "respond": False})
    memory.graph.invoke({"flush": True}, config, context={"user_id": "u1", "respond": False})
    before = _counts(memory)
    with pytest.raises(InvalidInput) as err:
        memory.graph.invoke({"turn": turn}, config, context={"user_id": user_id, "respond": False})
    assert err.value.field == field
    assert field in str(err.value)
    assert _counts(memory) == before
    # the thread still works afterwards
    memory.graph.invoke({"turn": {**GOOD, "text": "まだ大丈夫？", "ts": "2026-10-01T10:01:00+09:00"}},
                        config, context={"user_id": "u1", "respond": False})
    assert memory.graph.get_state(config).values["turns"][-1]["text"] == "まだ大丈夫？"
