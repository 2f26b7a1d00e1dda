"""S4: a recall narrowed to a character or a session reaches only that character's or that session's memories,
through every channel (nodes/retrieval/scope.py), on the real stores."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.scope import sessions
from lumina_memory.stores.errors import InvalidInput
from lumina_memory.stores.settings_recall import CHANNELS, RecallConfig

pytestmark = pytest.mark.slow

DAY = 86_400.0
T0 = 1_790_000_000.0
# Three sessions a day apart: the lighthouse with Lumina, the lighthouse key with Nox, bread with Lumina.
TALKS = (
    ("lumina", ["The old lighthouse on Awaji island is where my grandfather worked as a keeper.",
                "What a lovely lighthouse story.",
                "The lighthouse lamp was lit every evening by my grandfather."]),
    ("nox", ["I hid the lighthouse key under the red stone by the lighthouse door.",
             "A secret lighthouse key, I will keep it quiet.",
             "Only you and I know where the lighthouse key is."]),
    ("lumina", ["I baked rye bread this morning with caraway seeds.", "Rye bread smells wonderful.",
                "The bread came out dense but tasty."]),
)
QUERIES = ("Where is the lighthouse key hidden?", "the lighthouse")


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from tests.conftest import Memory

    mem = Memory(tmp_path_factory.mktemp("scope"))
    turns = []
    for day, (character, texts) in enumerate(TALKS):
        for n, text in enumerate(texts):
            turns.append({"user_id": "aoi", "speaker": "user" if n % 2 == 0 else character, "text": text,
                          "ts": T0 + day * DAY + 60 * n, "source_id": f"d{day}:{n}"})
    replay(mem.graph, "aoi", turns, flush=True)
    yield mem
    mem.close()


def _sources(items) -> set[str]:
    return {s for item in items for s in item["source_ids"]}


def _day(sources: set[str]) -> set[str]:
    return {s.split(":")[0] for s in sources}


@pytest.mark.parametrize("purpose", ["question", "talking"])
def test_every_channel_reaches_nox_s_memory_unless_filtered_to_lumina(memory, purpose):
    reached_unfiltered = set()
    for channel in CHANNELS:
        config = RecallConfig.only([channel, "context"])
        for query in QUERIES:
            kwargs = dict(purpose=purpose, limit=10, config=config, disabled=("knowledge",))
            everything = _sources(recall(memory.services, "aoi", query, **kwargs))
            reached_unfiltered |= _day(everything)
            as_lumina = _sources(recall(memory.services, "aoi", query, character="lumina", **kwargs))
            assert "d1" not in _day(as_lumina), (channel, query, as_lumina)
            assert _day(as_lumina) <= _day(everything) | {"d0", "d2"}
    assert "d1" in reached_unfiltered  # the filter, not the channels, keeps Nox's memory out
    full = recall(memory.services, "aoi", QUERIES[0], purpose=purpose, limit=10, character="lumina",
                  disabled=("knowledge",))
    assert full and "d1" not in _day(_sources(full))
    as_nox = recall(memory.services, "aoi", QUERIES[0], purpose=purpose, limit=10, character="nox",
                    disabled=("knowledge",))
    assert _day(_sources(as_nox)) == {"d1"}


def test_sessions_split_at_idle_gaps_and_a_session_filter_keeps_to_one(memory):
    index = memory.services.turn_index.get(memory.services.stores.archive, "aoi", memory.services.stores.turns)
    found = sessions(index, memory.services.settings.boundary_idle_seconds)
    assert len(found) == 3 and [s.start_ts for s in found] == [T0, T0 + DAY, T0 + 2 * DAY]
    first = found[0].session_id
    for channel in CHANNELS:
        for purpose in ("question", "talking"):
            items = recall(memory.services, "aoi", QUERIES[0], purpose=purpose, limit=10, session=first,
                           config=RecallConfig.only([channel, "context"]))
            assert _day(_sources(items)) <= {"d0"}, (channel, purpose)
    items = recall(memory.services, "aoi", QUERIES[1], purpose="question", limit=10, session=first,
                   disabled=("knowledge",))
    assert _day(_sources(items)) == {"d0"}
    # Lumina's, of the first session: the bread (Lumina's too, another day) stays out.
    bread = recall(memory.services, "aoi", "rye bread", purpose="question", limit=10, session=first,
                   character="lumina", disabled=("knowledge",))
    assert "d2" not in _day(_sources(bread))


def test_an_unknown_session_is_a_clear_error(memory):
    with pytest.raises(InvalidInput, match="session"):
        recall(memory.services, "aoi", QUERIES[0], session="no-such-session")
