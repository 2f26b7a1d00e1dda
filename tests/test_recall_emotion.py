"""F7: the current emotion is carried over from the last memory recalled (nodes/retrieval/resonance.py): a reply's
recall whose message shows no emotion ranks the memories by the notes' priority with it, and the memory graph keeps
it in the thread's state for the next turn, on the real stores."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.resonance import emotion_of, shows_emotion

pytestmark = pytest.mark.slow

DAY = 86_400.0
T0 = 1_790_000_000.0
TALKS = (
    ["The picnic by the river was wonderful, I was so happy and excited, what a joy!", "How lovely!",
     "Best picnic ever, I loved every minute!"],
    ["The picnic by the river was awful!! I cried so hard, I was devastated and heartbroken and so lonely!",
     "I'm so sorry.", "I still feel miserable and furious about that picnic!!"],
)
QUESTION = "the picnic by the river"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from tests.conftest import Memory

    mem = Memory(tmp_path_factory.mktemp("emotion"))
    turns = [{"user_id": "yui", "speaker": "user" if n % 2 == 0 else "lumina", "text": text,
              "ts": T0 + day * DAY + 60 * n, "source_id": f"d{day}:{n}"}
             for day, texts in enumerate(TALKS) for n, text in enumerate(texts)]
    replay(mem.graph, "yui", turns, flush=True)
    yield mem
    mem.close()


def _first_day(items) -> str:
    return next(i["source_ids"][0].split(":")[0] for i in items if i.get("segment_id"))


def test_the_carried_emotion_ranks_the_memory_that_resonates_first(memory):
    assert not shows_emotion(QUESTION)
    services = memory.services
    plain = recall(services, "yui", QUESTION, purpose="talking", limit=5, disabled=("knowledge",))
    emotions = {_first_day([i]): emotion_of(services, "yui", [i], 0.0) for i in plain if i.get("segment_id")}
    assert emotions["d0"]["valence"] == "positive" and emotions["d1"]["valence"] == "negative"
    for day in ("d0", "d1"):
        carried = recall(services, "yui", QUESTION, purpose="talking", limit=5, disabled=("knowledge",),
                         emotion=emotions[day])
        assert _first_day(carried) == day
        assert carried[0]["resonance"] > next(i["resonance"] for i in carried if _first_day([i]) != day)
    # A deliberate question is answered by relevance, not by mood.
    asked = [recall(services, "yui", QUESTION, purpose="question", limit=5, disabled=("knowledge",), emotion=e)
             for e in emotions.values()]
    assert [i["source_ids"] for i in asked[0]] == [i["source_ids"] for i in asked[1]]


def test_the_graph_keeps_the_emotion_of_the_memory_recalled_for_the_next_turn(memory):
    config = {"configurable": {"thread_id": "chat:yui"}}
    later = T0 + 5 * DAY
    memory.graph.invoke({"messages": [HumanMessage(QUESTION)], "ts": later}, config, context={"user_id": "yui"})
    state = memory.graph.get_state(config).values
    first = state["recalled"][0] if state["recalled"][0].get("segment_id") else state["recalled"][1]
    assert state["current_emotion"]["segment_id"] == first["segment_id"]
    assert state["current_emotion"]["valence"] in ("positive", "negative")
