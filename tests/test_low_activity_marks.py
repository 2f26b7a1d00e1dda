"""A9's low-activity mark on episodes (memories) on the real stores: a memory neither recalled nor protected
for low_activity_unused_days batch days is marked (``memories --json``: ``low_activity``) whether or not
low_activity_enabled lets the batch archive it; with it on, the marked memory is archived for that reason and
stays marked; a protected memory and a recalled one are never marked."""

from __future__ import annotations

import pytest

from lumina_memory.graphs.replay import replay, thread_config
from lumina_memory.nodes.lifecycle.manage import list_memories
from lumina_memory.nodes.lifecycle.params import LifecycleParams
from lumina_memory.nodes.lifecycle.run import run_lifecycle

pytestmark = pytest.mark.slow
DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 09:00 in Tokyo
TOPICS = ("猫のムギが最近よく寝ている。今日は雨で少し退屈だった", "覚えておいて、母の誕生日は三月十二日でチューリップが好き",
          "来月から朝のジョギングを始めることにした。決めたからにはやる")


def _fill(memory_factory, **params):
    mem = memory_factory(lifecycle=LifecycleParams(ratio_min_memories=100, low_activity_unused_days=4, **params))
    rows = [{"speaker": "user" if i % 2 == 0 else "lumina", "text": f"{text}、その{i}", "ts": T0 + k * 7200 + i * 60}
            for k, text in enumerate(TOPICS) for i in range(4)]
    replay(mem.graph, "saki", rows)
    mem.graph.invoke({"flush": True}, thread_config("saki"), context={"user_id": "saki", "respond": False})
    return mem


def _marks(services) -> dict[str, tuple[bool, int, bool]]:
    return {m["text"][:8]: (m["low_activity"], m["level"], m["protected"]) for m in list_memories(services, "saki")}


def test_an_unused_episode_is_marked_and_archived_only_when_a9_is_on(memory_factory):
    off = _fill(memory_factory)
    memories = list_memories(off.services, "saki")
    assert len(memories) == 3 and not any(m["low_activity"] for m in memories)
    recalled = next(m["memory_id"] for m in memories if "ジョギング" in m["text"])
    run_lifecycle(off.services, now=T0 + DAY)
    off.services.stores.archive.memories.mark_recalled("saki", [recalled], T0 + 2 * DAY, deliberate=True)
    run_lifecycle(off.services, now=T0 + 5 * DAY)
    marks = {m["memory_id"]: m for m in list_memories(off.services, "saki")}
    by_topic = {k: next(m for m in marks.values() if k in m["text"]) for k in ("ムギ", "誕生日", "ジョギング")}
    assert by_topic["ムギ"]["low_activity"] and by_topic["ムギ"]["level"] < 4  # marked, not archived: A9 is off
    assert by_topic["誕生日"]["protected"] and not by_topic["誕生日"]["low_activity"]
    assert not by_topic["ジョギング"]["low_activity"]  # recalled before the 4 days: reset, then unused for 3

    on = _fill(memory_factory, low_activity_enabled=True)
    run_lifecycle(on.services, now=T0 + DAY)
    run_lifecycle(on.services, now=T0 + 5 * DAY)
    mugi = next(m for m in list_memories(on.services, "saki") if "ムギ" in m["text"])
    assert mugi["low_activity"] and mugi["archived"]  # archived for low activity, and still marked
