"""F7's retrieval cut-offs (the notes' ``retrieval.top_k`` and ``retrieval.relevance_threshold``,
nodes.retrieval.resonance.within_limits) on a reply's recall, on the real stores: the threshold leaves out the
memories whose priority is under it, top_k keeps the best so many; both off (the defaults) cut nothing, and a
deliberate question is never cut."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay
from lumina_memory.nodes.retrieval.recall import recall
from lumina_memory.nodes.retrieval.resonance import within_limits
from lumina_memory.stores.settings_lifecycle import LifecycleParams

pytestmark = pytest.mark.slow

DAY = 86_400.0
T0 = 1_790_000_000.0
USER = "kai"
DAYS = [
    ("We hiked up the mountain trail near the lake on Saturday.", "That trail is beautiful."),
    ("The mountain hike left my legs sore for two days.", "Rest well after the hike."),
    ("I bought new hiking boots for the next mountain trip.", "Good boots matter on a trail."),
    ("My cousin is getting married in June.", "Congratulations to your cousin!"),
    ("I repainted the kitchen a pale green.", "Green kitchens feel fresh."),
    ("Our team shipped the billing release today.", "Well done on the release."),
]
QUESTION = "the mountain hike on the trail"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from tests.conftest import Memory

    mem = Memory(tmp_path_factory.mktemp("limits"))
    turns = [{"user_id": USER, "speaker": speaker, "text": text, "ts": T0 + day * DAY + 60 * n,
              "source_id": f"d{day}:{n}"}
             for day, pair in enumerate(DAYS) for n, (speaker, text) in enumerate(zip(("user", "lumina"), pair))]
    replay(mem.graph, USER, turns, flush=True)
    yield mem
    mem.close()


def _reply_recall(memory, monkeypatch, purpose="talking", **limits):
    settings = memory.settings
    lifecycle = settings.lifecycle.model_copy(update=limits)
    monkeypatch.setattr(memory.services, "settings", settings.model_copy(update={"lifecycle": lifecycle}))
    return recall(memory.services, USER, QUESTION, purpose=purpose, limit=8, disabled=("knowledge",))


def _ranked(items):
    return [(i["segment_id"], tuple(i["source_ids"])) for i in items if "priority" in i]


def test_both_off_cut_nothing_and_the_defaults_are_off(memory, monkeypatch):
    assert (LifecycleParams().top_k, LifecycleParams().relevance_threshold) == (0, 0.0)
    plain = _reply_recall(memory, monkeypatch)
    assert len(_ranked(plain)) >= 4  # every day's memory is a candidate for a reply
    assert _ranked(_reply_recall(memory, monkeypatch, top_k=0, relevance_threshold=0.0)) == _ranked(plain)


def test_top_k_keeps_the_best_so_many(memory, monkeypatch):
    plain = _ranked(_reply_recall(memory, monkeypatch))
    capped = _ranked(_reply_recall(memory, monkeypatch, top_k=2))
    assert capped == plain[:2]


def test_the_threshold_leaves_out_the_memories_under_it(memory, monkeypatch):
    plain = [i for i in _reply_recall(memory, monkeypatch) if "priority" in i]
    priorities = sorted(i["priority"] for i in plain)
    threshold = 100 * priorities[len(priorities) // 2]  # the notes' scale: retention 0-100
    cut = [i for i in _reply_recall(memory, monkeypatch, relevance_threshold=threshold) if "priority" in i]
    assert 0 < len(cut) < len(plain)
    assert all(100 * i["priority"] >= threshold for i in cut)
    assert [i["segment_id"] for i in cut] == [i["segment_id"] for i in plain if 100 * i["priority"] >= threshold]


def test_a_deliberate_question_is_not_cut(memory, monkeypatch):
    asked = _reply_recall(memory, monkeypatch, purpose="question")
    assert len(asked) > 1
    assert len(_reply_recall(memory, monkeypatch, purpose="question", top_k=1, relevance_threshold=99.0)) == len(asked)


def test_items_without_a_priority_are_neither_cut_nor_counted():
    params = LifecycleParams(top_k=1, relevance_threshold=30.0)
    items = [{"segment_id": "(open)"}, {"segment_id": "a", "priority": 0.5}, {"segment_id": "b", "priority": 0.4},
             {"segment_id": "c", "priority": 0.1}, {"kind": "fact"}]
    assert [i.get("segment_id") for i in within_limits(items, params)] == ["(open)", "a", None]
    assert within_limits(items, LifecycleParams()) is items
